/**
 * @module
 * The verifier's own key directory (attest.md §3): a JWKS-like file mapping key ids to
 * public keys, deployers and validity windows. It is the ONLY trust root — a key or URL
 * carried inside a receipt is never used (A2A issue #2096 was exactly that bug).
 *
 * Windows are half-open: a key signs validly for `not_before <= issued_at < not_after`.
 * Rotation shortens the old key's window and opens the new one at the same instant, so
 * receipts issued inside the old window stay valid. Revocation applies to receipts
 * issued at or after `revoked_at` (or, by verifier policy, to every receipt once
 * `revoked_at` has passed).
 */
import type { KeyObject } from 'node:crypto';
import { existsSync } from 'node:fs';
import { z } from 'zod';
import { writeFileAtomic } from '../core/atomic-write.js';
import { publicKeyObject } from '../core/ed25519.js';
import { WitnessError } from '../core/errors.js';
import { parseStrictJson } from '../core/strict-json.js';
import { readNamedFile } from './files.js';
import { describeKeyJson, type PublicJwk, PublicJwkSchema } from './keys.js';
import { ed25519Verifier, type Verifier } from './signature.js';
import { isoTime, TimeSchema } from './receipt.js';

const TIME = TimeSchema;

export const DirectoryEntrySchema = z
  .strictObject({ ...PublicJwkSchema.shape, not_before: TIME, not_after: TIME, revoked_at: TIME.optional() })
  .refine((e) => Date.parse(e.not_before) < Date.parse(e.not_after), {
    message: 'not_after must be later than not_before',
    path: ['not_after'],
  });
export const DirectoryFileSchema = z.strictObject({ v: z.literal(1), keys: z.array(DirectoryEntrySchema) });

export type DirectoryEntry = z.infer<typeof DirectoryEntrySchema>;
export type DirectoryFile = z.infer<typeof DirectoryFileSchema>;

/** One trusted key, ready for verification: a `Verifier` (its `KeyObject` built once) with its deployer and window. */
export interface TrustedKey extends Verifier {
  readonly alg: 'ed25519';
  deployer: string;
  key: KeyObject;
  notBefore: number;
  notAfter: number;
  revokedAt: number | undefined;
}

/** An in-memory directory for lookups; build it with `keyDirectory(file)`. */
export class KeyDirectory {
  readonly #keys: Map<string, TrustedKey>;
  constructor(file: DirectoryFile) {
    this.#keys = new Map(
      file.keys.map((e) => [
        e.kid,
        {
          ...ed25519Verifier(e.kid, publicKeyObject(e.x)),
          alg: 'ed25519' as const,
          deployer: e.deployer,
          key: publicKeyObject(e.x),
          notBefore: Date.parse(e.not_before),
          notAfter: Date.parse(e.not_after),
          revokedAt: e.revoked_at === undefined ? undefined : Date.parse(e.revoked_at),
        },
      ]),
    );
  }
  get(kid: string): TrustedKey | undefined {
    return this.#keys.get(kid);
  }
  get size(): number {
    return this.#keys.size;
  }
}

export function emptyDirectory(): DirectoryFile {
  return { v: 1, keys: [] };
}

/** A key directory of thousands of keys is well under this; it bounds what a wrong path costs. */
export const MAX_KEY_DIRECTORY_BYTES = 16 * 1024 * 1024;

/** Checks a parsed directory file; errors name the entry and field. */
export function parseDirectory(value: unknown, what = 'the key directory'): DirectoryFile {
  const holds = describeKeyJson(value);
  if (holds === 'key file' || holds === 'public key') {
    const kid = (value as { kid: string }).kid;
    throw new WitnessError(
      'USAGE',
      `${what} is a ${holds === 'key file' ? 'signing key file' : 'public key file'} (${kid}), not a key directory; trust it in one with: witness keys add FILE --dir DIR.json, and give that directory.`,
    );
  }
  const entries = (value as { keys?: unknown[] } | null)?.keys;
  if (Array.isArray(entries) && entries.some((e) => e !== null && typeof e === 'object' && 'd' in e)) {
    throw new WitnessError(
      'INVALID_INPUT',
      `${what} holds a private key (member "d"); a directory holds public keys only — remove it and add keys with: witness keys add`,
    );
  }
  const checked = DirectoryFileSchema.safeParse(value);
  if (!checked.success) {
    const issue = checked.error.issues[0];
    throw new WitnessError(
      'INVALID_INPUT',
      `${what} is not a key directory: ${issue?.path.join('.') || '(root)'}: ${issue?.message}.`,
    );
  }
  const seen = new Set<string>();
  for (const entry of checked.data.keys) {
    if (seen.has(entry.kid))
      throw new WitnessError('INVALID_INPUT', `${what} lists key ${entry.kid} twice; keep one entry per key.`);
    seen.add(entry.kid);
  }
  return checked.data;
}

export function readDirectoryFile(path: string, options: { createIfMissing?: boolean } = {}): DirectoryFile {
  if (options.createIfMissing && !existsSync(path)) return emptyDirectory();
  const text = readNamedFile(path, 'key directory', {
    whenMissing: `Create it with: witness keys add KEY.json --dir ${path}`,
    maxBytes: MAX_KEY_DIRECTORY_BYTES,
  }).toString('utf8');
  return parseDirectory(parseStrictJson(text, { what: path }), path);
}

export function loadKeyDirectory(path: string): KeyDirectory {
  return new KeyDirectory(readDirectoryFile(path));
}

/** Writes the directory atomically and durably (core's `writeFileAtomic`): a reader, or a verifier after a crash, never sees half a trust root. */
export function writeDirectoryFile(path: string, file: DirectoryFile): void {
  try {
    writeFileAtomic(path, `${JSON.stringify(parseDirectory(file), null, 2)}\n`);
  } catch (cause) {
    if (cause instanceof WitnessError) throw cause;
    throw new WitnessError('IO', `Cannot write the key directory ${path}: ${(cause as Error).message}.`, { cause });
  }
}

export interface AddKeyOptions {
  notBefore: number;
  notAfter: number;
}

/** A new directory with `jwk` trusted for the window; a key id already present is refused. */
export function addKey(file: DirectoryFile, jwk: PublicJwk, options: AddKeyOptions): DirectoryFile {
  if (file.keys.some((e) => e.kid === jwk.kid))
    throw new WitnessError('USAGE', `Key ${jwk.kid} is already in the directory; revoke or rotate it instead.`);
  const entry = { ...jwk, not_before: isoTime(options.notBefore), not_after: isoTime(options.notAfter) };
  return parseDirectory({ v: 1, keys: [...file.keys, entry] });
}

/** A new directory where `kid` is revoked from `at` on. An earlier revocation time is kept. */
export function revokeKey(file: DirectoryFile, kid: string, at: number): DirectoryFile {
  const entry = _entry(file, kid);
  const revokedAt =
    entry.revoked_at !== undefined && Date.parse(entry.revoked_at) <= at ? entry.revoked_at : isoTime(at);
  return { v: 1, keys: file.keys.map((e) => (e.kid === kid ? { ...e, revoked_at: revokedAt } : e)) };
}

/**
 * Rotation: the old key's window ends at `at` and the new key's begins there. Receipts
 * the old key issued before `at` stay valid until their own expiry.
 */
export function rotateKey(
  file: DirectoryFile,
  oldKid: string,
  jwk: PublicJwk,
  at: number,
  notAfter: number,
): DirectoryFile {
  const old = _entry(file, oldKid);
  if (old.deployer !== jwk.deployer)
    throw new WitnessError(
      'USAGE',
      `Key ${oldKid} belongs to ${old.deployer}, the new key to ${jwk.deployer}; rotation stays within one deployer.`,
    );
  if (at <= Date.parse(old.not_before))
    throw new WitnessError('USAGE', `The rotation time must be after the old key's not_before (${old.not_before}).`);
  const ended = Math.min(at, Date.parse(old.not_after));
  const shortened = {
    v: 1 as const,
    keys: file.keys.map((e) => (e.kid === oldKid ? { ...e, not_after: isoTime(ended) } : e)),
  };
  return addKey(shortened, jwk, { notBefore: at, notAfter });
}

function _entry(file: DirectoryFile, kid: string): DirectoryEntry {
  const entry = file.keys.find((e) => e.kid === kid);
  if (!entry)
    throw new WitnessError(
      'NOT_FOUND',
      `Key ${kid} is not in the directory; list the keys with: witness keys list --dir DIR.json`,
    );
  return entry;
}
