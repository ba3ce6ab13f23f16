/**
 * @module
 * C2SP signed notes (c2sp.org/signed-note, as Go's golang.org/x/mod/sumdb/note reads
 * them): a UTF-8 text ending in a newline, a blank line, then signature lines
 * `— NAME BASE64(keyid4 ‖ signature)`. A key is named by (name, key id), the key id
 * being the first 4 bytes of SHA-256(name ‖ 0x0A ‖ type ‖ public key); a verifier key
 * travels as `name+hash8hex+base64(type ‖ public key)`.
 *
 * Two signature types: 0x01, Ed25519 over the note text (a log's checkpoint), and
 * 0x04, the timestamped cosignature/v1 of c2sp.org/tlog-cosignature (cosignature.ts).
 * Keys are Witness key files (attest/keys.ts) signing through the one `Signer`: a note
 * key is an existing key under a name (for a log, its origin) — no key format of its own.
 *
 * Reading is strict: valid UTF-8, no control character but the newline, a final
 * newline, canonical standard base64, at most `maxSignatures` lines. Unknown keys are
 * ignored; a known key whose signature fails rejects the whole note; a note no known key
 * verifies is rejected. Failures are `WitnessError('INVALID_INPUT')` whose
 * `data.problem` says which (`MALFORMED`, `BAD_SIGNATURE`, `UNVERIFIED`).
 */
import { WitnessError } from '../../core/errors.js';
import { sha256 } from '../../core/hash.js';
import { loneSurrogateIndex } from '../../core/text.js';
import type { SigningKey } from '../keys.js';
import { ed25519Signer, ed25519Verifier } from '../signature.js';

/** Signature type bytes (c2sp.org/signed-note, "Signature types"). */
export const NOTE_TYPE = { ed25519: 0x01, cosignatureV1: 0x04 } as const;
export type NoteType = (typeof NOTE_TYPE)[keyof typeof NOTE_TYPE];

/** Go's limit; the spec asks to accept at least 16. */
export const MAX_NOTE_SIGNATURES = 100;

/** Why a note was refused. */
export type NoteProblem = 'MALFORMED' | 'BAD_SIGNATURE' | 'UNVERIFIED';

/** A public key under a name: what checks one kind of signature line. */
export interface NoteVerifier {
  readonly name: string;
  /** The uint32 key id (big-endian first 4 bytes of the key hash). */
  readonly keyId: number;
  readonly type: NoteType;
  /** Raw 32-byte Ed25519 public key. */
  readonly publicKey: Buffer;
  /** True when `signature` (without its key id) signs `text` (the note text, final newline included). */
  verify(text: Buffer, signature: Buffer): boolean;
}

/** A key that signs notes under a name. */
export interface NoteSigner {
  readonly name: string;
  readonly keyId: number;
  readonly type: NoteType;
  /** The signature bytes (without the key id) over the note text. */
  sign(text: Buffer): Buffer;
  /** The matching verifier key text, `name+hash+base64(type ‖ key)`. */
  readonly verifierKey: string;
}

/** One signature line of an opened note. */
export interface NoteSignature {
  name: string;
  keyId: number;
  /** The base64 text of the line (key id ‖ signature). */
  base64: string;
}

export interface VerifiedSignature extends NoteSignature {
  verifier: NoteVerifier;
  /** For a cosignature/v1: its POSIX timestamp, seconds. */
  timestamp?: number;
}

export interface OpenedNote {
  /** The signed text, final newline included. */
  text: string;
  /** Signatures by known keys, each verified (one per key). */
  verified: VerifiedSignature[];
  /** Signatures by keys the caller did not name (ignored, kept to pass on). */
  unverified: NoteSignature[];
}

/** Key names: non-empty, no Unicode space, no `+` (signed-note "Format"). */
export function isValidKeyName(name: string): boolean {
  return name.length > 0 && loneSurrogateIndex(name) < 0 && !/[\p{White_Space}+]/u.test(name);
}

/** SHA-256(name ‖ 0x0A ‖ type ‖ public key)[:4] as a uint32. */
export function noteKeyId(name: string, type: NoteType, publicKey: Uint8Array): number {
  return sha256(Buffer.concat([Buffer.from(`${name}\n`, 'utf8'), Buffer.from([type]), publicKey])).readUInt32BE(0);
}

/** The verifier key text of a raw Ed25519 public key under `name`. */
export function noteVerifierKey(name: string, publicKey: Uint8Array, type: NoteType = NOTE_TYPE.ed25519): string {
  _checkName(name);
  if (publicKey.length !== 32)
    throw new WitnessError('INVALID_INPUT', `An Ed25519 public key has 32 bytes, this one has ${publicKey.length}.`);
  const id = noteKeyId(name, type, publicKey).toString(16).padStart(8, '0');
  return `${name}+${id}+${Buffer.concat([Buffer.from([type]), publicKey]).toString('base64')}`;
}

/** Parses a verifier key text (Ed25519 or cosignature/v1), checking its key id. */
export function parseNoteVerifierKey(text: string): NoteVerifier {
  const bad = (why: string) =>
    new WitnessError(
      'INVALID_INPUT',
      `${JSON.stringify(text.slice(0, 200))} is not a note verifier key (name+hash+base64 key): ${why}.`,
    );
  // The key's base64 may itself hold "+": only the first two separate (Go's chop).
  const first = text.indexOf('+');
  const second = first < 0 ? -1 : text.indexOf('+', first + 1);
  if (second < 0) throw bad('expected three +-separated parts');
  const [name, hex, b64] = [text.slice(0, first), text.slice(first + 1, second), text.slice(second + 1)];
  if (!isValidKeyName(name)) throw bad('the name is empty or holds a space');
  if (!/^[0-9a-f]{8}$/.test(hex)) throw bad('the key hash is not 8 lower-case hex digits');
  const key = _base64Strict(b64);
  if (key === undefined || key.length !== 33)
    throw bad('the key is not base64 of a type byte and a 32-byte Ed25519 key');
  const type = key[0] as number;
  if (type !== NOTE_TYPE.ed25519 && type !== NOTE_TYPE.cosignatureV1)
    throw bad(
      `signature type 0x${type.toString(16).padStart(2, '0')} is not supported (0x01 Ed25519, 0x04 cosignature/v1)`,
    );
  const publicKey = key.subarray(1);
  const keyId = Number.parseInt(hex, 16);
  if (noteKeyId(name, type, publicKey) !== keyId) throw bad('the key hash does not match the name and key');
  return noteVerifierOf(name, type, publicKey);
}

/** A verifier from its parts (the key id computed). */
export function noteVerifierOf(name: string, type: NoteType, publicKey: Uint8Array): NoteVerifier {
  _checkName(name);
  const pub = Buffer.from(publicKey);
  const ed = ed25519Verifier(name, pub.toString('base64url'));
  const verify =
    type === NOTE_TYPE.ed25519
      ? (text: Buffer, sig: Buffer) => sig.length === 64 && ed.verify(text, sig)
      : (text: Buffer, sig: Buffer) => _verifyCosignature(ed.verify, text, sig);
  return Object.freeze({ name, keyId: noteKeyId(name, type, pub), type, publicKey: pub, verify });
}

/**
 * Signs notes with a Witness Ed25519 key under `name` (for a log: its origin). Refuses a
 * text that begins like a cosignature/v1 message: the same key then can never be made to
 * vouch for a consistency check it did not do (the Ed25519 types share the key's bytes).
 */
export function noteSigner(key: SigningKey, name: string): NoteSigner {
  _checkName(name);
  const signer = ed25519Signer(key, 'sign notes');
  const publicKey = Buffer.from(key.publicKey, 'base64url');
  return Object.freeze({
    name,
    keyId: noteKeyId(name, NOTE_TYPE.ed25519, publicKey),
    type: NOTE_TYPE.ed25519,
    verifierKey: noteVerifierKey(name, publicKey),
    sign(text: Buffer): Buffer {
      if (text.subarray(0, COSIGNATURE_HEADER.length).equals(COSIGNATURE_HEADER))
        throw new WitnessError(
          'USAGE',
          'Refusing to sign a note that begins with "cosignature/v1": it would read as a witness cosignature.',
        );
      return Buffer.from(signer.sign(text), 'base64url');
    },
  });
}

/** The signature lines `— NAME BASE64\n` of `text` by each signer. */
export function signatureLines(text: string, signers: readonly NoteSigner[]): string {
  const bytes = Buffer.from(text, 'utf8');
  _checkText(text, bytes);
  return signers.map((s) => _line(s.name, s.keyId, s.sign(bytes))).join('');
}

/** A signed note: the text (ending in a newline), a blank line, one signature line per signer. */
export function signNote(text: string, signers: readonly NoteSigner[]): string {
  if (signers.length === 0) throw new WitnessError('USAGE', 'A signed note needs at least one signer.');
  return `${text}\n${signatureLines(text, signers)}`;
}

export interface OpenNoteOptions {
  /** Most signature lines read before the note is refused (default 100). */
  maxSignatures?: number;
}

/** Reads a signed note and checks every signature by a key in `verifiers` (see the module header). */
export function openNote(
  note: string | Uint8Array,
  verifiers: readonly NoteVerifier[],
  options: OpenNoteOptions = {},
): OpenedNote {
  const bytes = typeof note === 'string' ? Buffer.from(note, 'utf8') : Buffer.from(note);
  _decode(bytes, typeof note === 'string' ? note : undefined);
  const split = bytes.lastIndexOf('\n\n');
  if (split < 0) throw _malformed('it has no blank line before its signatures');
  const body = bytes.subarray(0, split + 1);
  const sigText = bytes.subarray(split + 2).toString('utf8');
  if (sigText.length === 0 || !sigText.endsWith('\n'))
    throw _malformed('its signature block is empty or does not end with a newline');
  const lines = sigText.slice(0, -1).split('\n');
  const max = options.maxSignatures ?? MAX_NOTE_SIGNATURES;
  if (lines.length > max) throw _malformed(`it has ${lines.length} signature lines, more than the ${max} read`);
  const out: OpenedNote = { text: body.toString('utf8'), verified: [], unverified: [] };
  const seen = new Set<string>();
  for (const line of lines) {
    const sig = _parseLine(line);
    const key = `${sig.name}\n${sig.keyId}`;
    const verifier = verifiers.find((v) => v.name === sig.name && v.keyId === sig.keyId);
    if (seen.has(key)) continue; // a repeated line by one key counts once, as in Go
    seen.add(key);
    if (!verifier) {
      out.unverified.push(sig);
      continue;
    }
    const raw = Buffer.from(sig.base64, 'base64').subarray(4);
    if (!verifier.verify(body, raw)) {
      throw new WitnessError(
        'INVALID_INPUT',
        `The note's signature by ${sig.name} (key ${_hex(sig.keyId)}) does not verify: the note was changed after signing, or the signature was damaged.`,
        { data: { problem: 'BAD_SIGNATURE' satisfies NoteProblem, name: sig.name } },
      );
    }
    out.verified.push(
      verifier.type === NOTE_TYPE.cosignatureV1
        ? { ...sig, verifier, timestamp: Number(raw.readBigUInt64BE(0)) }
        : { ...sig, verifier },
    );
  }
  if (out.verified.length === 0) {
    const names = [...new Set(verifiers.map((v) => v.name))].join(', ') || '(none given)';
    throw new WitnessError(
      'INVALID_INPUT',
      `No signature of the note is by a known key (known: ${names}); check the verifier key or who signed it.`,
      { data: { problem: 'UNVERIFIED' satisfies NoteProblem } },
    );
  }
  return out;
}

/** The signature block a parsed note would be written with again (for passing notes on). */
export function noteSignatureLine(sig: NoteSignature): string {
  return `— ${sig.name} ${sig.base64}\n`;
}

/**
 * The notes of a file of kept checkpoints, one after another (`witness sim checkpoint`
 * prints one per chain; a verifier keeping a mailbox's checkpoints appends each). A
 * note is its text, a blank line and signature lines (`— …`); the first line after them
 * that is not one starts the next note. `hint` says what to keep when none is there.
 */
export function splitNotes(text: string, what: string, hint: string): string[] {
  // A copy through a Windows editor or transfer: said as such, not as the malformed note it turns into.
  if (text.includes('\r\n'))
    throw new WitnessError(
      'INVALID_INPUT',
      `${what} has Windows line endings (CRLF); a signed note's lines end with LF alone. Convert it (e.g. dos2unix) and verify again: ${hint}.`,
      { data: { problem: 'MALFORMED' satisfies NoteProblem } },
    );
  const notes: string[] = [];
  let current: string[] = [];
  let inSignatures = false;
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  for (const line of lines) {
    if (inSignatures && !line.startsWith('— ')) {
      notes.push(`${current.join('\n')}\n`);
      current = [];
      inSignatures = false;
    }
    if (line === '' && current.length === 0) continue; // blank lines between notes
    if (line === '' && current.length > 0 && !inSignatures) inSignatures = true;
    current.push(line);
  }
  if (current.length > 0) notes.push(`${current.join('\n')}\n`);
  if (notes.length === 0) throw new WitnessError('INVALID_INPUT', `${what} holds no checkpoint: ${hint}.`);
  return notes;
}

export const COSIGNATURE_HEADER = Buffer.from('cosignature/v1\n', 'utf8');

/** The message a cosignature/v1 signs (c2sp.org/tlog-cosignature, "Ed25519 signed message"). */
export function cosignedMessage(timestamp: number, text: Buffer): Buffer {
  return Buffer.concat([COSIGNATURE_HEADER, Buffer.from(`time ${timestamp}\n`, 'utf8'), text]);
}

// A cosignature's bytes are a u64 big-endian timestamp then the Ed25519 signature.
// Timestamps past 2^53 − 1 (285 million years ahead) are refused: the spec lets
// verifiers reject future ones, and beyond that a JavaScript number loses the value.
function _verifyCosignature(verify: (m: Uint8Array, s: Uint8Array) => boolean, text: Buffer, sig: Buffer): boolean {
  if (sig.length !== 72) return false;
  const ts = sig.readBigUInt64BE(0);
  if (ts > BigInt(Number.MAX_SAFE_INTEGER)) return false;
  return verify(cosignedMessage(Number(ts), text), sig.subarray(8));
}

function _parseLine(line: string): NoteSignature {
  if (!line.startsWith('— '))
    throw _malformed(
      `a signature line does not begin with "— " (an em dash and a space): ${JSON.stringify(line.slice(0, 80))}`,
    );
  const rest = line.slice(2);
  const space = rest.indexOf(' ');
  const name = space < 0 ? rest : rest.slice(0, space);
  const base64 = space < 0 ? '' : rest.slice(space + 1);
  const raw = _base64Strict(base64);
  if (!isValidKeyName(name) || raw === undefined || raw.length < 5)
    throw _malformed(
      `a signature line is not "— NAME BASE64" with a valid key name and at least 5 bytes of canonical base64: ${JSON.stringify(line.slice(0, 80))}`,
    );
  return { name, keyId: raw.readUInt32BE(0), base64 };
}

function _line(name: string, keyId: number, sig: Buffer): string {
  const id = Buffer.alloc(4);
  id.writeUInt32BE(keyId);
  return `— ${name} ${Buffer.concat([id, sig]).toString('base64')}\n`;
}

// Valid UTF-8 without control characters other than the newline (signed-note "Format").
function _decode(bytes: Buffer, given: string | undefined): void {
  let text: string;
  try {
    text = given ?? new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    throw _malformed('it is not valid UTF-8');
  }
  _checkText(text, bytes);
}

function _checkText(text: string, bytes: Buffer): void {
  if (loneSurrogateIndex(text) >= 0) throw _malformed('it is not valid Unicode text (a lone surrogate)');
  for (const b of bytes)
    if (b < 0x20 && b !== 0x0a)
      throw _malformed(
        `it holds the control character 0x${b.toString(16).padStart(2, '0')} (only the newline is allowed)`,
      );
  if (!text.endsWith('\n')) throw _malformed('its text does not end with a newline');
}

/** Standard base64 (RFC 4648 §4) in its one canonical spelling, or undefined. */
function _base64Strict(text: string): Buffer | undefined {
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text) || text.length % 4 !== 0) return undefined;
  const bytes = Buffer.from(text, 'base64');
  return bytes.toString('base64') === text ? bytes : undefined;
}

export { _base64Strict as decodeBase64Strict };

function _checkName(name: string): void {
  if (!isValidKeyName(name))
    throw new WitnessError(
      'USAGE',
      `${JSON.stringify(name)} is not a note key name: it must be non-empty, without spaces or "+" (e.g. example.com/log).`,
    );
}

function _malformed(why: string): WitnessError {
  return new WitnessError('INVALID_INPUT', `Not a signed note: ${why}.`, {
    data: { problem: 'MALFORMED' satisfies NoteProblem },
  });
}

function _hex(id: number): string {
  return id.toString(16).padStart(8, '0');
}
