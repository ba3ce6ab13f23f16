/**
 * @module
 * `verifyResults`: is this signed results file exactly what its signers wrote? The
 * checkpoints (verify-checkpoints.ts) give the plan and one chain per shard; then
 * every line is checked alone (content digest, receipt = line), in its chain (prev,
 * key, its own signature when lines are signed, covered by the checkpoint), and
 * against the plan (in it, once, in plan order); finally every planned run must have
 * a line and every chain must end where its checkpoint says. Each problem names its
 * line and has its own reason code (reasons.ts).
 */
import type { KeyDirectory } from '../../attest/key-directory.js';
import type { RevocationPolicy } from '../../attest/key-status.js';
import { existsSync } from 'node:fs';
import { readNamedFile } from '../../attest/files.js';
import { LowestLinesPerCode } from '../../core/cap-per-code.js';
import { leafHash, MerkleFrontier } from '../../core/tlog/merkle.js';
import { canonicalizeWithout } from '../../core/canonical-json.js';
import { WitnessError } from '../../core/errors.js';
import { hashFileInto } from '../../core/hash.js';
import type { PlannedRun } from '../experiment/plan.js';
import { fileLines } from '../experiment/results-stream.js';
import { MAX_CHECKPOINT_FILE_BYTES, parseCheckpoints } from './checkpoint.js';
import { type Checkpoint, checkpointPath, type LineReceipt, receiptDigest, receiptSigningText } from './format.js';
import { readSignedLine, type SignedLine } from './lines.js';
import { planMismatch } from './plan-check.js';
import { problem, RESULTS_REASON_CODES, type ResultsProblem } from './reasons.js';
import { finishKeptHeads, type KeptChain, keptHeads } from './verify-tree-heads.js';
import {
  type CheckedCheckpoints,
  checkCheckpoints,
  checkSignature,
  type KeyCheckOptions,
  type ProblemSink,
} from './verify-checkpoints.js';

/** At most this many problems of one code are listed; one more line counts the rest. */
export const MAX_PROBLEMS_PER_CODE = 20;

export interface VerifyResultsOptions {
  /** Your own key directory: the only keys trusted. */
  directory: KeyDirectory;
  /** The checkpoints file (default: RESULTS.checkpoint.json beside the results). */
  checkpoints?: string;
  /**
   * Tree heads kept from earlier (what `witness sim checkpoint` printed): the file must be
   * each one's log or an append-only extension of it (TRUNCATED, INCONSISTENT).
   */
  keptHeads?: string;
  /** A cassette to check against the digest a checkpoint signed (recorded or replayed). */
  cassette?: string;
  revocation?: RevocationPolicy;
  /**
   * Accept a file that holds only some shards of its sharding (one shard's file, or a
   * merge of some): valid as those shards, with `partial` true. Without it a missing
   * shard is SHARD_MISSING — the plan is the whole sweep, so a file cut to one shard
   * is not the sweep.
   */
  allowPartial?: boolean;
  /** Time of the verification, ms (default now): matters for `revocation: 'all'`. */
  now?: number;
}

export interface ResultsVerifyResult {
  ok: boolean;
  type: 'sim-results';
  file: string;
  checkpoints: string;
  experiment: string | null;
  /** Shards the file holds, of how many, and those of the sharding it does not hold; null for a whole sweep. */
  shards: { count: number; present: number[]; missing: number[] } | null;
  /** Valid as the shards present only (`allowPartial`, with shards missing). */
  partial: boolean;
  lines: number;
  /** Planned runs (of the declared shards) and those with a line. */
  planned: number;
  runs: number;
  /** Signatures verified (checkpoints, and lines when signed). */
  signatures: number;
  /** The kept tree heads the file was held to (`keptHeads`), the largest size per chain; with `ok`, each chain extends its own. */
  anchored: { shard: number | null; origin: string; size: number }[];
  problems: ResultsProblem[];
}

interface _Chain {
  checkpoint: Checkpoint;
  count: number;
  head: string | null;
  /** RFC 6962 tree over the chain's lines (leaf: each receipt digest), up to the checkpoint's count. */
  tree: MerkleFrontier;
  uncovered: number;
  firstUncovered?: number;
}

/**
 * Verifies a signed results file against your key directory (docs/results-format.md,
 * "Verifying"). The file is read as a stream and the plan computed run by run, so
 * memory is the plan's cells plus 4 bytes per planned run (the line each was seen on),
 * not the file.
 */
export function verifyResults(file: string, options: VerifyResultsOptions): ResultsVerifyResult {
  const cpFile = options.checkpoints ?? checkpointPath(file);
  const problems = _problemList();
  const base = { type: 'sim-results' as const, file, checkpoints: cpFile };
  const keys: KeyCheckOptions = {
    directory: options.directory,
    revocation: options.revocation ?? 'from-revoked-at',
    now: options.now ?? Date.now(),
  };
  if (!options.checkpoints && !existsSync(cpFile)) {
    problems.push(
      problem(
        'CHECKPOINT_MISSING',
        `${cpFile} does not exist: nothing signed this file (a signed sweep, witness sim --sign KEY, writes it beside the results; give it with --checkpoint if it was moved)`,
      ),
    );
    // Each line is still read alone, so an unsigned file says so.
    const lines = _eachLine(file, problems, (line, raw) => {
      const read = readSignedLine(raw, line);
      if (!read.ok) problems.push(read.problem);
    });
    return _result(base, { problems, lines });
  }
  const read = parseCheckpoints(
    readNamedFile(cpFile, 'results checkpoint', {
      whenMissing: 'A signed sweep (witness sim --sign KEY) writes it beside the results.',
      maxBytes: MAX_CHECKPOINT_FILE_BYTES,
    }).toString('utf8'),
    cpFile,
  );
  if (!read.ok) {
    problems.push(problem(read.code, read.message));
    return _result(base, { problems, lines: _eachLine(file, { push: () => 0 }, () => {}) });
  }
  // Signed by keys the directory holds none of: every line would say UNKNOWN_KEY. One
  // line naming the keys says what is wrong (the wrong directory, or an untrusted signer).
  const kids = [...new Set(read.file.checkpoints.map((cp) => cp.key_id))];
  if (kids.length > 0 && kids.every((kid) => !options.directory.get(kid))) {
    problems.push(
      problem(
        'UNKNOWN_KEY',
        `the file is signed by key ${kids.join(', ')}, which your key directory does not hold: give the directory that trusts its signer, or add the signer's public key with witness keys add`,
      ),
    );
    return _result(base, { problems, lines: _eachLine(file, { push: () => 0 }, () => {}) });
  }
  const checked = checkCheckpoints(read.file.checkpoints, keys, problems);
  const kept = options.keptHeads
    ? keptHeads(options.keptHeads, checked.chains, keys, problems)
    : new Map<number, KeptChain>();
  const state = new _LineChecker(checked, keys, problems, kept, options.checkpoints);
  const lines = _eachLine(file, problems, (line, raw) => state.check(line, raw));
  state.finish();
  finishKeptHeads(kept, problems);
  if (options.cassette) _checkCassette(options.cassette, read.file.checkpoints, problems);
  const present = [...checked.chains.keys()].sort((a, b) => a - b);
  const missing = Array.from({ length: checked.shardCount }, (_, i) => i + 1).filter((i) => !checked.chains.has(i));
  const shards = read.file.checkpoints[0]?.shard ? { count: checked.shardCount, present, missing } : null;
  if (missing.length > 0 && !options.allowPartial)
    problems.push(problem('SHARD_MISSING', _shardsMissing(present, missing, checked.shardCount)));
  const result = _result(base, {
    problems,
    lines,
    experiment: checked.experiment?.name ?? null,
    shards,
    planned: checked.plan.size,
    runs: state.seenPlanned,
    signatures: checked.signatures + state.signatures,
    anchored: [...kept].map(([shard, chain]) => ({
      shard: shards ? shard : null,
      origin: chain.origin,
      size: chain.check.largest,
    })),
  });
  return { ...result, partial: result.ok && missing.length > 0 };
}

function _shardsMissing(present: number[], missing: number[], count: number): string {
  const list = (shards: number[]) => `${shards.length === 1 ? 'shard' : 'shards'} ${shards.join(', ')} of ${count}`;
  return `${list(missing)} ${missing.length === 1 ? 'is' : 'are'} not in this file, which holds ${list(present)}: it is part of the sweep, not the sweep. Merge every shard's file (witness sim merge), or give --allow-partial to accept these shards alone`;
}

/**
 * Hands each non-empty line of the file to `check`, one at a time; a torn last line
 * is a problem. Returns how many non-empty complete lines there were.
 */
function _eachLine(file: string, problems: ProblemSink, check: (line: number, raw: string) => void): number {
  if (!existsSync(file))
    throw new WitnessError('NOT_FOUND', `Cannot read the results file ${file}: it does not exist.`);
  const lines = fileLines(file);
  let count = 0;
  let last = 0;
  for (let next = lines.next(); ; next = lines.next()) {
    if (next.done) {
      if (next.value.tornTail)
        problems.push(
          problem(
            'MALFORMED',
            'the last line is cut off (a write torn by a crash): rerun the sweep to repair and finish it',
            last + 1,
          ),
        );
      return count;
    }
    last = next.value.line;
    if (next.value.raw === '') continue;
    count++;
    check(next.value.line, next.value.raw);
  }
}

/** Lines in file order, then file-level problems; at most MAX_PROBLEMS_PER_CODE of each code, the rest counted. */
function _problemList(): LowestLinesPerCode<ResultsProblem> {
  return new LowestLinesPerCode<ResultsProblem>(MAX_PROBLEMS_PER_CODE, (code, more) =>
    problem(code, `and ${more} more lines with this problem (${RESULTS_REASON_CODES[code]})`),
  );
}

function _result(
  base: Pick<ResultsVerifyResult, 'type' | 'file' | 'checkpoints'>,
  r: Partial<Omit<ResultsVerifyResult, 'problems'>> & { problems: LowestLinesPerCode<ResultsProblem> },
): ResultsVerifyResult {
  const problems = r.problems.items();
  return {
    ok: problems.length === 0,
    partial: false,
    ...base,
    experiment: r.experiment ?? null,
    shards: r.shards ?? null,
    lines: r.lines ?? 0,
    planned: r.planned ?? 0,
    runs: r.runs ?? 0,
    signatures: r.signatures ?? 0,
    anchored: r.anchored ?? [],
    problems,
  };
}

/** The per-line checks, with the state they need: each chain's head, the runs seen, the last seq. */
class _LineChecker {
  readonly #chains = new Map<number, _Chain>();
  /** The line each planned run was first seen on, by seq (0: not seen): 4 bytes a run. */
  readonly #seenAt: Uint32Array;
  /** Runs seen that are not the plan's run at their seq (few in any file a sweep wrote), by id. */
  readonly #strangers = new Map<string, number>();
  /** Lines of shards no checkpoint covers, by shard: how many, and the first. */
  readonly #uncovered = new Map<number, { lines: number; first: number; run: string; seq: number }>();
  /** The line of the last planned run seen, in file order. */
  #lastPlannedLine = 0;
  #lastSeq = -1;
  signatures = 0;
  seenPlanned = 0;

  constructor(
    private readonly checked: CheckedCheckpoints,
    private readonly keys: KeyCheckOptions,
    private readonly problems: ProblemSink,
    private readonly kept: ReadonlyMap<number, KeptChain>,
    /** The checkpoint file the caller gave (--checkpoint), if not the one beside the results. */
    private readonly given?: string,
  ) {
    for (const [shard, checkpoint] of checked.chains) {
      const chain = { checkpoint, count: 0, head: null, tree: new MerkleFrontier(), uncovered: 0 };
      this.#chains.set(shard, chain);
      if (checkpoint.count === 0) this.#checkRoot(chain, undefined);
    }
    this.#seenAt = new Uint32Array(checked.plan.end);
  }

  check(line: number, raw: string): void {
    const read = readSignedLine(raw, line);
    if (!read.ok) {
      this.problems.push(read.problem);
      const id = read.receipt?.run ?? read.id;
      const seq = read.receipt?.seq ?? read.seq;
      if (id !== undefined && this.#seenOn(id, seq) === undefined) this.#markSeen(id, seq, line);
      // A readable receipt keeps the chain going, so one edited line is one problem.
      if (read.receipt) this.#link(line, read.receipt, _digestOf(read.receipt), this.#ownKey(line, read.receipt));
      return;
    }
    const inPlan = this.#checkPlan(read.value);
    const ownKey = this.#ownKey(line, read.value.receipt, read.value);
    this.#link(line, read.value.receipt, read.value.digest, inPlan && ownKey);
  }

  /** The plan's run `id` at `seq`, when it is one. */
  #planned(id: string, seq: number | undefined): PlannedRun | undefined {
    const planned = seq === undefined ? undefined : this.checked.plan.at(seq);
    return planned?.id === id ? planned : undefined;
  }

  /** The line run `id` (claiming `seq`) was first seen on. */
  #seenOn(id: string, seq: number | undefined): number | undefined {
    const planned = this.#planned(id, seq);
    return planned ? this.#seenAt[planned.seq] || undefined : this.#strangers.get(id);
  }

  #markSeen(id: string, seq: number | undefined, line: number): void {
    const planned = this.#planned(id, seq);
    if (!planned) return void this.#strangers.set(id, line);
    this.#seenAt[planned.seq] = line;
    this.seenPlanned++;
    this.#lastPlannedLine = line;
  }

  /** False for a line that does not belong here at all (another plan's run, or a run already seen). */
  #checkPlan({ record, line }: SignedLine): boolean {
    const other = this.#seenOn(record.id, record.seq);
    if (other !== undefined) {
      this.problems.push(
        problem('DUPLICATE_RUN', `run ${record.id} (seq ${record.seq}) is already on line ${other}`, line),
      );
      return false;
    }
    this.#markSeen(record.id, record.seq, line);
    if (!this.checked.experiment) return true; // no plan to compare with (reported once, from the checkpoints)
    const atSeq = this.checked.plan.at(record.seq);
    // The sweep's own run, in a shard no checkpoint here covers: one CHECKPOINT_MISSING for the shard says it (#chainOf).
    if (!atSeq && this.checked.plan.sweepAt(record.seq)?.id === record.id) return false;
    if (atSeq && atSeq.id !== record.id) {
      this.problems.push(
        problem(
          'NOT_IN_PLAN',
          `run ${record.id} (seq ${record.seq}, cell ${record.cell}) is not the run the plan of experiment "${this.checked.experiment.name}" has at seq ${record.seq} (${atSeq.id})`,
          line,
        ),
      );
      return false;
    }
    const outside = planMismatch(record, atSeq, this.checked.experiment.name);
    if (outside) {
      this.problems.push(problem('NOT_IN_PLAN', outside, line));
      return false;
    }
    if (record.seq < this.#lastSeq)
      this.problems.push(
        problem(
          'OUT_OF_ORDER',
          `run ${record.id} (seq ${record.seq}) comes after seq ${this.#lastSeq}; lines are in plan order`,
          line,
        ),
      );
    this.#lastSeq = Math.max(this.#lastSeq, record.seq);
    return true;
  }

  /**
   * Adds the line to its shard's chain: prev must be the chain's head, and the
   * checkpoint must cover it. A line that does not belong (`fits` false: another
   * plan's, a duplicate, another key's) is left out of the chain unless its prev
   * fits, so an inserted line is one problem, not a broken chain from there on.
   */
  #link(line: number, receipt: LineReceipt, digest: string, fits: boolean): void {
    const chain = this.#chainOf(line, receipt);
    if (!chain) return;
    if (receipt.prev !== chain.head) {
      if (!fits) return;
      this.problems.push(
        problem(
          'CHAIN_BROKEN',
          `the receipt's prev is not the digest of the line before it in its chain${chain.count === 0 ? ' (the first line of a chain has prev null)' : ''}: a line was removed, inserted or moved here, or the line before it was edited (its content and receipt digest recomputed without the key)`,
          line,
        ),
      );
    }
    chain.count++;
    chain.head = digest;
    const kept = this.kept.get(this.#shardOf(receipt));
    if (chain.count <= chain.checkpoint.count || kept) {
      const leaf = leafHash(Buffer.from(digest, 'hex'));
      if (chain.count <= chain.checkpoint.count) chain.tree.appendLeafHash(leaf);
      kept?.add(leaf, line);
    }
    if (chain.count === chain.checkpoint.count) {
      if (digest !== chain.checkpoint.head)
        this.problems.push(
          problem(
            'CHECKPOINT_MISMATCH',
            `the chain's line ${chain.count} is the last one its checkpoint signed, and its digest is not the signed head`,
            line,
          ),
        );
      else this.#checkRoot(chain, line);
    }
    if (chain.count > chain.checkpoint.count && chain.uncovered++ === 0) chain.firstUncovered = line;
  }

  /** The checkpoint's Merkle root (when it signs one) is the tree of the lines it covers. */
  #checkRoot(chain: _Chain, line: number | undefined): void {
    const signed = chain.checkpoint.root;
    if (signed !== undefined && chain.tree.root().toString('hex') !== signed)
      this.problems.push(
        problem(
          'CHECKPOINT_MISMATCH',
          `the Merkle root of the chain's first ${chain.count} lines is not the root its checkpoint signed`,
          line,
        ),
      );
  }

  #shardOf(receipt: LineReceipt): number {
    return (receipt.seq % this.checked.shardCount) + 1;
  }

  #chainOf(line: number, receipt: LineReceipt): _Chain | undefined {
    const shard = this.#shardOf(receipt);
    const chain = this.#chains.get(shard);
    if (!chain && this.checked.experiment) {
      const seen = this.#uncovered.get(shard);
      if (seen) seen.lines++;
      else this.#uncovered.set(shard, { lines: 1, first: line, run: receipt.run, seq: receipt.seq });
    }
    return chain;
  }

  /** One problem per shard that has lines and no checkpoint: a removed checkpoint, or lines copied in. */
  #reportUncovered(): void {
    const n = this.checked.shardCount;
    for (const [shard, u] of this.#uncovered)
      this.problems.push(
        problem(
          'CHECKPOINT_MISSING',
          `run ${u.run} (seq ${u.seq}) belongs to shard ${shard}/${n}, which no checkpoint of this file covers${
            u.lines > 1 ? `, as do ${u.lines - 1} more lines after it` : ''
          }: shard ${shard}'s checkpoint was removed from the checkpoint file, or these lines were copied in from another file; none of them is evidence`,
          u.first,
        ),
      );
  }

  /** The line's key is its chain's (and its own signature verifies, when lines are signed); false for a stranger's key. */
  #ownKey(line: number, receipt: LineReceipt, whole?: SignedLine): boolean {
    const checkpoint = this.#chains.get((receipt.seq % this.checked.shardCount) + 1)?.checkpoint;
    if (!checkpoint) return false;
    if (!this.keys.directory.get(receipt.key_id)) {
      this.problems.push(
        problem('UNKNOWN_KEY', `the line is signed by key ${receipt.key_id}, which is not in your key directory`, line),
      );
      return false;
    }
    if (receipt.key_id !== checkpoint.key_id) {
      this.problems.push(
        problem(
          'WRONG_KEY',
          `the line names key ${receipt.key_id}; its chain's checkpoint was signed by ${checkpoint.key_id}`,
          line,
        ),
      );
      return false;
    }
    if (!checkpoint.line_signatures && receipt.sig === undefined) return true;
    if (receipt.sig === undefined || receipt.signed_at === undefined) {
      this.problems.push(
        problem(
          'SIGNATURE_MISSING',
          'the checkpoint says every line is signed; this one carries no sig and signed_at',
          line,
        ),
      );
      return true;
    }
    // A line that failed its own checks: its signature would vouch for nothing more.
    if (!whole) return true;
    const message = Buffer.from(receiptSigningText(whole.unsignedReceipt), 'utf8');
    if (
      checkSignature(
        receipt.key_id,
        checkpoint.deployer,
        Date.parse(receipt.signed_at),
        message,
        receipt.sig,
        this.keys,
        this.problems,
        'the line',
        line,
      )
    )
      this.signatures++;
    return true;
  }

  finish(): void {
    for (const [shard, chain] of this.#chains) {
      const label = this.checked.shardCount > 1 ? ` of shard ${shard}/${this.checked.shardCount}` : '';
      if (chain.count < chain.checkpoint.count)
        this.problems.push(
          problem(
            'CHECKPOINT_MISMATCH',
            `the checkpoint${label} signed ${chain.checkpoint.count} lines; the file holds ${chain.count} of that chain`,
          ),
        );
      if (chain.uncovered > 0)
        this.problems.push(
          problem(
            'NOT_COVERED',
            `this line and ${chain.uncovered - 1} after it${label} come after the last signed checkpoint (${chain.checkpoint.count} lines): ${
              this.given === undefined
                ? 'the sweep was killed before it signed them; rerun the same command to resume and sign them'
                : `the checkpoint file given (${this.given}) does not sign them: if it is an older copy of the results' own checkpoint file, verify without --checkpoint, and keep what \`witness sim checkpoint\` prints to check a later file extends it`
            }`,
            chain.firstUncovered,
          ),
        );
    }
    this.#reportUncovered();
    this.#reportMissing();
  }

  /**
   * Planned runs with no line, each named at the line where it belongs: before the
   * line of the next planned run (by seq) that has one. Walked in seq order; the runs
   * waiting for that next line are held only as many as the problem list can keep of
   * one line (it keeps the first of each code, in line order), the rest counted.
   */
  #reportMissing(): void {
    const plan = this.checked.plan;
    const waiting: PlannedRun[] = [];
    let more = 0;
    const place = (line: number | undefined) => {
      const where = line === undefined ? 'after the last line' : `before line ${line}`;
      const at = line ?? this.#lastPlannedLine + 1;
      for (const run of waiting)
        this.problems.push(
          problem(
            'RUN_MISSING',
            `run ${run.id} (seq ${run.seq}, ${run.cellKey}, index ${run.index}) has no line; it belongs ${where}`,
            at,
          ),
        );
      // Past the list's cap for this line: counted, never listed, so their text is not made.
      for (; more > 0; more--) this.problems.push(problem('RUN_MISSING', '', at));
      waiting.length = 0;
    };
    for (let seq = 0; seq < plan.end; seq++) {
      const seen = this.#seenAt[seq]!;
      if (seen > 0) {
        if (waiting.length > 0) place(seen);
        continue;
      }
      const run = plan.at(seq);
      if (!run) continue;
      if (waiting.length < MAX_PROBLEMS_PER_CODE) waiting.push(run);
      else more++;
    }
    if (waiting.length > 0) place(undefined);
  }
}

function _digestOf(receipt: LineReceipt): string {
  return receiptDigest(canonicalizeWithout(receipt, 'sig').without);
}

function _checkCassette(path: string, checkpoints: readonly Checkpoint[], problems: ProblemSink): void {
  const signed = checkpoints.filter((cp) => cp.cassette !== null);
  if (signed.length === 0)
    return void problems.push(
      problem(
        'CASSETTE_MISMATCH',
        'no checkpoint of this file signs a cassette: it was not recorded with --record nor replayed from a cassette',
      ),
    );
  const matches = signed.some((cp) => {
    const want = cp.cassette as NonNullable<Checkpoint['cassette']>;
    const got = hashFileInto(path, undefined, want.bytes).digest();
    return (
      got.bytes === want.bytes &&
      got.sha256 === want.sha256 &&
      (want.role === 'recorded' || hashFileInto(path).digest().bytes === want.bytes)
    );
  });
  if (!matches)
    problems.push(
      problem(
        'CASSETTE_MISMATCH',
        `${path} is not the cassette a checkpoint signed: ${signed.map((cp) => `${cp.cassette?.role} ${cp.cassette?.bytes} bytes, sha256 ${cp.cassette?.sha256.slice(0, 12)}…`).join('; ')}`,
      ),
    );
}
