/**
 * @module
 * The release record (attest.md §2): its fields, its one schema (`ReceiptSchema`; the
 * JSON Schema in docs and the verifier's fast check are generated from it), the
 * domain-separated RFC 8785 bytes that get signed, and its digest. Signer and verifier
 * both go through `signingBytes` and `receiptDigest` (core's canonicaliser), so they
 * cannot disagree about what was signed.
 */
import { hash } from 'node:crypto';
import { z } from 'zod';
import { isCanonicalBase64url } from '../core/base64url.js';
import { canonicalize, canonicalizeWithout } from '../core/canonical-json.js';
import { isWitnessError, WitnessError } from '../core/errors.js';
import { parseStrictJson } from '../core/strict-json.js';
import { DOMAIN_TAGS, type DomainTag } from './domain.js';
import { DeployerNameSchema, Ed25519KeyIdSchema, Ed25519SignatureSchema, Sha256HexSchema } from './formats.js';
import { type Reason, reason } from './reasons.js';
import { compileShape } from './shape.js';

export const RECEIPT_VERSION = 1;
/** The deepest delegation a receipt can record (root = 0): a path holds at most MAX_DEPTH + 1 receipts. */
export const MAX_DEPTH = 4096;
export const CONSTRUCTIONS = ['none', 'chain', 'merkle', 'dag'] as const;
export type Construction = (typeof CONSTRUCTIONS)[number];
export type ReceiptType = 'output' | 'edge';

/** The domain tag of each receipt type (domain.ts): a signature over one kind of record never verifies as another. */
export const RECEIPT_TAGS: Readonly<Record<ReceiptType, DomainTag>> = {
  output: DOMAIN_TAGS.releaseReceipt,
  edge: DOMAIN_TAGS.delegationEdge,
};

const B64URL = /^[A-Za-z0-9_-]+$/;
const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

const hex64 = Sha256HexSchema;
const name = DeployerNameSchema;
/** A UTC time with milliseconds, exactly as `Date.prototype.toISOString` writes it. */
export const TimeSchema = z
  .string()
  .regex(ISO_MS, 'expected a UTC time like 2026-01-31T12:00:00.000Z')
  .refine((s) => _isoRoundTrips(s), 'not a real calendar time');

// The calendar check lives in `_semanticProblems`, one Date.parse per field, off the zod hot path.
const receiptTime = z.string().regex(ISO_MS, 'expected a UTC time like 2026-01-31T12:00:00.000Z');

export const SignatureSchema = z.strictObject({
  key_id: Ed25519KeyIdSchema,
  alg: z.literal('Ed25519'),
  sig: Ed25519SignatureSchema,
});

/**
 * The receipt's structure. `parseReceipt` adds what a schema states poorly: real
 * calendar times, issued_at < not_after, no deployer or key listed twice, canonical
 * base64url.
 */
export const ReceiptSchema = z.strictObject({
  v: z.literal(RECEIPT_VERSION),
  type: z.enum(['output', 'edge']),
  output_sha256: hex64,
  output_len: z.int().nonnegative(),
  deployer: name,
  // Any text (an instance id is a label, not a trust decision); JCS must be able to write it.
  instance: z.string().min(1).max(256),
  key_id: SignatureSchema.shape.key_id,
  issued_at: receiptTime,
  not_after: receiptTime,
  nonce: z
    .string()
    .min(22, 'expected at least 128 random bits (22 base64url characters)')
    .max(86)
    .regex(B64URL, 'expected unpadded base64url'),
  parent: hex64.nullable(),
  depth: z.int().nonnegative().max(MAX_DEPTH),
  construction: z.enum(CONSTRUCTIONS),
  cosigners: z.array(name).max(16),
  ancestry_root: hex64.optional(),
  signatures: z.array(SignatureSchema).min(1, 'at least one signature is required').max(16),
});

/**
 * The verifier's fast path, compiled from the JSON Schema zod generates for
 * `ReceiptSchema` (shape.ts): true only for values the schema accepts unchanged;
 * false means "ask zod", which says why. bench/attest.ts shows what it saves.
 */
export const hasReceiptShape = compileShape(z.toJSONSchema(ReceiptSchema) as Record<string, unknown>) as (
  value: unknown,
) => value is Receipt;

export type Signature = z.infer<typeof SignatureSchema>;
export type Receipt = z.infer<typeof ReceiptSchema>;
/** A receipt before it is signed: everything the signatures cover. */
export type UnsignedReceipt = Omit<Receipt, 'signatures'>;

/** A receipt with the values every check needs, computed once. */
export interface PreparedReceipt {
  receipt: Receipt;
  /** Tag + JCS of the record without `signatures`: what every signature covers. */
  signingBytes: Buffer;
  /** SHA-256 (hex) of the JCS of the whole receipt, signatures included: what a child's `parent` names. */
  digest: string;
  /** The same digest as 32 bytes (a Merkle leaf). */
  digestBytes: Buffer;
  issuedAt: number;
  notAfter: number;
}

/** The bytes a deployer signs: domain tag of the record type, then RFC 8785 of the record without signatures. */
export function signingBytes(record: UnsignedReceipt | Receipt): Buffer {
  return Buffer.from(RECEIPT_TAGS[record.type] + _forms(record).without, 'utf8');
}

/** SHA-256 hex of the receipt's canonical JSON, signatures included. */
export function receiptDigest(receipt: Receipt): string {
  return _sha256Hex(canonicalize(receipt));
}

/** The RFC 8785 text of a record with and without its signatures, from one pass. */
function _forms(record: UnsignedReceipt | Receipt): { full: string; without: string } {
  return canonicalizeWithout(record as unknown as Record<string, unknown>, 'signatures');
}

// One-shot crypto.hash: cheaper than createHash for the small texts of receipts.
function _sha256Hex(text: string): string {
  return hash('sha256', text, 'hex');
}

export type ParseResult<T> = { ok: true; value: T } | { ok: false; reasons: Reason[] };

/**
 * Reads one receipt from JSON text or an already-parsed value. Problems come back as
 * `MALFORMED` / `NON_CANONICAL` reasons naming the field, never as exceptions.
 */
export function parseReceipt(input: unknown, index?: number): ParseResult<PreparedReceipt> {
  const parsed =
    typeof input === 'string' || input instanceof Uint8Array
      ? parseJsonText(input, 'the receipt', index)
      : ({ ok: true, value: input } as const);
  if (!parsed.ok) return parsed;
  let receipt: Receipt;
  if (hasReceiptShape(parsed.value)) receipt = parsed.value;
  else {
    const checked = ReceiptSchema.safeParse(parsed.value);
    if (!checked.success) {
      return {
        ok: false,
        reasons: checked.error.issues.map((issue) =>
          reason('MALFORMED', `receipt.${issue.path.join('.') || '(root)'}: ${issue.message}.`, index),
        ),
      };
    }
    receipt = checked.data;
  }
  const issuedAt = Date.parse(receipt.issued_at);
  const notAfter = Date.parse(receipt.not_after);
  const problems = _semanticProblems(receipt, issuedAt, notAfter, index);
  let forms: { full: string; without: string } | undefined;
  try {
    forms = _forms(receipt);
  } catch (error) {
    if (!isWitnessError(error)) throw error;
    problems.push(reason('NON_CANONICAL', error.message, index));
  }
  if (problems.length > 0 || !forms) return { ok: false, reasons: problems };
  const { full } = forms;
  let bytes: Buffer | undefined;
  let digest: string | undefined;
  return {
    ok: true,
    value: {
      receipt,
      signingBytes: Buffer.from(RECEIPT_TAGS[receipt.type] + forms.without, 'utf8'),
      // Only a receipt that has a child (or a Merkle commitment) needs its digest: hash on demand.
      get digestBytes() {
        bytes ??= hash('sha256', full, 'buffer');
        return bytes;
      },
      get digest() {
        digest ??= this.digestBytes.toString('hex');
        return digest;
      },
      issuedAt,
      notAfter,
    },
  };
}

/**
 * What a verifier would call MALFORMED or NON_CANONICAL in a record about to be signed
 * (schema, real times, a non-empty window, canonical form), as reasons; none when it is
 * well formed. The signer and the co-signer both refuse to sign a record with any.
 */
export function unsignedRecordProblems(record: UnsignedReceipt): Reason[] {
  const placeholder: Signature = { key_id: record.key_id, alg: 'Ed25519', sig: 'A'.repeat(86) };
  const checked = parseReceipt({ ...record, signatures: [placeholder] });
  return checked.ok ? [] : checked.reasons;
}

/** Strict JSON text → value; duplicate keys and numbers not spelled canonically are NON_CANONICAL, other syntax errors MALFORMED. */
export function parseJsonText(text: string | Uint8Array, what: string, index?: number): ParseResult<unknown> {
  const source = typeof text === 'string' ? text : Buffer.from(text).toString('utf8');
  try {
    return { ok: true, value: parseStrictJson(source, { what, canonicalNumbers: true }) };
  } catch (error) {
    const message = (error as Error).message;
    return {
      ok: false,
      reasons: [
        reason(/duplicate key|not in its canonical form/.test(message) ? 'NON_CANONICAL' : 'MALFORMED', message, index),
      ],
    };
  }
}

/** The declared type of a delegation-path evidence file: `{"type": "witness/path", "path": [root, …, leaf]}`. */
export const PATH_TYPE = 'witness/path';

/**
 * Evidence is one receipt, or a delegation path `{type: "witness/path", path: [root, …,
 * leaf]}` — or, as written before paths declared their type, `{path: [...]}` alone
 * (legacy). Returns the path root → leaf.
 */
export function evidencePath(value: unknown): ParseResult<unknown[]> {
  if (value !== null && typeof value === 'object' && !Array.isArray(value) && 'path' in value) {
    const { path, type, ...rest } = value as { path: unknown; type?: unknown };
    const typed = type === undefined || type === PATH_TYPE;
    if (!Array.isArray(path) || path.length === 0 || !typed || Object.keys(rest).length > 0) {
      return {
        ok: false,
        reasons: [
          reason(
            'MALFORMED',
            `Evidence of the form {"type": "${PATH_TYPE}", "path": [...]} must hold only a non-empty array of receipts, root first.`,
          ),
        ],
      };
    }
    return { ok: true, value: path };
  }
  return { ok: true, value: [value] };
}

// Loops and module-level helpers only: this runs for every receipt on every path.
function _semanticProblems(receipt: Receipt, issuedAt: number, notAfter: number, index?: number): Reason[] {
  const problems: Reason[] = [];
  if (!_realTime(receipt.issued_at, issuedAt))
    problems.push(_malformed('issued_at', 'not a real calendar time', index));
  if (!_realTime(receipt.not_after, notAfter))
    problems.push(_malformed('not_after', 'not a real calendar time', index));
  if (problems.length === 0 && issuedAt >= notAfter)
    problems.push(_malformed('not_after', 'not_after must be later than issued_at', index));
  if (receipt.cosigners.length > 1 && new Set(receipt.cosigners).size !== receipt.cosigners.length)
    problems.push(_malformed('cosigners', 'a deployer is listed twice', index));
  const sigs = receipt.signatures;
  if (sigs.length > 1 && new Set(sigs.map(_keyIdOf)).size !== sigs.length)
    problems.push(_malformed('signatures', 'the same key_id signs twice; keep one signature per key', index));
  // Base64url with non-zero padding bits decodes to the same bytes as another text:
  // two encodings of one signature would give one receipt two digests.
  if (!isCanonicalBase64url(receipt.nonce)) problems.push(_nonCanonical('nonce', index));
  for (let i = 0; i < sigs.length; i++) {
    if (!isCanonicalBase64url((sigs[i] as Signature).sig)) problems.push(_nonCanonical(`signatures.${i}.sig`, index));
  }
  return problems;
}

function _malformed(field: string, message: string, index?: number): Reason {
  return reason('MALFORMED', `receipt.${field}: ${message}.`, index);
}

function _nonCanonical(field: string, index?: number): Reason {
  return reason(
    'NON_CANONICAL',
    `receipt.${field}: base64url text with non-zero padding bits; re-encode the bytes.`,
    index,
  );
}

function _keyIdOf(s: Signature): string {
  return s.key_id;
}

// Date.parse rolls 2026-02-30 over to March; a real time is one that survives the
// round trip. Days 1–28 exist in every month, so most times skip the second step.
function _realTime(text: string, ms: number): boolean {
  if (!Number.isFinite(ms)) return false;
  const day = (text.charCodeAt(8) - 48) * 10 + (text.charCodeAt(9) - 48);
  const hour = (text.charCodeAt(11) - 48) * 10 + (text.charCodeAt(12) - 48);
  return (day >= 1 && day <= 28 && hour <= 23) || new Date(ms).toISOString() === text;
}

function _isoRoundTrips(text: string): boolean {
  const ms = Date.parse(text);
  return Number.isFinite(ms) && new Date(ms).toISOString() === text;
}

/** The last time the receipt and key-directory formats can write (a four-digit year). */
export const LATEST_TIME = Date.parse('9999-12-31T23:59:59.999Z');
const _EARLIEST_TIME = Date.parse('0000-01-01T00:00:00.000Z');

/** A millisecond time as the receipt's time format; a time the format cannot hold is a USAGE error. */
export function isoTime(ms: number): string {
  if (!(ms >= _EARLIEST_TIME && ms <= LATEST_TIME)) {
    throw new WitnessError(
      'USAGE',
      `The time ${Number.isFinite(ms) && Math.abs(ms) <= 8.64e15 ? new Date(ms).toISOString() : String(ms)} is after ${new Date(LATEST_TIME).toISOString()} (or before year 0), the last time a receipt or key directory can hold; choose an earlier time or a shorter window.`,
    );
  }
  return new Date(ms).toISOString();
}
