/**
 * @module
 * Node's system errors (a port in use, a directory where a file was expected, a
 * file that cannot be read) are failures of the environment or of what the user
 * named, not bugs: the CLI prints them as one line that says what to do, never
 * as "internal error" with a stack trace.
 */

interface _SystemError {
  code: string;
  syscall?: string;
  path?: string;
  address?: string;
  port?: number;
  hostname?: string;
}

const _ADVICE: Record<string, (e: _SystemError) => string> = {
  EADDRINUSE: (e) =>
    `address ${_where(e)} is already in use; stop the other server or choose another --port (0 picks a free one).`,
  EADDRNOTAVAIL: (e) => `address ${_where(e)} is not an address of this machine; choose another --host.`,
  EACCES: (e) =>
    e.syscall === 'listen' || e.syscall === 'bind'
      ? `not allowed to listen on ${_where(e)}; ports below 1024 need privileges: choose another --port.`
      : `permission denied: ${e.path ?? 'a file'}; check its owner and mode.`,
  ENOTFOUND: (e) => `host name ${e.hostname ?? ''} does not resolve; give an IP address or a known host name.`,
  ENOENT: (e) => `${e.path ?? 'a file'} does not exist; check the path.`,
  EISDIR: (e) => `${e.path ?? 'a path you gave'} is a directory; give a file.`,
  ENOTDIR: (e) => `a part of ${e.path ?? 'the path'} is not a directory; check the path.`,
  ENOSPC: (e) => `the disk is full${e.path ? ` (writing ${e.path})` : ''}; free some space and try again.`,
  EROFS: (e) => `${e.path ?? 'the path'} is on a read-only file system.`,
  EMFILE: () => 'too many open files; raise the limit (ulimit -n) or run less at once.',
};

/** A one-line message for a Node system error, or undefined when `error` is not one. */
export function systemErrorMessage(error: unknown): string | undefined {
  if (error === null || typeof error !== 'object') return undefined;
  const e = error as Partial<_SystemError>;
  if (typeof e.code !== 'string' || !/^E[A-Z0-9]+$/.test(e.code)) return undefined;
  const advice = _ADVICE[e.code];
  const what = advice ? advice(e as _SystemError) : `${(error as Error).message}.`;
  return `${e.syscall ? `${e.syscall} failed: ` : ''}${what}`;
}

/** Exit status for a system error: 2 when the user named something unusable, else 1. */
export function systemErrorExitCode(error: unknown): number {
  const code = (error as { code?: string }).code;
  return code === 'ENOENT' ||
    code === 'EISDIR' ||
    code === 'ENOTDIR' ||
    code === 'EADDRINUSE' ||
    code === 'EADDRNOTAVAIL' ||
    code === 'ENOTFOUND'
    ? 2
    : 1;
}

function _where(e: _SystemError): string {
  return e.port === undefined ? (e.address ?? '?') : `${e.address ?? ''}:${e.port}`;
}
