/**
 * @module
 * The one Signer / Verifier of Witness. Everything that signs — the release-boundary
 * signer, the dag co-signer, DSSE export, the mailbox's call log, signed simulation
 * transcripts — signs through a `Signer` made from a key file's material, and
 * everything that checks a signature goes through a `Verifier`. Ed25519 (strict RFC
 * 8032, node:crypto) is the default and the only choice for evidence a third party
 * verifies; HMAC-SHA256 is the mailbox's option for deployments where the verifier is
 * the server's operator anyway (whoever can verify an HMAC can also forge one).
 *
 * A signer keeps its key in a closure: the object has `alg`, `kid`, `sign` and
 * `verify`, nothing that reveals the key. What gets signed is the caller's choice of
 * bytes; every format signs `signedMessage(kind, record)` (domain.ts) so the kind's
 * domain tag is always in front.
 */
import { createHmac, type KeyObject, timingSafeEqual } from 'node:crypto';
import { decodeBase64urlStrict } from '../core/base64url.js';
import { privateKeyObject, publicKeyObject, signEd25519, verifyEd25519 } from '../core/ed25519.js';
import { WitnessError } from '../core/errors.js';
import type { KeyMaterial } from './keys.js';

export type SignatureAlg = 'ed25519' | 'hmac-sha256';

export interface Verifier {
  readonly alg: SignatureAlg;
  readonly kid: string;
  /**
   * True only for a valid signature of `message` (unpadded base64url text, or the raw
   * bytes). A malformed or non-canonical signature is `false`, never an exception.
   */
  verify(message: Uint8Array, signature: string | Uint8Array): boolean;
}

export interface Signer extends Verifier {
  /** The signature of `message`, unpadded base64url. */
  sign(message: Uint8Array): string;
}

/** The signer of a key (Ed25519 or HMAC); built once, its key objects cached. */
export function signerFor(key: KeyMaterial): Signer {
  if (key.alg === 'ed25519') {
    const priv = privateKeyObject(key.privateKey);
    const { verify } = ed25519Verifier(key.kid, key.publicKey);
    return Object.freeze({ alg: key.alg, kid: key.kid, sign: (m: Uint8Array) => signEd25519(priv, m), verify });
  }
  const secret = Buffer.from(key.secret, 'base64url');
  const mac = (m: Uint8Array) => createHmac('sha256', secret).update(m).digest();
  return Object.freeze({
    alg: key.alg,
    kid: key.kid,
    sign: (m: Uint8Array) => mac(m).toString('base64url'),
    verify: (m: Uint8Array, s: string | Uint8Array) => {
      const given = typeof s === 'string' ? decodeBase64urlStrict(s) : Buffer.from(s);
      const expected = mac(m);
      return given !== undefined && given.length === expected.length && timingSafeEqual(given, expected);
    },
  });
}

/**
 * The signer of an Ed25519 key, for evidence others verify with a public key: an HMAC
 * key (possible from plain JavaScript or a file read with `hmac: true`) is refused,
 * naming what it was for.
 */
export function ed25519Signer(key: KeyMaterial, purpose: string): Signer {
  if (key.alg !== 'ed25519')
    throw new WitnessError(
      'USAGE',
      `Cannot ${purpose} with the HMAC key ${key.kid}: others verify this evidence with a public key, so it needs an Ed25519 key (witness keys new).`,
    );
  return signerFor(key);
}

/** A verifier from an Ed25519 public key alone (raw base64url, or a KeyObject): what an auditor without the secret holds. */
export function ed25519Verifier(kid: string, publicKey: string | KeyObject): Verifier {
  const pub = typeof publicKey === 'string' ? publicKeyObject(publicKey) : publicKey;
  return Object.freeze({
    alg: 'ed25519' as const,
    kid,
    verify: (m: Uint8Array, s: string | Uint8Array) => verifyEd25519(pub, m, s),
  });
}
