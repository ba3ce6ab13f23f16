/**
 * @module
 * The call log's hash chain, checked from a compact table of its lines: per line
 * only its number, its `seq`, whether its receipt verified and whether its `prev`
 * names the line before (or the one before that) — never the text. Verify fills
 * the table while streaming the log, so the check needs a few numbers per line
 * whatever the log's size. Kinds: forged, modified, reordered, deleted, corrupt. A
 * legacy (`v: 1`) line after a line in today's format is forged: servers only move forward.
 */
import { GENESIS, lineHash } from './call-log.js';

export type ChainProblemKind = 'forged' | 'modified' | 'reordered' | 'deleted' | 'corrupt';
export type ChainReport = (kind: ChainProblemKind, line: number, message: string) => void;

const GENUINE = 1;
/** `prev` is the hash of the line just before. */
const LINKS_BACK = 2;
/** `prev` is the hash of the line two before (GENESIS for the second line). */
const LINKS_TWO_BACK = 4;
/** Written in the legacy line format (`v: 1`, signed without the domain tag). */
const LEGACY = 8;

/** What the chain check keeps of each call-log line, in file order. */
export class CallTable {
  readonly lines: number[] = [];
  /** NaN for a line that is not a call record. */
  readonly seqs: number[] = [];
  readonly flags: number[] = [];
  /** Why each unreadable line is unreadable, by index. */
  readonly reasons = new Map<number, string>();
  /** Lines whose receipt verifies with the mailbox's key. */
  genuineLines = 0;
  private back1: string | undefined = GENESIS;
  private back2: string | undefined;

  /** Adds the next line: its text (undefined when too long to read), its parsed `seq`/`prev` if any. */
  add(
    line: number,
    text: string | undefined,
    record: { seq: number; prev: string; genuine: boolean; legacy?: boolean } | { reason: string },
  ): void {
    const i = this.lines.length;
    this.lines.push(line);
    if ('reason' in record) {
      this.seqs.push(Number.NaN);
      this.flags.push(0);
      this.reasons.set(i, record.reason);
    } else {
      if (record.genuine) this.genuineLines++;
      this.seqs.push(record.seq);
      this.flags.push(
        (record.genuine ? GENUINE : 0) |
          (record.prev === this.back1 ? LINKS_BACK : 0) |
          (record.prev === this.back2 ? LINKS_TWO_BACK : 0) |
          (record.legacy ? LEGACY : 0),
      );
    }
    this.back2 = this.back1;
    this.back1 = text === undefined ? undefined : lineHash(text); // an unread line's hash is unknown: nothing chains to it
  }

  get size(): number {
    return this.lines.length;
  }

  readable(i: number): boolean {
    return !Number.isNaN(this.seqs[i]!);
  }

  genuine(i: number): boolean {
    return (this.flags[i]! & GENUINE) !== 0;
  }

  linksBack(i: number): boolean {
    return (this.flags[i]! & LINKS_BACK) !== 0;
  }

  linksTwoBack(i: number): boolean {
    return (this.flags[i]! & LINKS_TWO_BACK) !== 0;
  }

  legacy(i: number): boolean {
    return (this.flags[i]! & LEGACY) !== 0;
  }
}

/** Reports every break in the chain by line, as the lines stand in the file. */
export function checkChain(t: CallTable, report: ChainReport): void {
  const index = _SeqIndex.of(t);
  let maxSeq = 0;
  let prevFlagged = false;
  let unreadable = 0; // a line that cannot be read occupies one unknown seq
  let current = -1; // the first genuine line in today's format: no server writes the legacy one after it
  for (let i = 0; i < t.size; i++) {
    const line = t.lines[i]!;
    const flag = (kind: ChainProblemKind, message: string) => {
      report(kind, line, message);
      prevFlagged = true;
    };
    if (!t.readable(i)) {
      unreadable++;
      flag('corrupt', `not a call-log record (${t.reasons.get(i)})`);
      continue;
    }
    const seq = t.seqs[i]!;
    if (!t.genuine(i)) {
      // A later line naming this one as its prev was written after this line stood as it is now: it was made, not edited.
      const namedAfter = i + 1 < t.size && t.readable(i + 1) && (t.linksBack(i + 1) || t.linksTwoBack(i + 1));
      const nothingAfter = i + 1 >= t.size || !t.readable(i + 1);
      flag(
        namedAfter || nothingAfter ? 'forged' : 'modified',
        namedAfter
          ? `the receipt on seq ${seq} does not verify with this mailbox's key, yet the line after it names this line as its prev: the line was written without the server (made up, or copied from another mailbox's log) and chained in`
          : nothingAfter
            ? `the receipt on seq ${seq} does not verify with this mailbox's key, and no readable line after it can tell whether it was written without the server or changed after it was signed`
            : `seq ${seq} was changed after it was signed (its receipt no longer verifies)`,
      );
      continue;
    }
    if (!t.legacy(i) && current < 0) current = i;
    if (t.legacy(i) && current >= 0) {
      flag(
        'forged',
        `seq ${seq} is in the legacy line format (v 1, signed without the call-log domain tag) after line ${t.lines[current]} in today's: a server that writes v 2 never goes back, so the line was made elsewhere from the key's signature over untagged bytes (a downgrade), or an older Witness served this mailbox again`,
      );
      continue;
    }
    const first = index.firstGenuine(seq);
    if (first < i) {
      flag('forged', `a second copy of seq ${seq} (first at line ${t.lines[first]}): a replayed receipt`);
      continue;
    }
    if (seq <= maxSeq) {
      flag('reordered', `seq ${seq} comes after seq ${maxSeq}`);
      continue;
    }
    if (seq > maxSeq + 1) {
      const missing = _range(maxSeq + 1, seq - 1)
        .filter((s) => !index.present(s))
        .slice(unreadable);
      maxSeq = seq;
      unreadable = 0;
      if (missing.length > 0) {
        flag(
          'deleted',
          `${missing.length} line(s) missing before seq ${seq} (seq ${missing[0]}${missing.length > 1 ? `–${missing[missing.length - 1]}` : ''})`,
        );
        continue;
      }
      if (index.firstGenuine(seq - 1) > i) {
        flag('reordered', `seq ${seq} comes before seq ${seq - 1}`);
        continue;
      }
    }
    maxSeq = seq;
    unreadable = 0;
    const wasFlagged = prevFlagged;
    prevFlagged = false;
    if (!t.linksBack(i) && !wasFlagged)
      flag(
        'modified',
        `does not chain to the line before it: line ${i > 0 ? t.lines[i - 1] : 0} is not the line seq ${seq} was appended after`,
      );
  }
}

/** Sorted views of the table: which seqs occur at all, and where each first occurs with a genuine receipt. */
class _SeqIndex {
  private constructor(
    private readonly seqs: Float64Array,
    private readonly genuineSeqs: Float64Array,
    private readonly genuineAt: Uint32Array,
  ) {}

  static of(t: CallTable): _SeqIndex {
    const readable: number[] = [];
    const genuine: number[] = [];
    for (let i = 0; i < t.size; i++) {
      if (t.readable(i)) readable.push(t.seqs[i]!);
      if (t.readable(i) && t.genuine(i)) genuine.push(i);
    }
    genuine.sort((a, b) => t.seqs[a]! - t.seqs[b]! || a - b);
    return new _SeqIndex(
      Float64Array.from(readable).sort(),
      Float64Array.from(genuine, (i) => t.seqs[i]!),
      Uint32Array.from(genuine),
    );
  }

  present(seq: number): boolean {
    const at = _lowerBound(this.seqs, seq);
    return at < this.seqs.length && this.seqs[at] === seq;
  }

  /** Index of the first line with this seq and a genuine receipt, or -1 when there is none. */
  firstGenuine(seq: number): number {
    const at = _lowerBound(this.genuineSeqs, seq);
    return at < this.genuineSeqs.length && this.genuineSeqs[at] === seq ? this.genuineAt[at]! : -1;
  }
}

function _lowerBound(sorted: Float64Array, value: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (sorted[mid]! < value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function _range(from: number, to: number): number[] {
  const out: number[] = [];
  for (let s = from; s <= to && out.length < 10_000; s++) out.push(s);
  return out;
}
