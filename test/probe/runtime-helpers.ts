/**
 * Running `witness probe` against a real runtime CLI with the scripted model: the
 * real CLI in-process (`runMain`), the mailbox servers from the bundled witness,
 * and the model from test/support/tool-model.ts. Missing binaries are announced.
 */
import { memoryIo } from '../../src/cli/io.js';
import { runMain } from '../../src/cli/main.js';
import type { ProbeReport } from '../../src/probe/index.js';
import { type RuntimeName, runtimeBin } from '../support/runtimes.js';
import { startToolModel, type ModelPolicy, type ToolModel } from '../support/tool-model.js';
import { witnessBundle } from '../support/witness-bundle.js';

export function binOrWarn(name: RuntimeName): string | undefined {
  const bin = runtimeBin(name);
  if (!bin)
    console.warn(
      `skipping the ${name} probe tests: ${name} is not installed in .tools (npm test installs it there on demand: node scripts/tools.mjs; WITNESS_NO_TOOLS=1 was set, or the install failed)`,
    );
  return bin;
}

export interface ProbeRun {
  code: number;
  report: ProbeReport;
  model: ToolModel;
  ms: number;
}

/** Per runtime command: OpenCode alone has taken 46–58 s to start on a loaded 2-core machine. */
export const RUNTIME_TIMEOUT_S = 120;
/** A test's own limit: the probe's deadline plus time to start and stop the servers. */
export const PROBE_TEST_MS = (RUNTIME_TIMEOUT_S + 60) * 1000;

/** `witness probe RUNTIME --json` against a scripted model; runtime commands get `timeoutS` each. */
export async function probeWith(
  runtime: string,
  bin: string,
  policy: ModelPolicy,
  extra: string[] = [],
  timeoutS = RUNTIME_TIMEOUT_S,
): Promise<ProbeRun> {
  const model = await startToolModel(policy);
  const started = Date.now();
  try {
    const io = memoryIo();
    const code = await runMain(
      [
        'probe',
        runtime,
        '--bin',
        bin,
        '--model-endpoint',
        model.url,
        '--model',
        'scripted',
        '--server-command',
        JSON.stringify(await witnessBundle()),
        '--timeout',
        String(timeoutS),
        '--json',
        ...extra,
      ],
      io,
    );
    if (!io.out.trim().startsWith('{')) throw new Error(`no JSON report (exit ${code}): ${io.out}\n${io.err}`);
    return { code, report: JSON.parse(io.out) as ProbeReport, model, ms: Date.now() - started };
  } finally {
    await model.close();
  }
}

export const verdicts = (r: ProbeReport) => Object.fromEntries(r.checks.map((c) => [c.check, c.verdict]));
