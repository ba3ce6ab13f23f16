import { didYouMean } from '../../core/did-you-mean.js';
import { Command, Option } from 'commander';
import { WitnessError } from '../../core/errors.js';
import { CHECKS, type CheckName, PROBE_TARGETS, renderAll, renderReport, runAll, runProbe } from '../../probe/index.js';
import { wholeNumber } from '../args.js';
import type { CliContext } from '../context.js';
import { parseCommandArray, selfCommand } from '../self-command.js';
import { interruptedExitCode, stopOnSignal } from '../signals.js';

interface ProbeFlags {
  modelEndpoint?: string;
  model?: string;
  toolPrefix: string;
  json?: boolean;
  keep?: boolean;
  bin?: string;
  template?: string;
  check: CheckName[];
  timeout: number;
  serverCommand?: string;
  all?: boolean;
  push?: boolean;
}

export function probeCommand(ctx: CliContext): Command {
  const collect = (v: string, all: CheckName[]) => {
    if (!(CHECKS as readonly string[]).includes(v))
      throw new WitnessError('USAGE', `--check ${JSON.stringify(v)} is not a check; choose from ${CHECKS.join(', ')}.`);
    return [...all, v as CheckName];
  };
  return new Command('probe')
    .summary("check that agent messaging really works in a runtime, from records, not from the agent's word")
    .description(
      "Registers a fresh mailbox in RUNTIME inside a temporary project and HOME (your own config is never touched), checks that the runtime connects to it, then runs three checks: send (the agent sends a canary to a peer), receive (a peer sends a canary; the agent must read and print it) and control (nothing sent; no canary may appear). Verdicts come from the inboxes and the signed call log: pass, fail or undecided (never counted as a pass). The preflight lists the runtime's own tools (asked of the runtime where it can, else a table of known built-ins) and names each built-in that shadows a mailbox tool in any spelling (send_message, SendMessage, mailbox_send…).",
    )
    .addArgument(
      new Command().createArgument('[runtime]', `${PROBE_TARGETS.join(' | ')} (or --all)`).argParser(_runtime),
    )
    .option(
      '--all',
      'probe every installed runtime (on PATH or in .tools), one table; --model-endpoint must then answer each in its own API',
    )
    .option(
      '--model-endpoint <url>',
      "the runtime's model endpoint (…/v1) in the API it speaks: OpenAI chat completions (opencode, qwen), Anthropic Messages (claude), OpenAI Responses (codex), the Gemini API origin (gemini)",
    )
    .option('--model <name>', "model name (with --model-endpoint: the endpoint's model id)")
    .option(
      '--tool-prefix <prefix>',
      "prefix the mailbox's tool names (e.g. mailbox_); default: bare names, as in the incident",
      '',
    )
    .option('--bin <path>', "the runtime's executable (default: found on PATH, then in the checkout's .tools)")
    .option(
      '--template <command>',
      'command runtime: a shell command line with {prompt} (and optionally {mcp_command})',
    )
    .addOption(
      new Option('--check <name>', `run only this check (repeatable): ${CHECKS.join(', ')}`)
        .argParser(collect)
        .default([]),
    )
    .option('--timeout <seconds>', 'limit for each runtime command', wholeNumber(1), 180)
    .option(
      '--server-command <json>',
      'how to start witness for the mailbox servers, as a JSON array (default: this witness)',
    )
    .option('--json', 'print the report as JSON')
    .option('--keep', 'keep the temporary workspace (mailbox, config, logs) and print where it is')
    .option(
      '--push',
      "also measure push, per path the runtime offers (inbox subscription; Claude Code channels): delivered to the runtime, from the server's records; seen by the model needs the model's request records, so it stays undecided here (docs/probe.md)",
    )
    .addHelpText(
      'after',
      "\nExamples:\n  $ witness probe reference                          # the built-in agent that does it right: all pass\n  $ witness probe liar                               # an adversary: the probe must not pass it\n  $ witness probe builtin-sender                     # sends with its own SendMessage: caught, and named as shadowing\n  $ witness probe qwen --model-endpoint http://127.0.0.1:8000/v1 --model qwen3-coder\n  $ witness probe qwen --tool-prefix mailbox_ --model-endpoint http://127.0.0.1:8000/v1 --model qwen3-coder\n  $ witness probe opencode --model anthropic/claude-sonnet-4 --json > probe.json\n  $ witness probe command --template 'mycli --prompt {prompt}' --check send\n  $ witness probe claude --push --model-endpoint http://127.0.0.1:8000 --json   # push delivered per path",
    )
    .action(async (runtime: string | undefined, o: ProbeFlags) => {
      if (o.all && runtime)
        throw new WitnessError('USAGE', `Give a runtime or --all, not both (got ${runtime} and --all).`);
      if (!o.all && !runtime)
        throw new WitnessError(
          'USAGE',
          `Name the runtime to probe (${PROBE_TARGETS.join(', ')}), or pass --all for every installed one.`,
        );
      if (o.all && (o.bin || o.template || o.keep))
        throw new WitnessError('USAGE', '--bin, --template and --keep apply to one runtime, not to --all.');
      if (o.modelEndpoint !== undefined && !/^https?:\/\/\S+$/.test(o.modelEndpoint))
        throw new WitnessError(
          'USAGE',
          `--model-endpoint must be an http(s) URL such as http://127.0.0.1:8000/v1; got ${JSON.stringify(o.modelEndpoint)}.`,
        );
      if (!/^[A-Za-z0-9_-]{0,32}$/.test(o.toolPrefix))
        throw new WitnessError(
          'USAGE',
          `--tool-prefix ${JSON.stringify(o.toolPrefix)} must be up to 32 letters, digits, "_" or "-" (for example mailbox_).`,
        );
      if (runtime === 'command' && !o.template)
        throw new WitnessError(
          'USAGE',
          "The command runtime needs --template with {prompt}, e.g. --template 'mycli run {prompt}'.",
        );
      if (runtime !== 'command' && o.template)
        throw new WitnessError('USAGE', '--template only applies to the command runtime.');
      const common = _commonOptions(ctx, o);
      if (o.all)
        return _interruptible(
          ctx,
          (signal) => runAll({ ...common, signal }),
          (report) => (o.json ? `${JSON.stringify(report, null, 2)}\n` : renderAll(report)),
        );
      const one = {
        runtime: runtime!,
        ...(o.bin ? { bin: o.bin } : {}),
        ...(o.template ? { template: o.template } : {}),
        ...(o.keep ? { keep: true } : {}),
      };
      return _interruptible(
        ctx,
        (signal) => runProbe({ ...common, ...one, signal }),
        (report) => (o.json ? `${JSON.stringify(report, null, 2)}\n` : renderReport(report)),
      );
    });
}

/** The options one runtime's probe and `--all` share. */
function _commonOptions(ctx: CliContext, o: ProbeFlags) {
  return {
    serverCommand: o.serverCommand ? parseCommandArray(o.serverCommand) : selfCommand(),
    toolPrefix: o.toolPrefix,
    timeoutMs: o.timeout * 1000,
    ...(o.check.length > 0 ? { checks: [...new Set(o.check)] } : {}),
    ...(o.modelEndpoint ? { modelEndpoint: o.modelEndpoint } : {}),
    ...(o.model ? { model: o.model } : {}),
    ...(o.push ? { push: true } : {}),
    ...(o.json ? {} : { onProgress: (m: string) => ctx.io.stderr(`probe: ${m}\n`) }),
  };
}

/**
 * Runs a probe that Ctrl-C or SIGTERM stops (the runtime's process group and the
 * workspace go first, in the probe): 130 or 143 then; 1 when a check did not pass.
 */
async function _interruptible<R extends { ok: boolean }>(
  ctx: CliContext,
  run: (signal: AbortSignal) => Promise<R>,
  render: (report: R) => string,
): Promise<void> {
  const stop = stopOnSignal();
  const report = await run(stop.signal)
    .catch((error: unknown) => {
      if (!stop.by || !(error instanceof WitnessError) || error.code !== 'CANCELLED') throw error;
      ctx.io.stderr(`witness: ${error.message}\n`);
      ctx.exitCode = interruptedExitCode(stop.by);
      return undefined;
    })
    .finally(stop.dispose);
  if (!report) return;
  if (!report.ok) ctx.exitCode = 1;
  ctx.io.stdout(render(report));
}

/** The runtime argument: one of PROBE_TARGETS, with a suggestion for a typo. */
function _runtime(value: string): string {
  if ((PROBE_TARGETS as readonly string[]).includes(value)) return value;
  throw new WitnessError(
    'USAGE',
    `Unknown runtime "${value}".${didYouMean(value, PROBE_TARGETS)} Runtimes: ${PROBE_TARGETS.join(', ')}.`,
  );
}
