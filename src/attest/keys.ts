/**
 * @module
 * Deployer signing keys on disk (`witness keys new`). A key file holds the private
 * seed, so it is written 0600 and refused when others can read it, as ssh does. Only
 * the deployer's runtime (the release-boundary signer) loads it; agents never do.
 */
import { createPublicKey } from 'node:crypto';
import { existsSync } from 'node:fs';
import { z } from 'zod';
import { writeFileAtomic } from '../core/atomic-write.js';
import { generateEd25519KeyPair, keyIdFor, privateKeyObject } from '../core/ed25519.js';
import { WitnessError } from '../core/errors.js';
import { checkPrivateFile } from '../core/private-file.js';
import { parseStrictJson } from '../core/strict-json.js';
import { readNamedFile, statNamedFile } from './files.js';

const B64URL32 = z.string().regex(/^[A-Za-z0-9_-]{43}$/, 'expected 32 bytes in unpadded base64url (43 characters)');
const DEPLOYER = z.string().regex(/^[\x21-\x7e]{1,128}$/, 'expected 1–128 printable ASCII characters without spaces');

/** The public half as a JWK (RFC 8037 OKP), with our `deployer`. */
export const PublicJwkSchema = z.strictObject({
  kty: z.literal('OKP'),
  crv: z.literal('Ed25519'),
  kid: z.string().regex(/^ed25519:[0-9a-f]{16}$/),
  x: B64URL32,
  deployer: DEPLOYER,
});
export type PublicJwk = z.infer<typeof PublicJwkSchema>;

export const KeyFileSchema = z.strictObject({ ...PublicJwkSchema.shape, v: z.literal(1), d: B64URL32 });
export type KeyFile = z.infer<typeof KeyFileSchema>;

/** A deployer's signing key in memory. */
export interface SigningKey {
  kid: string;
  deployer: string;
  /** Raw public key, base64url. */
  publicKey: string;
  /** Raw private seed, base64url. */
  privateKey: string;
}

export function newSigningKey(deployer: string): SigningKey {
  const checked = DEPLOYER.safeParse(deployer);
  if (!checked.success) throw new WitnessError('USAGE', `The deployer id ${JSON.stringify(deployer)} is not usable: ${checked.error.issues[0]?.message}.`);
  const pair = generateEd25519KeyPair();
  return { kid: keyIdFor(pair.publicKey), deployer, publicKey: pair.publicKey, privateKey: pair.privateKey };
}

export function publicJwk(key: Pick<SigningKey, 'kid' | 'deployer' | 'publicKey'>): PublicJwk {
  return { kty: 'OKP', crv: 'Ed25519', kid: key.kid, x: key.publicKey, deployer: key.deployer };
}

/** Writes a key file readable by its owner only; refuses to overwrite an existing file. */
export function writeKeyFile(path: string, key: SigningKey): void {
  if (existsSync(path)) throw new WitnessError('USAGE', `${path} already exists; choose another --out path (an existing key is never overwritten).`);
  const file: KeyFile = { v: 1, ...publicJwk(key), d: key.privateKey };
  try {
    writeFileAtomic(path, `${JSON.stringify(file, null, 2)}\n`, { mode: 0o600, exclusive: true });
  } catch (cause) {
    if ((cause as NodeJS.ErrnoException).code === 'EEXIST') throw new WitnessError('USAGE', `${path} already exists; choose another --out path (an existing key is never overwritten).`);
    throw new WitnessError('IO', `Cannot write the key file ${path}: ${(cause as Error).message}.`, { cause });
  }
}

/** Reads and checks a private key file: schema, 0600 permissions, and that d, x and kid agree. */
export function readKeyFile(path: string): SigningKey {
  const whenMissing = `Create one with: witness keys new --deployer ID --out ${path}`;
  statNamedFile(path, 'key file', { whenMissing }); // missing, a directory: one line naming the role
  checkPrivateFile(path, 'The key file');
  return parseKeyFile(readNamedFile(path, 'key file', { whenMissing }).toString('utf8'), path);
}

export function parseKeyFile(text: string, what = 'the key file'): SigningKey {
  const checked = KeyFileSchema.safeParse(parseStrictJson(text, { what }));
  if (!checked.success) {
    const issue = checked.error.issues[0];
    throw new WitnessError('INVALID_INPUT', `${what} is not a Witness key file: ${issue?.path.join('.') || '(root)'}: ${issue?.message}. Create one with: witness keys new --deployer ID --out KEY.json`);
  }
  const file = checked.data;
  const derived = createPublicKey(privateKeyObject(file.d)).export({ format: 'jwk' }).x;
  if (derived !== file.x) throw new WitnessError('INVALID_INPUT', `${what}: the private key (d) does not belong to the public key (x); the file is damaged.`);
  if (keyIdFor(file.x) !== file.kid) throw new WitnessError('INVALID_INPUT', `${what}: kid ${file.kid} is not the id of its public key (${keyIdFor(file.x)}).`);
  return { kid: file.kid, deployer: file.deployer, publicKey: file.x, privateKey: file.d };
}

/** The public half of a key file or a public JWK file (the `d` member, if any, is dropped). */
export function readPublicJwk(path: string): PublicJwk {
  const value = parseStrictJson(readNamedFile(path, 'key file').toString('utf8'), { what: path }) as Record<string, unknown>;
  const { d: _private, v: _version, ...rest } = value ?? {};
  const checked = PublicJwkSchema.safeParse(rest);
  if (!checked.success) {
    const issue = checked.error.issues[0];
    throw new WitnessError('INVALID_INPUT', `${path} is not an Ed25519 key file: ${issue?.path.join('.') || '(root)'}: ${issue?.message}.`);
  }
  if (keyIdFor(checked.data.x) !== checked.data.kid) throw new WitnessError('INVALID_INPUT', `${path}: kid ${checked.data.kid} is not the id of its public key.`);
  return checked.data;
}
