/**
 * @module
 * The signed transcript's formats (docs/results-format.md, "Signed results"): the
 * receipt each results line carries, and the signed checkpoint beside the file.
 *
 * A signed line is the unsigned line — `JSON.stringify` of the record, byte for byte —
 * with one member appended last: `"receipt": {…}` in RFC 8785 form. The receipt names
 * the run (id, seq, seed, cell), the SHA-256 of the unsigned line (its content), the
 * engine and prompt-pack hash, the signing key, and `prev`: the digest of the previous
 * line's receipt in the same chain (null first). A receipt's digest is SHA-256 of the
 * `sim-record` domain tag + its canonical text without `sig`, so the chain covers every
 * line's content. The checkpoint signs the chain's length and head.
 */
import { z } from 'zod';
import { DOMAIN_TAGS, signedMessage } from '../../attest/domain.js';
import {
  DeployerNameSchema,
  Ed25519KeyIdSchema,
  Ed25519SignatureSchema,
  Sha256HexSchema,
} from '../../attest/formats.js';
import { TimeSchema } from '../../attest/receipt.js';
import { canonicalize } from '../../core/canonical-json.js';
import { WitnessError } from '../../core/errors.js';
import { sha256Hex } from '../../core/hash.js';

export const RECORD_TYPE = 'witness/sim-record';
export const CHECKPOINT_TYPE = 'witness/sim-checkpoint';
export const CHECKPOINTS_FILE_TYPE = 'witness/sim-checkpoints';

const HEX64 = Sha256HexSchema;
const KEY_ID = Ed25519KeyIdSchema;
const SIG = Ed25519SignatureSchema;

export const LineReceiptSchema = z.strictObject({
  v: z.literal(1),
  type: z.literal(RECORD_TYPE),
  run: z.string().min(1).describe('the run id, as in the line'),
  seq: z.int().nonnegative().describe("the run's position in the plan"),
  seed: z.int().describe("the run's seed"),
  cell: z.string().min(1).describe('the cell label'),
  content_sha256: HEX64.describe('SHA-256 of the line without its receipt member (the unsigned line)'),
  engine: z.string().min(1).describe('the engine that played the run, e.g. agent-witness@0.1.0'),
  prompts: z
    .string()
    .nullable()
    .describe('hash of the prompt pack model-backed agents were given; null for rule-based runs'),
  key_id: KEY_ID.describe('the key that signs this line (with --sign-lines) or the checkpoint covering it'),
  prev: HEX64.nullable().describe(
    "digest of the previous line's receipt in this chain (the shard's), null for its first line",
  ),
  signed_at: TimeSchema.optional().describe('with --sign-lines: when this line was signed'),
  sig: SIG.optional().describe('with --sign-lines: Ed25519 over the sim-record tag and the receipt without sig'),
});
export type LineReceipt = z.infer<typeof LineReceiptSchema>;

const ShardSchema = z
  .strictObject({ index: z.int().min(1), count: z.int().min(1) })
  .refine((s) => s.index <= s.count, { message: 'shard index must be at most the count' });

export const CheckpointSchema = z.strictObject({
  v: z.literal(1),
  type: z.literal(CHECKPOINT_TYPE),
  experiment: z.record(z.string(), z.unknown()).describe('the experiment as run (its plan is rebuilt from it)'),
  shard: ShardSchema.nullable().describe('the shard this chain holds; null for a whole sweep'),
  engine: z.string().min(1),
  prompts: z
    .strictObject({ name: z.string(), hash: z.string(), cues: z.array(z.string()).optional() })
    .nullable()
    .describe('the prompt pack of model-backed agents'),
  cassette: z
    .strictObject({ role: z.enum(['recorded', 'replayed']), sha256: HEX64, bytes: z.int().nonnegative() })
    .nullable()
    .describe('the cassette recorded into (its first `bytes` bytes) or replayed from (all of it)'),
  line_signatures: z.boolean().describe('every line carries its own signature'),
  count: z.int().nonnegative().describe('lines of this chain the checkpoint covers'),
  head: HEX64.nullable().describe("digest of the receipt of the chain's last covered line; null when count is 0"),
  note: z
    .string()
    .max(4096)
    .optional()
    .describe(
      "the same tree head as a C2SP signed-note checkpoint (origin, count, base64 root), signed by this key under the chain's origin: what `witness sim checkpoint` prints for keeping",
    ),
  root: HEX64.optional().describe(
    "RFC 6962 Merkle tree hash of the chain's first `count` lines, the leaf data of each its receipt digest (32 bytes); absent in files written before it was added",
  ),
  key_id: KEY_ID,
  deployer: DeployerNameSchema,
  signed_at: TimeSchema,
  sig: SIG,
});
export type Checkpoint = z.infer<typeof CheckpointSchema>;
export type UnsignedCheckpoint = Omit<Checkpoint, 'sig'>;

export const CheckpointsFileSchema = z
  .strictObject({
    v: z.literal(1),
    type: z.literal(CHECKPOINTS_FILE_TYPE),
    checkpoints: z
      .array(CheckpointSchema)
      .min(1)
      .max(4096)
      .describe('one per chain: one for a sweep, one per shard after a merge'),
  })
  .describe('The signed checkpoints of a Witness results file (RESULTS.checkpoint.json).');
export type CheckpointsFile = z.infer<typeof CheckpointsFileSchema>;

/** Where a results file's checkpoints live. */
export function checkpointPath(results: string): string {
  return `${results}.checkpoint.json`;
}

/** The bytes a line signature covers and whose SHA-256 is the line's digest: tag + receipt text without `sig`. */
export function receiptSigningText(receiptWithoutSig: string): string {
  return DOMAIN_TAGS.simulationRecord + receiptWithoutSig;
}

/** SHA-256 (hex) of a receipt's signing text: what the next line's `prev` and the checkpoint's `head` name. */
export function receiptDigest(receiptWithoutSig: string): string {
  return sha256Hex(receiptSigningText(receiptWithoutSig));
}

/** The bytes a checkpoint signature covers: its domain tag and RFC 8785 of it without `sig`. */
export function checkpointSigningBytes(checkpoint: UnsignedCheckpoint | Checkpoint): Buffer {
  const { sig: _sig, ...rest } = checkpoint as Checkpoint;
  return signedMessage('resultsCheckpoint', rest);
}

/** What the writer knows about a line before its receipt is built. */
export interface ReceiptFields {
  run: string;
  seq: number;
  seed: number;
  /** Canonical JSON text of the cell label (computed once per cell). */
  cellText: string;
  contentSha256: string;
  prompts: string | null;
  prev: string | null;
  signedAt?: string;
}

/**
 * Builds receipt texts directly in RFC 8785 key order (a sweep writes a million of
 * these; canonicalize() on each would cost more than the game), with what is the same
 * for every line of a sweep — engine, key — written once.
 * test/sim/transcript-format.test.ts checks the texts equal canonicalize() of themselves.
 */
export class ReceiptBuilder {
  readonly #middle: string;
  constructor(engine: string, keyId: string) {
    this.#middle = `","engine":${canonicalize(engine)},"key_id":${canonicalize(keyId)},"prev":`;
  }

  /** The domain tag + the receipt's canonical text without `sig`: what a line signature covers, and whose SHA-256 is the line's digest. */
  signingText(f: ReceiptFields): string {
    const prev = f.prev === null ? 'null' : `"${f.prev}"`;
    const prompts = f.prompts === null ? 'null' : JSON.stringify(f.prompts);
    const signedAt = f.signedAt === undefined ? '' : `,"signed_at":"${f.signedAt}"`;
    return `${DOMAIN_TAGS.simulationRecord}{"cell":${f.cellText},"content_sha256":"${f.contentSha256}${this.#middle}${prev},"prompts":${prompts},"run":${JSON.stringify(f.run)},"seed":${f.seed},"seq":${f.seq}${signedAt},"type":"${RECORD_TYPE}","v":1}`;
  }

  /** The receipt as written in the line: the signing text without its tag, with `sig` (placed in key order) when given. */
  static receipt(signingText: string, sig?: string): string {
    const text = signingText.slice(DOMAIN_TAGS.simulationRecord.length);
    if (sig === undefined) return text;
    const at = text.lastIndexOf(',"signed_at":');
    if (at < 0) throw new WitnessError('INTERNAL', 'A signed receipt has a signed_at member.');
    return `${text.slice(0, at)},"sig":"${sig}"${text.slice(at)}`;
  }
}

/** A signed line from its unsigned text and its receipt's text. */
export function signedLine(content: string, receipt: string): string {
  if (!content.endsWith('}') || content.length <= 2)
    throw new WitnessError('INTERNAL', 'A results line is a JSON object with members.');
  return `${content.slice(0, -1)}${MARK}${receipt}}`;
}

/**
 * Builds signed lines as bytes in one reused buffer: exactly `signedLine(content,
 * receipt)` and its newline, UTF-8, but the content is encoded once, and its digest is
 * taken from those bytes, which are then written. Building the line as a string hashed
 * the content's UTF-8 once and encoded the 1.7 KB line again (with two more copies of
 * it as strings) for the write: about 1.5 µs of the ~5 µs a signed line added.
 * Each `content` → `line` pair makes one line; the bytes `line` returns are valid
 * until the next `content`.
 */
export class SignedLineBuffer {
  #bytes = Buffer.allocUnsafe(16 * 1024);
  #contentBytes = 0;

  /** Encodes the unsigned line and returns its SHA-256 (hex): the receipt's `content_sha256`. */
  content(content: string): string {
    // UTF-8 takes at most 3 bytes per UTF-16 code unit.
    this.#reserve(0, 3 * content.length);
    const n = this.#bytes.write(content, 0, 'utf8');
    if (n <= 2 || this.#bytes[n - 1] !== 0x7d)
      throw new WitnessError('INTERNAL', 'A results line is a JSON object with members.');
    this.#contentBytes = n;
    return sha256Hex(this.#bytes.subarray(0, n));
  }

  /** The signed line of the last `content`, newline included: the receipt replaces its closing brace as the last member. */
  line(receipt: string): Buffer {
    let at = this.#contentBytes - 1;
    this.#reserve(at, MARK.length + 3 * receipt.length + 2);
    at += this.#bytes.write(MARK, at, 'latin1');
    at += this.#bytes.write(receipt, at, 'utf8');
    this.#bytes[at++] = 0x7d;
    this.#bytes[at++] = 0x0a;
    return this.#bytes.subarray(0, at);
  }

  /** Room for `more` bytes after the first `keep`, which are kept. */
  #reserve(keep: number, more: number): void {
    if (keep + more <= this.#bytes.length) return;
    const bigger = Buffer.allocUnsafe(2 * (keep + more));
    this.#bytes.copy(bigger, 0, 0, keep);
    this.#bytes = bigger;
  }
}

/** A line taken apart: its unsigned text and its parsed receipt (the caller validates both). */
export interface SplitLine {
  content: string;
  receipt: unknown;
  /** The receipt as written; must equal canonicalize(receipt). */
  receiptText: string;
}

const MARK = ',"receipt":';

/**
 * Undoes `signedLine`: the receipt is the last member, written canonically, so the
 * unsigned text is everything before it. Returns undefined for a line with no receipt
 * member in that place (an unsigned line, or one rewritten by another tool).
 */
export function splitSignedLine(raw: string, parsed: Record<string, unknown>): SplitLine | undefined {
  if (!('receipt' in parsed)) return undefined;
  let text: string;
  try {
    text = canonicalize(parsed.receipt);
  } catch {
    return undefined;
  }
  const suffix = `${MARK}${text}}`;
  if (!raw.endsWith(suffix)) return undefined;
  return { content: `${raw.slice(0, raw.length - suffix.length)}}`, receipt: parsed.receipt, receiptText: text };
}
