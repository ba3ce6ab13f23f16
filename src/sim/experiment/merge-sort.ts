/**
 * @module
 * The line streams `witness sim merge` joins: a k-way merge by `seq` over sorted
 * streams, and an external merge sort for an input that is not in `seq` order
 * (hand-edited, concatenated shards, a resume that replayed a damaged line), so a
 * merge's memory does not grow with its inputs.
 *
 * The sort reads the input's lines in runs of about RUN_CHARS characters, sorts each
 * by `seq` (stable: file order within a seq) and writes it to a temporary file in a
 * folder beside the merge's output (same file system, and the output needs that room
 * anyway); more than FAN_IN runs are merged into fewer first, so the files open at
 * once stay few. An input that fits in one run never touches the disk. The folder
 * (`.NAME.sort-XXXXXX`) is removed when the merge ends, however it ends; a process
 * killed meanwhile leaves it behind, and nothing reads it.
 */
import { closeSync, mkdtempSync, openSync, rmSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { writeAll } from '../../core/atomic-write.js';
import { WitnessError } from '../../core/errors.js';
import { fileLines } from './results-stream.js';

/** One results line of an input, with where it came from (for messages). */
export interface Line {
  id: string;
  seq: number;
  raw: string;
  where: string;
}

/**
 * Characters of lines sorted in memory at once (~6,500 runs of paper-benign). Peak RSS
 * grew by about 5× this (the batch, its garbage, the heap's headroom): measured on
 * 600,000 unordered runs, 32 MiB gave 356 MB, 16 MiB 294 MB, 8 MiB 247 MB.
 */
const RUN_CHARS = 8 << 20;
/** Runs merged at once (files open at once: well under a default limit of 256); more are merged into fewer first. */
const FAN_IN = 128;
/** Read buffer of each run file (FAN_IN of them are read at once). */
const RUN_READ_CHUNK = 64 << 10;
/** Bytes gathered before one write. */
const WRITE_CHUNK = 1 << 20;

const _bySeq = (a: Line, b: Line) => a.seq - b.seq;

/** How much the external sort holds: characters sorted in memory at once, and runs merged at once. */
export interface SortLimits {
  runChars: number;
  fanIn: number;
}

/** Temporary sorted runs, in one folder beside `near` (the merge's output), made when first needed. */
export class SortFolder {
  #dir: string | undefined;
  #files = 0;

  constructor(
    private readonly near: string,
    private readonly limits: SortLimits = { runChars: RUN_CHARS, fanIn: FAN_IN },
  ) {
    if (!(limits.runChars >= 1 && limits.fanIn >= 2))
      throw new WitnessError('INTERNAL', 'A sort holds at least one character and merges at least two runs at once.');
  }

  /** `lines` (of `file`) in seq order, file order within a seq: sorted streams to merge with the other inputs, in this order. */
  sorted(file: string, lines: Iterable<Line>): Iterator<Line>[] {
    let runs: string[] = [];
    let batch: Line[] = [];
    let chars = 0;
    for (const line of lines) {
      batch.push(line);
      chars += line.raw.length;
      if (chars < this.limits.runChars) continue;
      runs.push(this.#write(batch.sort(_bySeq)));
      batch = [];
      chars = 0;
    }
    if (runs.length === 0) return [batch.sort(_bySeq)[Symbol.iterator]()];
    if (batch.length > 0) runs.push(this.#write(batch.sort(_bySeq)));
    // Each pass merges consecutive runs fanIn at a time: the runs stay in file order, and every line is read once a pass.
    while (runs.length > this.limits.fanIn) {
      const groups: string[][] = [];
      for (let i = 0; i < runs.length; i += this.limits.fanIn) groups.push(runs.slice(i, i + this.limits.fanIn));
      runs = groups.map((group) => (group.length === 1 ? group[0]! : this.#merged(file, group)));
    }
    return runs.map((r) => _read(file, r));
  }

  /** One run of `runs` merged, which are removed. */
  #merged(file: string, runs: string[]): string {
    const merged = this.#write(_flat(linesBySeq(runs.map((r) => _read(file, r)))));
    for (const r of runs) rmSync(r);
    return merged;
  }

  /** Removes the folder and every run in it. */
  remove(): void {
    if (this.#dir) rmSync(this.#dir, { recursive: true, force: true });
    this.#dir = undefined;
  }

  /** Writes lines as a run file: `seq line idLength id raw`, the id JSON-quoted (ids may hold any character). */
  #write(lines: Iterable<Line>): string {
    this.#dir ??= this.#attempt(() => mkdtempSync(join(dirname(this.near), `.${basename(this.near)}.sort-`)));
    const path = join(this.#dir, `${this.#files++}.run`);
    const fd = this.#attempt(() => openSync(path, 'wx'));
    try {
      let batch = '';
      for (const l of lines) {
        const id = JSON.stringify(l.id);
        batch += `${l.seq} ${l.where.slice(l.where.lastIndexOf(':') + 1)} ${id.length} ${id}${l.raw}\n`;
        if (batch.length >= WRITE_CHUNK) batch = this.#flush(fd, batch);
      }
      this.#flush(fd, batch);
    } finally {
      closeSync(fd);
    }
    return path;
  }

  #flush(fd: number, text: string): string {
    this.#attempt(() => writeAll(fd, Buffer.from(text, 'utf8')));
    return '';
  }

  /** The file system's error, named for what it was doing and what to do. */
  #attempt<T>(fn: () => T): T {
    try {
      return fn();
    } catch (cause) {
      const where = this.#dir ?? dirname(this.near);
      throw new WitnessError(
        'IO',
        `Cannot write the temporary files that sort an input out of seq order in ${where}: ${(cause as Error).message}. Free space there (about the input's size), or merge into another folder (-o).`,
        { cause },
      );
    }
  }
}

function* _flat(groups: Iterable<Line[]>): Generator<Line> {
  for (const group of groups) yield* group;
}

/** A run file's lines, as `#write` wrote them. */
function* _read(file: string, run: string): Generator<Line> {
  for (const { raw } of fileLines(run, RUN_READ_CHUNK)) {
    const a = raw.indexOf(' ');
    const b = raw.indexOf(' ', a + 1);
    const c = raw.indexOf(' ', b + 1);
    const end = c + 1 + Number(raw.slice(b + 1, c));
    yield {
      seq: Number(raw.slice(0, a)),
      where: `${file}:${raw.slice(a + 1, b)}`,
      id: JSON.parse(raw.slice(c + 1, end)) as string,
      raw: raw.slice(end),
    };
  }
}

/**
 * Sorted streams merged by seq, in groups of one seq (a binary heap of the streams'
 * heads). Within a group, lines come in the order of their streams, then of each
 * stream: file order, for the runs of one sorted input.
 */
export function* linesBySeq(sources: Iterator<Line>[]): Generator<Line[]> {
  const heads: { line: Line; source: number }[] = [];
  const before = (a: { line: Line; source: number }, b: { line: Line; source: number }) =>
    a.line.seq < b.line.seq || (a.line.seq === b.line.seq && a.source < b.source);
  const push = (source: number) => {
    const next = sources[source]!.next();
    if (next.done) return;
    heads.push({ line: next.value, source });
    for (let i = heads.length - 1; i > 0; ) {
      const up = (i - 1) >> 1;
      if (!before(heads[i]!, heads[up]!)) break;
      [heads[up], heads[i]] = [heads[i]!, heads[up]!];
      i = up;
    }
  };
  const pop = () => {
    const top = heads[0]!;
    const last = heads.pop()!;
    if (heads.length > 0) {
      heads[0] = last;
      for (let i = 0; ; ) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < heads.length && before(heads[l]!, heads[m]!)) m = l;
        if (r < heads.length && before(heads[r]!, heads[m]!)) m = r;
        if (m === i) break;
        [heads[m], heads[i]] = [heads[i]!, heads[m]!];
        i = m;
      }
    }
    return top;
  };
  for (let s = 0; s < sources.length; s++) push(s);
  while (heads.length > 0) {
    const seq = heads[0]!.line.seq;
    const group: Line[] = [];
    while (heads.length > 0 && heads[0]!.line.seq === seq) {
      const { line, source } = pop();
      group.push(line);
      push(source);
    }
    yield group;
  }
}
