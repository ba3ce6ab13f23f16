/**
 * @module
 * The one permission rule for files that hold a secret (signing keys): readable by
 * their owner only, as ssh requires of private keys. Whoever can read a signing key
 * can sign, so a key others can read vouches for nothing.
 */
import { statSync } from 'node:fs';
import { WitnessError } from './errors.js';

/** True when group or others have any permission on `path` (never on Windows, which has no such bits). */
export function readableByOthers(path: string): boolean {
  return process.platform !== 'win32' && (statSync(path).mode & 0o077) !== 0;
}

/**
 * Throws `INVALID_INPUT` naming the fix when group or others may access `path`.
 * @example checkPrivateFile('/home/me/.config/witness/keys/k.json', 'The key file')
 */
export function checkPrivateFile(path: string, what: string): void {
  if (readableByOthers(path))
    throw new WitnessError('INVALID_INPUT', `${what} ${path} can be read by other users; run: chmod 600 ${path}`);
}
