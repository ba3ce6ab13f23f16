/**
 * @module
 * What a reader of a results file counts: each run once, and one experiment's runs.
 * A file can hold a run twice (two sweeps appended to it before the one-writer lock,
 * a concatenation, a resume of an older version), runs of another experiment (its
 * `experiment` name differs from the file's first run), or two plans of one
 * experiment (another --seed puts a second run of the same cell and index at the same
 * seq). Readers keep the first of each and count what they drop, so a table never
 * counts a run twice or mixes two experiments' games. A run of another cell or index at
 * a seq already held is kept: an older version's run order depended on --runs, so a
 * file it extended holds one plan's runs at two orders.
 *
 * Memory: the ids seen (a set of strings, ~60 bytes a run) and 4 bytes per seq.
 */
import type { RunRecord } from './record.js';

export interface DroppedRuns {
  /** Lines of a run id already read (the same run again). */
  repeated: number;
  /** Lines whose `experiment` is not the file's (the name of its first run). */
  otherExperiment: number;
  /** Lines of another run of the same cell and index at a seq an earlier line holds (a second plan of the same name). */
  seqTaken: number;
}

export class UniqueRuns {
  /** The experiment of the file: its first run's. */
  experiment: string | undefined;
  readonly dropped: DroppedRuns = { repeated: 0, otherExperiment: 0, seqTaken: 0 };
  readonly #ids = new Set<string>();
  /** Per seq, 31 bits of the cell and index of the run that holds it (| 1, so 0 is free). */
  #seqs = new Uint32Array(1024);

  /** Lines dropped in all. */
  get count(): number {
    return this.dropped.repeated + this.dropped.otherExperiment + this.dropped.seqTaken;
  }

  /** Whether to count `record`; counts it as dropped when not. */
  keep(record: Pick<RunRecord, 'id' | 'seq' | 'experiment' | 'cell' | 'index'>): boolean {
    this.experiment ??= record.experiment;
    if (record.experiment !== this.experiment) {
      this.dropped.otherExperiment++;
      return false;
    }
    if (this.#ids.has(record.id)) {
      this.dropped.repeated++;
      return false;
    }
    // Another id for the same slot: the same run under another seed or settings.
    const tag = (_fnv(`${record.cell}\0${record.index}`) | 1) >>> 0;
    const held = this.#tagAt(record.seq);
    if (held === tag) {
      this.dropped.seqTaken++;
      return false;
    }
    this.#ids.add(record.id);
    if (held === 0) this.#setTag(record.seq, tag);
    return true;
  }

  /** `records` without the dropped ones. */
  *filter<T extends Pick<RunRecord, 'id' | 'seq' | 'experiment' | 'cell' | 'index'>>(
    records: Iterable<T>,
  ): Generator<T> {
    for (const r of records) if (this.keep(r)) yield r;
  }

  #tagAt(seq: number): number {
    return Number.isInteger(seq) && seq >= 0 && seq < this.#seqs.length ? this.#seqs[seq]! : 0;
  }

  #setTag(seq: number, tag: number): void {
    if (!Number.isInteger(seq) || seq < 0 || seq >= 2 ** 31) return;
    if (seq >= this.#seqs.length) {
      let size = this.#seqs.length;
      while (size <= seq) size *= 2;
      const grown = new Uint32Array(size);
      grown.set(this.#seqs);
      this.#seqs = grown;
    }
    this.#seqs[seq] = tag;
  }
}

/** What a reader says about the lines it dropped, or undefined when none. */
export function droppedMessage(file: string, unique: UniqueRuns): string | undefined {
  if (unique.count === 0) return undefined;
  const d = unique.dropped;
  const why = [
    d.repeated > 0 && `${d.repeated} repeated runs (a run id already read)`,
    d.otherExperiment > 0 &&
      `${d.otherExperiment} runs of another experiment than "${unique.experiment}", the file's first run's`,
    d.seqTaken > 0 &&
      `${d.seqTaken} other runs of a cell and index an earlier line holds (a second plan of "${unique.experiment}", e.g. another --seed)`,
  ].filter(Boolean);
  return `${file}: counted each run once and dropped ${unique.count} lines: ${why.join('; ')}. To write a clean file: \`witness sim merge ${file} -o CLEAN.jsonl\` collapses repeated lines, and with the sweep's experiment (\`--preset NAME\` or \`--plan FILE\`, its --runs and --seed) keeps only that plan's runs.`;
}

/** FNV-1a over the id's UTF-16 units, 32 bits. */
function _fnv(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return h >>> 0;
}
