/**
 * @module
 * How a long-running command (a server, `mailbox tail`) learns it should stop, and
 * what it then exits with: Ctrl-C (SIGINT) is an interruption, 130 as for every
 * command (README, docs/errors.md); SIGTERM is a supervisor's normal stop, 0. A command
 * that does a piece of work and ends (`probe`, `a2a bench`) stops it on either signal,
 * cleans up, and exits 130, or 143 (128 + 15) for SIGTERM: its work did not finish.
 */
import type { CliContext } from './context.js';

export interface SignalStop {
  /** Aborted on the first SIGINT or SIGTERM. */
  signal: AbortSignal;
  /** Which signal stopped the work, once one has. */
  by: NodeJS.Signals | undefined;
  /** Removes the handlers (call when the work has ended and cleaned up). */
  dispose(): void;
}

/**
 * For work that must clean up before it exits: the handlers stay until `dispose`, so a
 * second Ctrl-C does not kill the process half way through its cleanup.
 */
export function stopOnSignal(): SignalStop {
  const controller = new AbortController();
  const onSignal = (signal: NodeJS.Signals) => {
    stop.by ??= signal;
    controller.abort();
  };
  const stop: SignalStop = {
    signal: controller.signal,
    by: undefined,
    dispose: () => {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    },
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  return stop;
}

/** The exit status of work stopped by `signal`: 130 for SIGINT, 143 for SIGTERM. */
export function interruptedExitCode(signal: NodeJS.Signals | undefined): number {
  return signal === 'SIGTERM' ? 143 : 130;
}

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
