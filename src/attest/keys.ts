/**
 * @module
 * Signing keys on disk: the one key-file format of Witness (docs/attest.md §1, §8). A
 * key file holds a secret, so it is written 0600 (atomically, never over an existing
 * file) and refused when others can read it, as ssh does. Only the runtime that signs
 * — the release-boundary signer, the co-signer, the mailbox server — loads it; agents
 * never do.
 *
 * Formats (JWK members, RFC 7517/8037), `v: 1`, strict:
 * - Ed25519: `{v, kty:"OKP", crv:"Ed25519", kid, x, d, deployer}` — `kid` is
 *   `ed25519:` + 16 hex of SHA-256 of the raw public key `x`; `d` the private seed.
 * - HMAC-SHA256 (the mailbox's option): `{v, kty:"oct", alg:"HS256", kid, k, deployer}`
 *   — `kid` is `hmac:` + 16 hex of SHA-256 of `witness-hmac-kid:<k>`.
 * - Legacy, read only: the mailbox's own files from before this format
 *   (`{alg:"ed25519"|"hmac-sha256", kid, publicKey?, secret, created}`), recognised by
 *   their exact shape and checked the same way; their deployer reads as "mailbox".
 * `readKeyFile` checks the permissions, the schema, and that the secret, the public
 * key and the key id agree.
 */
import { createPublicKey, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { z } from 'zod';
import { writeFileAtomic } from '../core/atomic-write.js';
import { generateEd25519KeyPair, keyIdFor, privateKeyObject } from '../core/ed25519.js';
import { WitnessError } from '../core/errors.js';
import { sha256Hex } from '../core/hash.js';
import { checkPrivateFile, readableByOthers } from '../core/private-file.js';
import { parseStrictJson } from '../core/strict-json.js';
import { readNamedFile, statNamedFile } from './files.js';
import { DeployerNameSchema, Ed25519KeyIdSchema } from './formats.js';

const B64URL32 = z.string().regex(/^[A-Za-z0-9_-]{43}$/, 'expected 32 bytes in unpadded base64url (43 characters)');
const DEPLOYER = DeployerNameSchema;
const ED25519_KID = Ed25519KeyIdSchema;
const HMAC_KID = z.string().regex(/^hmac:[0-9a-f]{16}$/, 'expected hmac: and 16 hex digits');

/** The public half as a JWK (RFC 8037 OKP), with our `deployer`. */
export const PublicJwkSchema = z.strictObject({
  kty: z.literal('OKP'),
  crv: z.literal('Ed25519'),
  kid: ED25519_KID,
  x: B64URL32,
  deployer: DEPLOYER,
});
export type PublicJwk = z.infer<typeof PublicJwkSchema>;

const Ed25519FileSchema = z.strictObject({ ...PublicJwkSchema.shape, v: z.literal(1), d: B64URL32 });
const HmacFileSchema = z.strictObject({
  v: z.literal(1),
  kty: z.literal('oct'),
  alg: z.literal('HS256'),
  kid: HMAC_KID,
  k: B64URL32,
  deployer: DEPLOYER,
});
/** The key-file format (Ed25519 or HMAC), as JSON Schema users see it in docs/attest.md. */
export const KeyFileSchema = z.discriminatedUnion('kty', [Ed25519FileSchema, HmacFileSchema]);
export type KeyFile = z.infer<typeof KeyFileSchema>;

// The mailbox's files before the one format (read only; never written).
const _Created = z.string().max(64);
const _LegacyMailboxKeySchema = z.discriminatedUnion('alg', [
  z.strictObject({
    alg: z.literal('ed25519'),
    kid: ED25519_KID,
    publicKey: B64URL32,
    secret: B64URL32,
    created: _Created,
  }),
  z.strictObject({ alg: z.literal('hmac-sha256'), kid: HMAC_KID, secret: B64URL32, created: _Created }),
]);
/** The deployer a legacy mailbox key file reads as (those files named none). */
export const LEGACY_MAILBOX_DEPLOYER = 'mailbox';

/** An Ed25519 signing key in memory: what signs receipts, edges, DSSE envelopes, call logs and transcripts. */
export interface SigningKey {
  alg: 'ed25519';
  kid: string;
  deployer: string;
  /** Raw public key, base64url. */
  publicKey: string;
  /** Raw private seed, base64url. */
  privateKey: string;
}

/** An HMAC-SHA256 key in memory (the mailbox's option): verifying needs the secret itself. */
export interface HmacKey {
  alg: 'hmac-sha256';
  kid: string;
  deployer: string;
  /** 32 random bytes, base64url. */
  secret: string;
}

/** Whatever a key file can hold. */
export type KeyMaterial = SigningKey | HmacKey;

export function newSigningKey(deployer: string): SigningKey {
  _checkDeployer(deployer);
  const pair = generateEd25519KeyPair();
  return {
    alg: 'ed25519',
    kid: keyIdFor(pair.publicKey),
    deployer,
    publicKey: pair.publicKey,
    privateKey: pair.privateKey,
  };
}

export function newHmacKey(deployer: string): HmacKey {
  _checkDeployer(deployer);
  const secret = randomBytes(32).toString('base64url');
  return { alg: 'hmac-sha256', kid: hmacKeyId(secret), deployer, secret };
}

/** The id of an HMAC secret: it names the key without revealing it. */
export function hmacKeyId(secret: string): string {
  return `hmac:${sha256Hex(`witness-hmac-kid:${secret}`).slice(0, 16)}`;
}

export function publicJwk(key: Pick<SigningKey, 'kid' | 'deployer' | 'publicKey'>): PublicJwk {
  return { kty: 'OKP', crv: 'Ed25519', kid: key.kid, x: key.publicKey, deployer: key.deployer };
}

/** The key-file JSON of a key. */
export function keyFileOf(key: KeyMaterial): KeyFile {
  if (key.alg === 'ed25519') return { v: 1, ...publicJwk(key), d: key.privateKey };
  return { v: 1, kty: 'oct', alg: 'HS256', kid: key.kid, k: key.secret, deployer: key.deployer };
}

/** Writes a key file readable by its owner only, atomically; refuses to overwrite an existing file. */
export function writeKeyFile(path: string, key: KeyMaterial): void {
  const exists = `${path} already exists; choose another path (an existing key is never overwritten).`;
  if (existsSync(path)) throw new WitnessError('USAGE', exists);
  try {
    writeFileAtomic(path, `${JSON.stringify(keyFileOf(key), null, 2)}\n`, { mode: 0o600, exclusive: true });
  } catch (cause) {
    if ((cause as NodeJS.ErrnoException).code === 'EEXIST') throw new WitnessError('USAGE', exists);
    throw new WitnessError('IO', `Cannot write the key file ${path}: ${(cause as Error).message}.`, { cause });
  }
}

export interface ReadKeyOptions {
  /** The key's role in messages (default "key file"), e.g. "mailbox signing key". */
  what?: string;
  /** Said after "does not exist": how to create the key. */
  whenMissing?: string;
  /**
   * Accept an HMAC key too (the mailbox). Default: Ed25519 only — a receipt someone
   * else verifies needs a public key.
   */
  hmac?: boolean;
  /**
   * For a verifier only: called with the warning instead of refusing a file others can
   * read (whoever can read it could have signed; the check itself still holds).
   */
  onShared?: (warning: string) => void;
}

/** A key file holds one key of a few hundred bytes: 1 MiB is far past any, and bounds what a wrong path costs. */
export const MAX_KEY_FILE_BYTES = 1024 * 1024;

/** Reads and checks a key file: 0600 permissions, the schema, and that the secret, public key and kid agree. */

export function readKeyFile(path: string, options?: ReadKeyOptions & { hmac?: false }): SigningKey;
export function readKeyFile(path: string, options: ReadKeyOptions & { hmac: true }): KeyMaterial;
export function readKeyFile(path: string, options: ReadKeyOptions = {}): KeyMaterial {
  const what = options.what ?? 'key file';
  const named = { whenMissing: options.whenMissing ?? `Create one with: witness keys new --deployer ID --out ${path}` };
  statNamedFile(path, what, named); // missing, a directory: one line naming the role
  // What the file holds is checked before its mode: "chmod 600" is wrong advice for a
  // public key or a key directory given where the key file belongs.
  const key = parseKeyFile(
    readNamedFile(path, what, { ...named, maxBytes: MAX_KEY_FILE_BYTES }).toString('utf8'),
    path,
  );
  const role = `The ${what}`;
  if (options.onShared && readableByOthers(path))
    options.onShared(
      `${role} ${path} can be read by other users, so any of them could have signed; run: chmod 600 ${path}`,
    );
  else checkPrivateFile(path, role);
  if (key.alg !== 'ed25519' && !options.hmac)
    throw new WitnessError(
      'USAGE',
      `${path} holds an HMAC key (${key.kid}); this needs an Ed25519 key, which others can verify without the secret. Create one with: witness keys new --deployer ID --out KEY.json`,
    );
  return key;
}

/** Parses and checks key-file text (schema and consistency; no permission check). */
export function parseKeyFile(text: string, what = 'the key file'): KeyMaterial {
  const value = parseStrictJson(text, { what });
  const legacy = _LegacyMailboxKeySchema.safeParse(value);
  if (legacy.success)
    return _checked(_fromLegacy(legacy.data), what, legacy.data.alg === 'ed25519' ? legacy.data.publicKey : undefined, {
      secret: 'secret',
      public: 'publicKey',
    });
  const checked = KeyFileSchema.safeParse(value);
  if (!checked.success) {
    const holds = describeKeyJson(value);
    if (holds === 'public key')
      throw new WitnessError(
        'USAGE',
        `${what} holds only the public key ${(value as { kid: string }).kid}; signing needs the key file with its private key (member "d"), the one \`witness keys new\` wrote.`,
      );
    if (holds === 'key directory')
      throw new WitnessError(
        'USAGE',
        `${what} is a key directory (the public keys a verifier trusts), not a key file; give the key file \`witness keys new\` wrote.`,
      );
    const issue = checked.error.issues[0];
    throw new WitnessError(
      'INVALID_INPUT',
      `${what} is not a Witness key file: ${issue?.path.join('.') || '(root)'}: ${issue?.message}. Create one with: witness keys new --deployer ID --out KEY.json`,
    );
  }
  const file = checked.data;
  if (file.kty === 'oct')
    return _checked({ alg: 'hmac-sha256', kid: file.kid, deployer: file.deployer, secret: file.k }, what);
  return _checked(
    { alg: 'ed25519', kid: file.kid, deployer: file.deployer, publicKey: file.x, privateKey: file.d },
    what,
    file.x,
  );
}

/**
 * What a parsed JSON file of keys looks like it holds, to name the mix-up when one is
 * given where another belongs (a public key or a key directory where a key file is
 * needed, a key file where a directory is): undefined when it is none of them.
 */
export function describeKeyJson(value: unknown): 'key file' | 'public key' | 'key directory' | undefined {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
  const v = value as Record<string, unknown>;
  if (Array.isArray(v.keys)) return 'key directory';
  if (typeof v.kid !== 'string') return undefined;
  if ('d' in v || 'k' in v || 'secret' in v) return 'key file';
  if (v.kty === 'OKP' && typeof v.x === 'string') return 'public key';
  return undefined;
}

/** The public half of a key file or a public JWK file (the `d` member, if any, is dropped). */
export function readPublicJwk(path: string): PublicJwk {
  const value = parseStrictJson(readNamedFile(path, 'key file', { maxBytes: MAX_KEY_FILE_BYTES }).toString('utf8'), {
    what: path,
  }) as Record<string, unknown>;
  if (value?.kty === 'oct' || value?.alg === 'hmac-sha256')
    throw new WitnessError(
      'USAGE',
      `${path} holds an HMAC key, which has no public half to trust; use an Ed25519 key (witness keys new).`,
    );
  const { d: _private, v: _version, ...rest } = value ?? {};
  const checked = PublicJwkSchema.safeParse(rest);
  if (!checked.success) {
    const issue = checked.error.issues[0];
    throw new WitnessError(
      'INVALID_INPUT',
      `${path} is not an Ed25519 key file: ${issue?.path.join('.') || '(root)'}: ${issue?.message}.`,
    );
  }
  if (keyIdFor(checked.data.x) !== checked.data.kid)
    throw new WitnessError('INVALID_INPUT', `${path}: kid ${checked.data.kid} is not the id of its public key.`);
  return checked.data;
}

function _fromLegacy(file: z.infer<typeof _LegacyMailboxKeySchema>): KeyMaterial {
  const deployer = LEGACY_MAILBOX_DEPLOYER;
  if (file.alg === 'hmac-sha256') return { alg: 'hmac-sha256', kid: file.kid, deployer, secret: file.secret };
  return { alg: 'ed25519', kid: file.kid, deployer, publicKey: file.publicKey, privateKey: file.secret };
}

/** The secret, the public key and the kid must agree: a damaged or spliced file signs nothing. */
function _checked(
  key: KeyMaterial,
  what: string,
  statedPublic?: string,
  members = { secret: 'd', public: 'x' },
): KeyMaterial {
  if (key.alg === 'hmac-sha256') {
    if (hmacKeyId(key.secret) !== key.kid)
      throw new WitnessError(
        'INVALID_INPUT',
        `${what}: kid ${key.kid} is not the id of its secret (${hmacKeyId(key.secret)}); the file is damaged.`,
      );
    return key;
  }
  const derived = createPublicKey(privateKeyObject(key.privateKey)).export({ format: 'jwk' }).x;
  if (derived !== statedPublic)
    throw new WitnessError(
      'INVALID_INPUT',
      `${what}: the private key (${members.secret}) does not belong to the public key (${members.public}); the file is damaged.`,
    );
  if (keyIdFor(key.publicKey) !== key.kid)
    throw new WitnessError(
      'INVALID_INPUT',
      `${what}: kid ${key.kid} is not the id of its public key (${keyIdFor(key.publicKey)}).`,
    );
  return key;
}

function _checkDeployer(deployer: string): void {
  const checked = DEPLOYER.safeParse(deployer);
  if (!checked.success)
    throw new WitnessError(
      'USAGE',
      `The deployer id ${JSON.stringify(deployer)} is not usable: ${checked.error.issues[0]?.message}.`,
    );
}
