/**
 * @module
 * The server's signing key. Receipts on call-log lines are signed with a key kept
 * outside the mailbox directory (by default under `$XDG_CONFIG_HOME/witness/keys`)
 * so an agent told about the directory is not told where the key is (Basu 2026,
 * *Tool Receipts*: signed by the runtime with a key the model never sees).
 * Ed25519 by default; HMAC-SHA256 as an option for deployments where the verifier is
 * the server operator anyway.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { writeFileAtomic } from '../core/atomic-write.js';
import { decodeBase64urlStrict } from '../core/base64url.js';
import { generateEd25519KeyPair, keyIdFor, privateKeyObject, publicKeyObject, signEd25519, verifyEd25519 } from '../core/ed25519.js';
import { WitnessError } from '../core/errors.js';
import { sha256Hex } from '../core/hash.js';
import { parseStrictJson } from '../core/strict-json.js';

export type ReceiptAlg = 'ed25519' | 'hmac-sha256';

export interface KeyFile {
  alg: ReceiptAlg;
  kid: string;
  /** Ed25519 only: raw public key, base64url. */
  publicKey?: string;
  /** Ed25519 private seed or HMAC secret, base64url. */
  secret: string;
  created: string;
}

/** Signs and checks receipts; the one place key material is used. */
export interface ReceiptSigner {
  readonly alg: ReceiptAlg;
  readonly kid: string;
  sign(message: Uint8Array): string;
  verify(message: Uint8Array, signature: string): boolean;
}

export function defaultKeyDir(env: NodeJS.ProcessEnv = process.env): string {
  const base = env.XDG_CONFIG_HOME || join(env.HOME || homedir(), '.config');
  return join(base, 'witness', 'keys');
}

export function createKeyFile(path: string, alg: ReceiptAlg): KeyFile {
  if (existsSync(path)) throw new WitnessError('USAGE', `The key file ${path} already exists; pass --key with a new path, or remove it first.`);
  let key: KeyFile;
  if (alg === 'ed25519') {
    const pair = generateEd25519KeyPair();
    key = { alg, kid: keyIdFor(pair.publicKey), publicKey: pair.publicKey, secret: pair.privateKey, created: new Date().toISOString() };
  } else {
    const secret = randomBytes(32).toString('base64url');
    key = { alg, kid: `hmac:${sha256Hex(`witness-hmac-kid:${secret}`).slice(0, 16)}`, secret, created: new Date().toISOString() };
  }
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  writeFileAtomic(path, `${JSON.stringify(key, null, 2)}\n`, { mode: 0o600, exclusive: true });
  return key;
}

export function readKeyFile(path: string): KeyFile {
  let parsed: unknown;
  try {
    parsed = parseStrictJson(readFileSync(path, 'utf8'), { what: path });
  } catch (cause) {
    throw new WitnessError('NOT_FOUND', `Cannot read the mailbox signing key ${path}: ${(cause as Error).message}. Pass --key with the key created by \`witness mailbox init\`.`, { cause });
  }
  const key = parsed as Partial<KeyFile>;
  if ((key.alg !== 'ed25519' && key.alg !== 'hmac-sha256') || typeof key.secret !== 'string' || typeof key.kid !== 'string') {
    throw new WitnessError('INVALID_INPUT', `${path} is not a mailbox signing key (needs alg, kid, secret).`);
  }
  return key as KeyFile;
}

export function signerFor(key: KeyFile): ReceiptSigner {
  if (key.alg === 'ed25519') {
    const priv = privateKeyObject(key.secret);
    const pub = publicKeyObject(key.publicKey ?? '');
    return { alg: key.alg, kid: key.kid, sign: (m) => signEd25519(priv, m), verify: (m, s) => verifyEd25519(pub, m, s) };
  }
  const secret = Buffer.from(key.secret, 'base64url');
  const mac = (m: Uint8Array) => createHmac('sha256', secret).update(m).digest();
  return {
    alg: key.alg,
    kid: key.kid,
    sign: (m) => mac(m).toString('base64url'),
    verify: (m, s) => {
      const expected = mac(m);
      const given = decodeBase64urlStrict(s);
      return given !== undefined && given.length === expected.length && timingSafeEqual(given, expected);
    },
  };
}

/** A verifier from a public key alone (Ed25519): what an auditor without the secret uses. */
export function publicVerifier(kid: string, publicKey: string): ReceiptSigner {
  const pub = publicKeyObject(publicKey);
  return {
    alg: 'ed25519',
    kid,
    sign: () => {
      throw new WitnessError('USAGE', 'This verifier holds only a public key; it cannot sign.');
    },
    verify: (m, s) => verifyEd25519(pub, m, s),
  };
}
