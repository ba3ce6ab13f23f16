/**
 * `witness ARGS` run in-process (`runMain` with a memory IO, cwd as given): its exit
 * status and what it printed. The one helper the tests use for in-process CLI runs;
 * test/mailbox/helpers.ts `cli` runs the real process where that is what is tested.
 */
import { memoryIo } from '../../src/cli/io.js';
import { runMain } from '../../src/cli/main.js';

export interface CliRun {
  code: number;
  out: string;
  err: string;
}

export async function runCli(args: string[], cwd: string): Promise<CliRun> {
  const io = memoryIo(cwd);
  const code = await runMain(args, io);
  return { code, out: io.out, err: io.err };
}
