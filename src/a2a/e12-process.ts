/**
 * @module
 * The entry script of E12's tool and child processes (e12-launch.ts starts them): `node
 * e12-process.js '{"role":"tool"}'`, or `'{"role":"child", …}'` (E12ProcessSchema). It
 * starts the server `witness a2a tool` or `witness a2a serve` starts, through the same
 * library calls, and prints `{"url": …}` as its first stdout line once it listens. It
 * closes the server and exits on SIGTERM or SIGINT, or when its stdin ends: the bench
 * that started it holds the other end, so the end of the bench is its end too. A
 * failure to start is one line on stderr and exit status 1. Run, never imported.
 */
import { readKeyFile } from '../attest/keys.js';
import { WitnessError } from '../core/errors.js';
import { serveChildAgent } from './agent.js';
import { chooseAgentBackend } from './agent-backend.js';
import { type E12Process, E12ProcessSchema } from './e12-launch.js';
import { serveEvidenceTool } from './tool-server.js';

function _options(arg: string | undefined): E12Process {
  let json: unknown;
  try {
    json = JSON.parse(arg ?? '');
  } catch {
    json = undefined;
  }
  const parsed = E12ProcessSchema.safeParse(json);
  if (parsed.success) return parsed.data;
  const issues = parsed.error.issues.map((i) => `${i.path.join('.') || '(top level)'}: ${i.message}`).join('; ');
  throw new WitnessError('USAGE', `e12-process takes one argument, the JSON of its role: ${issues}.`);
}

async function _serve(options: E12Process): Promise<{ url: string; close(): Promise<void> }> {
  if (options.role === 'tool') return serveEvidenceTool();
  return serveChildAgent({
    key: readKeyFile(options.key),
    taskStore: options.taskStore,
    toolUrl: options.toolUrl,
    cosigners: options.cosigners,
    backend: chooseAgentBackend(options),
  });
}

async function _main(): Promise<void> {
  const server = await _serve(_options(process.argv[2]));
  let stopping = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    void server.close().finally(() => process.stdin.destroy());
  };
  // Listening before the line says it is ready, so a stop right after it is not missed.
  process.once('SIGTERM', stop).once('SIGINT', stop);
  process.stdin.once('end', stop).resume();
  process.stdout.write(`${JSON.stringify({ url: server.url })}\n`);
}

_main().catch((error: unknown) => {
  process.stderr.write(
    `${error instanceof WitnessError ? error.message : ((error as Error)?.stack ?? String(error))}\n`,
  );
  process.exitCode = 1;
});
