/**
 * @module
 * The call log against checkpoints the verifier kept (`verify --checkpoint FILE`): the
 * problem says where the log left them. TRUNCATED names the first missing entry (the
 * checkpoint's size against the log's); INCONSISTENT names the first changed entry —
 * exactly when the kept sizes pin it (two one apart), else the range it lies in and
 * the first entry in that range the log's own checks (chain, receipts) find broken.
 *
 * Why not always exact: a checkpoint is a size and one root, a hash of every entry it
 * covers; no prefix's root can be derived from it, so one checkpoint proves that some
 * entry of those changed, not which. A log rewritten by a holder of the mailbox key
 * re-chains and re-signs every entry after the change, so its own checks see nothing:
 * only more checkpoints (kept as the log grew, all in one file) narrow it.
 */
import { CheckpointCheck, parseCheckpoint, splitNotes, type TreeHead } from '../attest/tlog/index.js';
import type { CallRecord } from './call-log.js';

/** What can be said of one call-log entry: where it is, and its call when readable. */
interface Entry {
  line: number;
  seq?: number;
  what?: string;
}

/** A problem found, or none: the code's lower-case kind, the line it points at (0: the whole log), the message. */
export type AnchorProblem = { kind: 'truncated' | 'inconsistent'; line: number; message: string };

export class CallLogAnchor {
  readonly #check: CheckpointCheck;
  readonly #boundaries: ReadonlySet<number>;
  readonly #entries = new Map<number, Entry>();
  #count = 0;
  #last: Entry | undefined;
  /**
   * `heads`: verified checkpoints of this log (kept, or cosigned by a witness; `origin`
   * names it in messages); `by`: whose they are, as a passing verdict names them
   * (`checkpoint` for the one given, else the witness).
   */
  constructor(
    heads: readonly (Pick<TreeHead, 'size' | 'root'> & { origin?: string })[],
    private readonly store: 'jsonl' | 'sqlite' | 'postgres',
    readonly by: string,
  ) {
    this.#check = new CheckpointCheck(heads);
    this.#boundaries = this.#check.boundaries;
  }

  /** `text`: the kept file (one or more `witness mailbox checkpoint` notes); `vkey`: the mailbox's note verifier key. */
  static fromKept(text: string, vkey: string, store: 'jsonl' | 'sqlite' | 'postgres'): CallLogAnchor {
    const notes = splitNotes(text, 'The checkpoint file', 'give what `witness mailbox checkpoint DIR` printed');
    return new CallLogAnchor(
      notes.map((n) => parseCheckpoint(n, [vkey])),
      store,
      'checkpoint',
    );
  }

  /** The largest checkpoint size this anchor holds the log to. */
  get size(): number {
    return this.#check.largest;
  }

  /** The log's next entry (every stored line that is not blank): where it is, its leaf hash, its record when it parsed. */
  add(line: number, leaf: Uint8Array, record: CallRecord | undefined): void {
    this.#last = _describe(line, record);
    // Kept: the entries at and just before each checkpoint's size (where a change can start or end).
    if (this.#boundaries.has(this.#count) || this.#boundaries.has(this.#count + 1))
      this.#entries.set(this.#count, this.#last);
    this.#count++;
    this.#check.add(leaf);
  }

  /**
   * The problem, if any. `flagged(from, to)`: the first line, within those lines, that
   * the log's own checks report (its kind), if any.
   */
  result(
    flagged: (fromLine: number, toLine: number) => { line: number; kind: string } | undefined,
  ): AnchorProblem | undefined {
    const r = this.#check.result();
    if (r.ok) return undefined;
    if (r.code === 'TRUNCATED') {
      const last = this.#last;
      const next = this.#name({
        line: (last?.line ?? 0) + 1,
        ...(last?.seq !== undefined ? { seq: last.seq + 1 } : {}),
      });
      const intact = r.intact > 0 ? ` A kept checkpoint proves its first ${r.intact} entries unchanged.` : '';
      return {
        kind: 'truncated',
        line: r.firstMissing + 1,
        message: `${r.message.replace(/^The log/, 'The call log')} The first missing entry is call-log ${next}.${intact}`,
      };
    }
    const { from, to } = r.firstChanged;
    const first = this.#entries.get(from);
    if (from === to && first)
      return {
        kind: 'inconsistent',
        line: first.line,
        message: `${_lead(r.message)} The first changed entry is call-log ${this.#name(first, true)}: the kept checkpoints of sizes ${from} and ${r.size} pin it.`,
      };
    const range = first ? ` from call-log ${this.#name(first)}` : '';
    const flag = first ? flagged(first.line, this.#entries.get(to)?.line ?? Number.POSITIVE_INFINITY) : undefined;
    const why = flag
      ? ` The first of them the log's own checks find broken is ${this.store === 'jsonl' ? 'line' : 'row'} ${flag.line} (${flag.kind}).`
      : ` Every entry's receipt and chain link verify, so the log was rewritten by a holder of the mailbox key (a fork); a checkpoint is one root over all ${r.size} entries and cannot say which differs: keep checkpoints as the log grows (append each to the kept file) to narrow it.`;
    return {
      kind: 'inconsistent',
      line: flag?.line ?? 0,
      message: `${_lead(r.message)} The first changed entry is one of entries ${from + 1}–${to + 1}${range}${from > 0 ? ` (a kept checkpoint proves the first ${from} unchanged)` : ''}.${why}`,
    };
  }

  /** `line 4 of calls.jsonl (seq 4, …)` or `seq 4 (row 4, …)`. */
  #name(e: Entry, withCall = false): string {
    const call = withCall && e.what ? `, ${e.what}` : '';
    if (this.store === 'jsonl')
      return `line ${e.line}${e.seq !== undefined ? ` (seq ${e.seq}${call})` : call ? ` (${call.slice(2)})` : ''}`;
    return e.seq !== undefined
      ? `seq ${e.seq} (row ${e.line}${call})`
      : `row ${e.line}${call ? ` (${call.slice(2)})` : ''}`;
  }
}

/** The generic message up to where it says where the change is (said here with lines and calls). */
function _lead(message: string): string {
  return `${message.slice(0, message.indexOf(';'))}.`.replace(/^The log's/, "The call log's");
}

function _describe(line: number, r: CallRecord | undefined): Entry {
  if (r === undefined) return { line };
  const id = r.message_ids[0];
  return { line, seq: r.seq, what: `${r.tool} by ${r.agent}${id ? `, message ${id}` : ''}` };
}
