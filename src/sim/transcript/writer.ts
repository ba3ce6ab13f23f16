/**
 * @module
 * Writing a signed results file (`witness sim --sign KEY`). Each line is the unsigned
 * line plus its receipt, hash-linked to the line before; with `lineSignatures` each
 * receipt is also signed on its own. A signed checkpoint of the chain (count, head)
 * is written when the file opens, at most every `checkpointMs` while the sweep runs
 * (after the lines it covers are synced), and when it closes.
 *
 * Why a checkpoint per interval and not a signature per line by default: one Ed25519
 * signature (~70 µs here) costs more than a whole rule-based game, while hashing a line
 * costs ~2 µs (bench/sim.ts measures both). Lines written after the last checkpoint
 * of a killed sweep are signed by no one, so anyone could have edited and re-chained
 * them: the resume cuts them and plays their runs again (past-checkpoint.ts), and only
 * the lines it wrote itself are covered by its checkpoints. With `lineSignatures` each
 * of those lines carries its own signature, which the resume checks and then keeps.
 */
import { existsSync, truncateSync } from 'node:fs';
import type { KeyMaterial, SigningKey } from '../../attest/keys.js';
import { ed25519Signer, type Signer } from '../../attest/signature.js';
import { isoTime } from '../../attest/receipt.js';
import { MerkleFrontier } from '../../core/tlog/merkle.js';
import { canonicalize } from '../../core/canonical-json.js';
import { WitnessError } from '../../core/errors.js';
import { sha256Hex } from '../../core/hash.js';
import { type JsonlWriter, openJsonlWriter } from '../../core/jsonl.js';
import { ENGINE } from '../../core/version.js';
import { FinishedRuns } from '../experiment/finished.js';
import type { Plan, Shard } from '../experiment/plan.js';
import type { PlayedChunk } from '../experiment/chunk.js';
import type { AgentProvenance } from '../experiment/play.js';
import type { RunRecord } from '../experiment/record.js';
import { asRecord } from '../experiment/record-schema.js';
import type { Experiment } from '../experiment/schema.js';
import { readCheckpoints, signCheckpoint, writeCheckpoints } from './checkpoint.js';
import {
  CHECKPOINT_TYPE,
  type Checkpoint,
  checkpointPath,
  checkpointSigningBytes,
  ReceiptBuilder,
  receiptSigningText,
  SignedLineBuffer,
  type UnsignedCheckpoint,
} from './format.js';
import { fileLines } from '../experiment/results-stream.js';
import { readSignedLine, type SignedLine } from './lines.js';
import { PastCheckpoint, type PastCheckpointReport } from './past-checkpoint.js';
import { planMismatch } from './plan-check.js';
import { chainOrigin, treeHeadSigner } from './tree-head.js';

export interface SignResultsOptions {
  /** The signing key (attest's `readKeyFile`, from `witness keys new`); an Ed25519 key, since others verify with its public half. */
  key: KeyMaterial;
  /** Sign every line on its own as well (one Ed25519 signature per line; docs/results-format.md). */
  lineSignatures?: boolean;
  /** Longest time between checkpoints while the sweep runs, ms (default 1000). */
  checkpointMs?: number;
}

/** Where a sweep's records go: the lines already there (to skip) and an append. */
export interface ResultsSink {
  readonly finished: FinishedRuns;
  /** Bytes of a torn last line cut before appending. */
  readonly repairedBytes: number;
  /** Signed files: what the resume did with the lines past the last checkpoint (past-checkpoint.ts); settled as the sweep writes. */
  pastCheckpoint?(): PastCheckpointReport;
  write(record: RunRecord): void;
  /** Appends the lines of rule-based runs played on a worker thread (each `JSON.stringify` of its record). */
  writeChunk(chunk: PlayedChunk): void;
  close(): void;
}

export interface SignedResultsOptions {
  experiment: Experiment;
  shard?: Shard;
  /** The runs of this sweep (its shard): the lazy plan, so a resume holds its cells, not its runs. */
  plan: Plan;
  sign: SignResultsOptions;
  provenance?: AgentProvenance;
  /** Called with the record of each line already in the file, in file order, as the resume reads it. */
  onExisting?: (record: RunRecord) => void;
}

/** attest's one Signer, with the deployer the checkpoint names. */
type _Signer = Signer & { deployer: string };

interface _Chain {
  count: number;
  head: string | null;
  /** RFC 6962 tree over the chain's covered lines, each leaf its receipt digest (what `head` names). */
  tree: MerkleFrontier;
  /** The seq of the last line (-1 before the first): lines are in plan order. */
  seq: number;
}

export function openSignedResults(path: string, options: SignedResultsOptions): ResultsSink {
  const signer: _Signer = {
    ...ed25519Signer(options.sign.key, 'sign a results file'),
    deployer: options.sign.key.deployer,
  };
  const lineSignatures = options.sign.lineSignatures ?? false;
  const base = _baseCheckpoint(options, signer, lineSignatures);
  const finished = new FinishedRuns(options.plan);
  const past = new PastCheckpoint();
  const chain = _resume(path, checkpointPath(path), base, signer, options, finished, past);
  return new _SignedSink(path, finished, chain, past, base, signer, options);
}

/** Appends signed lines to the chain and keeps its checkpoint current (see the module comment). */
class _SignedSink implements ResultsSink {
  readonly #writer: JsonlWriter;
  readonly #receipts: ReceiptBuilder;
  readonly #line = new SignedLineBuffer();
  readonly #cells = new Map<string, string>();
  readonly #cpPath: string;
  readonly #treeHead: (size: number, rootHex: string) => string;
  readonly #every: number;
  #last = 0;
  #closed = false;
  /** The digest of the receipt `#signLine` built last. */
  #digest = '';

  constructor(
    path: string,
    readonly finished: FinishedRuns,
    private readonly chain: _Chain,
    private readonly past: PastCheckpoint,
    private readonly base: ReturnType<typeof _baseCheckpoint>,
    private readonly signer: _Signer,
    private readonly options: SignedResultsOptions,
  ) {
    this.#cpPath = checkpointPath(path);
    this.#every = options.sign.checkpointMs ?? 1000;
    this.#receipts = new ReceiptBuilder(ENGINE, signer.kid);
    // An Ed25519 key: ed25519Signer refused any other when the file opened.
    this.#treeHead = treeHeadSigner(options.sign.key as SigningKey, chainOrigin(base.experiment, base.shard));
    this.#writer = openJsonlWriter(path, { fsync: 'batch' });
    try {
      this.#checkpoint();
    } catch (error) {
      this.#writer.close();
      throw error;
    }
  }

  get repairedBytes(): number {
    return this.#writer.repairedBytes;
  }

  pastCheckpoint(): PastCheckpointReport {
    return this.past.report();
  }

  write(record: RunRecord): void {
    // A sweep in one thread writes each run as it ends: one line, one write, no arrays.
    const prompts = record.llm?.prompts.hash ?? null;
    const line = this.#signLine(record, JSON.stringify(record), prompts, this.chain.head);
    this.#writer.appendLineBytes(line);
    this.#advance(this.#digest);
    this.#checkpointIfDue();
  }

  writeChunk(chunk: PlayedChunk): void {
    const bytes: Buffer[] = [];
    const digests: string[] = [];
    let head = this.chain.head;
    for (let k = 0; k < chunk.runs.length; k++) {
      const run = chunk.runs[k] as (typeof chunk.runs)[number];
      const id = { id: run.id, seq: run.seq, seed: run.seed, cell: run.cellKey };
      bytes.push(Buffer.from(this.#signLine(id, chunk.line(k), null, head))); // a copy: the next line reuses the buffer
      head = this.#digest;
      digests.push(head);
    }
    if (bytes.length === 0) return;
    // A chunk of runs played by workers goes out in one write, as the unsigned file's chunks do.
    this.#writer.appendLineBytes(Buffer.concat(bytes));
    for (const digest of digests) this.#advance(digest);
    this.#checkpointIfDue();
  }

  /**
   * The signed line of one run, after `prev` in the chain (valid until the next call);
   * its receipt's digest is left in `#digest`. A line enters the chain (`#advance`) only
   * once the file holds it: a line the file does not hold never enters the chain a
   * checkpoint signs.
   */
  #signLine(run: _Run, text: string, prompts: string | null, prev: string | null): Buffer {
    const signLine = this.base.line_signatures;
    const contentSha256 = this.#line.content(text);
    if (this.past.lines > 0) this.past.replayed(run.seq, contentSha256);
    const signing = this.#receipts.signingText({
      run: run.id,
      seq: run.seq,
      seed: run.seed,
      cellText: _cached(this.#cells, run.cell),
      contentSha256,
      prompts,
      prev,
      signedAt: signLine ? isoTime(Date.now()) : undefined,
    });
    const receipt = ReceiptBuilder.receipt(
      signing,
      signLine ? this.signer.sign(Buffer.from(signing, 'utf8')) : undefined,
    );
    // Hex straight from the hash: a Buffer digest cost more than the hashing (core/hash.ts).
    this.#digest = sha256Hex(signing);
    return this.#line.line(receipt);
  }

  /** Moves the chain on by one line the file now holds. */
  #advance(digest: string): void {
    this.chain.tree.appendHexData(digest);
    this.chain.count++;
    this.chain.head = digest;
  }

  #checkpointIfDue(): void {
    if (Date.now() - this.#last >= this.#every) this.#checkpoint();
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    try {
      this.#checkpoint();
    } finally {
      this.#writer.close();
    }
  }

  /** Syncs what the checkpoint will name (the cassette, then the lines), then replaces it. */
  #checkpoint(): void {
    const cassette = this.options.provenance?.cassette;
    cassette?.sync();
    this.#writer.sync();
    const root = this.chain.tree.root().toString('hex');
    const unsigned: UnsignedCheckpoint = {
      ...this.base,
      cassette: cassette ? { role: cassette.role, ...cassette.digest() } : null,
      count: this.chain.count,
      head: this.chain.head,
      note: this.#treeHead(this.chain.count, root),
      root,
      signed_at: isoTime(Date.now()),
    };
    writeCheckpoints(this.#cpPath, [signCheckpoint(unsigned, this.signer)]);
    this.#last = Date.now();
  }
}

/** What a line's receipt names of its run. */
type _Run = Pick<RunRecord, 'id' | 'seq' | 'seed' | 'cell'>;

/** The canonical text of a cell label, computed once per cell. */
function _cached(cells: Map<string, string>, cell: string): string {
  let text = cells.get(cell);
  if (text === undefined) {
    text = canonicalize(cell);
    cells.set(cell, text);
  }
  return text;
}

/** The checkpoint fields that do not change while the sweep runs. */
function _baseCheckpoint(
  options: SignedResultsOptions,
  signer: _Signer,
  lineSignatures: boolean,
): Omit<UnsignedCheckpoint, 'cassette' | 'count' | 'head' | 'signed_at'> {
  return {
    v: 1,
    type: CHECKPOINT_TYPE,
    experiment: options.experiment as unknown as Record<string, unknown>,
    shard: options.shard ? { index: options.shard.index, count: options.shard.count } : null,
    engine: ENGINE,
    prompts: options.provenance?.prompts ?? null,
    line_signatures: lineSignatures,
    key_id: signer.kid,
    deployer: signer.deployer,
  };
}

/**
 * Reads back what an earlier session of this sweep wrote, refusing anything it
 * cannot vouch for: another sweep's file, another key, a checkpoint it did not sign,
 * a line that fails its own checks. Lines past the last checkpoint are cut from the
 * file and their runs left to play again (past-checkpoint.ts). Returns the chain to
 * continue: the checkpoint's.
 */
function _resume(
  path: string,
  cpPath: string,
  base: ReturnType<typeof _baseCheckpoint>,
  signer: _Signer,
  options: SignedResultsOptions,
  finished: FinishedRuns,
  past: PastCheckpoint,
): _Chain {
  const chain: _Chain = { count: 0, head: null, tree: new MerkleFrontier(), seq: -1 };
  const existing = readCheckpoints(cpPath);
  if (!existing) {
    if (_lines(path).next().done === false)
      throw new WitnessError(
        'USAGE',
        `${path} already holds results but has no checkpoint (${cpPath}): it was not written with --sign, or its checkpoint was removed. Sign a new file (--out NEW.jsonl).`,
      );
    return chain;
  }
  const previous = _sameSweep(existing.checkpoints, base, signer, cpPath);
  let covered: _Chain = { ...chain };
  let coveredBytes = 0;
  // Streamed, one line at a time: a resume holds the plan's bits, not the file.
  for (const { line, raw, end } of _lines(path)) {
    const read = _continueWith(chain, raw, line, signer, options, base.line_signatures);
    if (typeof read === 'string') _refuseLine(path, line, read);
    const { record, receipt } = read;
    // With --sign-lines every line carries its own signature, checked above: the key's holder wrote it.
    if (chain.count > previous.count && !base.line_signatures) {
      // Signed by no one yet: checked above (a broken file is still refused), never vouched for.
      past.add(line, record, receipt.content_sha256);
      continue;
    }
    if (chain.count === previous.count && chain.head !== previous.head)
      _refuseLine(path, line, `the chain's head here is not the one its checkpoint signed (${previous.count} lines)`);
    chain.tree.appendHexData(read.digest);
    if (
      chain.count === previous.count &&
      previous.root !== undefined &&
      chain.tree.root().toString('hex') !== previous.root
    )
      _refuseLine(
        path,
        line,
        `the Merkle root of the first ${previous.count} lines is not the one its checkpoint signed`,
      );
    covered = { ...chain };
    coveredBytes = end;
    finished.mark(record.seq, record.outcome);
    // A reader of results (the summary, `witness report`) takes the line only as a valid record.
    const valid = options.onExisting && asRecord(record);
    if (valid) options.onExisting?.(valid);
  }
  if (chain.count < previous.count)
    throw new WitnessError(
      'INVALID_INPUT',
      `${path} has ${chain.count} lines, and its checkpoint signed ${previous.count}: lines were removed. Check it with: witness verify ${path} --keys DIR.json`,
    );
  if (past.lines > 0) _cutAfter(path, coveredBytes);
  return covered;
}

/** Cuts the file after its first `bytes` bytes (the lines its checkpoint covers). */
function _cutAfter(path: string, bytes: number): void {
  try {
    truncateSync(path, bytes);
  } catch (cause) {
    throw new WitnessError('IO', `Cannot cut the unsigned lines from ${path}: ${(cause as Error).message}.`, { cause });
  }
}

/** The complete, non-empty lines of a results file (none when there is no file), read as a stream, each with the byte offset after its newline. */
function* _lines(path: string): Generator<{ line: number; raw: string; end: number }> {
  if (!existsSync(path)) return;
  let end = 0;
  for (const l of fileLines(path)) {
    end += Buffer.byteLength(l.raw, 'utf8') + 1;
    if (l.raw !== '') yield { ...l, end };
  }
}

/** Checks one line read back and extends `chain` with it; returns the line read, or what is wrong instead. */
function _continueWith(
  chain: _Chain,
  raw: string,
  line: number,
  signer: _Signer,
  options: SignedResultsOptions,
  lineSignatures: boolean,
): SignedLine | string {
  const read = readSignedLine(raw, line);
  if (!read.ok) return `${read.problem.code}: ${read.problem.message}`;
  const { record, receipt, unsignedReceipt, digest } = read.value;
  if (receipt.key_id !== signer.kid) return `the line names key ${receipt.key_id}, not ${signer.kid}`;
  if (receipt.prev !== chain.head) return 'its prev is not the digest of the line before (CHAIN_BROKEN)';
  // A run's id is a hash of its cell, index and seed: the plan's run at this seq is the only one it can be.
  const planned = options.plan.at(record.seq);
  const outside = planMismatch(record, planned?.id === record.id ? planned : undefined, options.experiment.name);
  if (outside !== undefined) return outside;
  if (record.seq <= chain.seq) return `run ${record.id} is a duplicate or out of plan order`;
  if (lineSignatures && !signer.verify(Buffer.from(receiptSigningText(unsignedReceipt), 'utf8'), receipt.sig ?? ''))
    return 'its signature does not verify';
  chain.count++;
  chain.head = digest;
  chain.seq = record.seq;
  return read.value;
}

function _refuseLine(path: string, line: number, message: string): never {
  throw new WitnessError(
    'INVALID_INPUT',
    `${path} line ${line}: ${message}; the file changed after it was written, so this sweep will not sign over it. Check it with: witness verify ${path} --keys DIR.json`,
  );
}

/** The earlier checkpoint, when it is this sweep's own (same experiment, shard, key, options), signed by this key. */
function _sameSweep(
  checkpoints: readonly Checkpoint[],
  base: ReturnType<typeof _baseCheckpoint>,
  signer: _Signer,
  cpPath: string,
): Checkpoint {
  if (checkpoints.length !== 1)
    throw new WitnessError(
      'USAGE',
      `${cpPath} holds ${checkpoints.length} checkpoints: the file is a merge of shards and cannot be resumed; resume each shard's own file, then merge again.`,
    );
  const cp = checkpoints[0] as Checkpoint;
  const refuse = (what: string, fix: string) => {
    throw new WitnessError('USAGE', `The results file's checkpoint (${cpPath}) was signed for ${what}; ${fix}`);
  };
  if (canonicalize(cp.experiment) !== canonicalize(base.experiment))
    refuse(
      `another experiment ("${String(cp.experiment.name)}", or the same name with other settings)`,
      'write this sweep to another file with --out.',
    );
  if (canonicalize(cp.shard) !== canonicalize(base.shard))
    refuse(
      cp.shard ? `shard ${cp.shard.index}/${cp.shard.count}` : 'the whole sweep',
      'give the same --shard, or another --out.',
    );
  if (cp.key_id !== signer.kid) refuse(`key ${cp.key_id}`, `resume it with that key (this one is ${signer.kid}).`);
  if (cp.line_signatures !== base.line_signatures)
    refuse(
      cp.line_signatures ? 'signed lines (--sign-lines)' : 'lines covered by checkpoints only (no --sign-lines)',
      'resume it with the same signing options.',
    );
  if (canonicalize(cp.prompts) !== canonicalize(base.prompts))
    refuse(
      `prompt pack ${cp.prompts ? `"${cp.prompts.name}" (${cp.prompts.hash.slice(0, 12)}…)` : 'none'}`,
      'resume it with the same --prompts and --prompt-cue.',
    );
  if (!signer.verify(checkpointSigningBytes(cp), cp.sig)) {
    throw new WitnessError(
      'INVALID_INPUT',
      `The checkpoint ${cpPath} does not verify under key ${signer.kid}: it was changed after it was signed. Check it with: witness verify.`,
    );
  }
  return cp;
}
