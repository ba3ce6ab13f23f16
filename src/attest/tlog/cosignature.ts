/**
 * @module
 * Witness cosignatures, c2sp.org/tlog-cosignature cosignature/v1 (Ed25519, note
 * signature type 0x04): a cosigner's statement that, as of its timestamp, this is the
 * largest consistent tree head it has seen for the log. The signed message is
 * `cosignature/v1\n` `time T\n` then the whole checkpoint text; the signature bytes are
 * the u64 big-endian timestamp then the Ed25519 signature. The key id uses type byte
 * 0x04, so a witness's Witness key file signs under its own (name, key id) and a
 * verifier key `name+hash+base64(0x04 ‖ key)` names it.
 */
import { WitnessError } from '../../core/errors.js';
import type { SigningKey } from '../keys.js';
import { ed25519Signer } from '../signature.js';
import {
  cosignedMessage,
  NOTE_TYPE,
  type NoteSigner,
  type NoteVerifier,
  noteKeyId,
  noteVerifierKey,
  noteVerifierOf,
} from './note.js';

export interface CosignerOptions {
  /** POSIX seconds now (default: the real clock). */
  clock?: () => number;
}

/** A cosigner: signs checkpoint texts with a timestamp under `name` (e.g. witness.example/w1). */
export function cosigner(key: SigningKey, name: string, options: CosignerOptions = {}): NoteSigner {
  const signer = ed25519Signer(key, 'cosign checkpoints');
  const publicKey = Buffer.from(key.publicKey, 'base64url');
  const clock = options.clock ?? (() => Math.floor(Date.now() / 1000));
  const verifierKey = noteVerifierKey(name, publicKey, NOTE_TYPE.cosignatureV1);
  return Object.freeze({
    name,
    keyId: noteKeyId(name, NOTE_TYPE.cosignatureV1, publicKey),
    type: NOTE_TYPE.cosignatureV1,
    verifierKey,
    sign(text: Buffer): Buffer {
      const now = clock();
      if (!Number.isSafeInteger(now) || now < 0)
        throw new WitnessError('INTERNAL', `The cosigner's clock gave ${now}, not POSIX seconds.`);
      const ts = Buffer.alloc(8);
      ts.writeBigUInt64BE(BigInt(now));
      return Buffer.concat([ts, Buffer.from(signer.sign(cosignedMessage(now, text)), 'base64url')]);
    },
  });
}

/** The verifier of a cosigner's raw Ed25519 public key under `name`. */
export function cosignatureVerifier(name: string, publicKey: Uint8Array): NoteVerifier {
  return noteVerifierOf(name, NOTE_TYPE.cosignatureV1, publicKey);
}
