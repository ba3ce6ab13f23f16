/**
 * @module
 * How a long-running command (a server, `mailbox tail`) learns it should stop, and
 * what it then exits with: Ctrl-C (SIGINT) is an interruption, 130 as for every
 * command (README, docs/errors.md); SIGTERM is a supervisor's normal stop, 0.
 */
import type { CliContext } from './context.js';

/** Resolves on the first SIGINT or SIGTERM, with the exit status already set on `ctx`. */
export function untilStopped(ctx: CliContext): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const stop = (signal: NodeJS.Signals) => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      if (signal === 'SIGINT') ctx.exitCode = 130;
      resolve(signal);
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
}
