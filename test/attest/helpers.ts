// Shared fixtures for attest tests: real keys, a directory that trusts them, a fixed clock.
import { addKey, emptyDirectory, KeyDirectory, type DirectoryFile } from '../../src/attest/key-directory.js';
import { newSigningKey, publicJwk, type SigningKey } from '../../src/attest/keys.js';
import type { ReasonCode } from '../../src/attest/reasons.js';
import { createReleaseSigner, type ReleaseSignerOptions } from '../../src/attest/signer.js';
import type { VerifyResult } from '../../src/attest/verify.js';

export const NOW = Date.parse('2026-06-01T12:00:00.000Z');
export const HOUR = 3_600_000;
export const DAY = 24 * HOUR;

export function trust(
  keys: SigningKey[],
  window = { notBefore: NOW - 30 * DAY, notAfter: NOW + 30 * DAY },
): { file: DirectoryFile; directory: KeyDirectory } {
  let file = emptyDirectory();
  for (const key of keys) file = addKey(file, publicJwk(key), window);
  return { file, directory: new KeyDirectory(file) };
}

export function signerAt(key: SigningKey, at: number, extra: Partial<ReleaseSignerOptions> = {}) {
  return createReleaseSigner({ key, instance: `agent-${key.deployer}`, clock: () => at, ...extra });
}

export function codes(result: VerifyResult): ReasonCode[] {
  return result.reasons.map((r) => r.code);
}

export const keysFor = (...deployers: string[]) => deployers.map((d) => newSigningKey(d));
