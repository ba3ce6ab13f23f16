/**
 * @module
 * The one error family of Witness. Every failure a user can see is a `WitnessError`
 * with a documented code; the CLI maps the code to an exit status.
 */

/**
 * Error codes. `USAGE` and `INVALID_INPUT` are the caller's to fix (exit 2); the
 * others are failures of the work itself (exit 1), except `INTERNAL`, which is a bug.
 */
export const ERROR_CODES = {
  USAGE: 'a command-line argument or option is missing or wrong',
  INVALID_INPUT: 'a file, record or value given to Witness does not match its schema',
  NOT_CANONICALIZABLE: 'a value cannot be written as RFC 8785 canonical JSON',
  CORRUPT: 'stored data cannot be parsed (for example a damaged JSONL line)',
  IO: 'a file could not be read or written',
  NOT_FOUND: 'a named file, preset, policy or strategy does not exist',
  CANCELLED: 'the work was cancelled (Ctrl-C, a signal, a closed request) before it finished',
  INTERRUPTED:
    'the process doing the work stopped before it finished (killed, crashed or restarted); nothing of the unfinished work was released',
  TIMEOUT: 'something Witness waited for (a lock, a co-signature, a peer) did not come within its limit',
  RATE_LIMITED: 'a caller sent more than its allowance per minute: retry after the time the message gives',
  QUOTA_EXCEEDED:
    "storing this would pass a limit on stored data (a recipient's unread messages or bytes); nothing was stored",
  UNAVAILABLE: 'a service Witness relies on (a co-signer, a child agent) is unreachable or answered something unusable',
  REFUSED: 'a party or a fail-closed check refused the work (a co-signer, an unverified card, an unattested result)',
  INTERNAL: 'a bug in Witness: please report it with the stack trace',
} as const;

export type WitnessErrorCode = keyof typeof ERROR_CODES;

export interface WitnessErrorOptions {
  cause?: unknown;
  data?: Record<string, unknown>;
}

export class WitnessError extends Error {
  readonly code: WitnessErrorCode;
  readonly data: Record<string, unknown> | undefined;

  constructor(code: WitnessErrorCode, message: string, options: WitnessErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'WitnessError';
    this.code = code;
    this.data = options.data;
  }
}

/** Exit status for an error: 2 for what the caller must fix, 1 otherwise. */
export function exitCodeFor(error: unknown): number {
  if (!(error instanceof WitnessError)) return 1;
  return error.code === 'USAGE' || error.code === 'INVALID_INPUT' || error.code === 'NOT_FOUND' ? 2 : 1;
}

export function isWitnessError(error: unknown, code?: WitnessErrorCode): error is WitnessError {
  return error instanceof WitnessError && (code === undefined || error.code === code);
}
