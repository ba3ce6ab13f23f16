/**
 * @module
 * Joining results files (the shards of one sweep, or reruns): lines are kept byte
 * for byte, duplicates of the same run collapse, two different lines for one run id
 * are an error, and the output is in `seq` order — so merging shards 1/n … n/n gives
 * exactly the file an unsharded run writes. Signed shards keep their own chains and
 * checkpoints (src/sim/transcript/merge.ts).
 *
 * Streamed: a sweep writes its file in `seq` order, so the merge is
 * a k-way merge by `seq` over the inputs read a line at a time, written through
 * core's chunked atomic write. Lines of one `seq` meet at the merge head, where
 * duplicates collapse and conflicts are caught; the one thing kept per run is 8 bytes
 * of its id (sorted at the end: the same id at two `seq`s is a conflict too, and the
 * plan's runs are looked up there). An input out of `seq` order (hand-edited,
 * concatenated shards, or a resume that replayed a damaged line) is sorted first
 * through temporary files beside the output (merge-sort.ts), in bounded memory.
 */
import { createHash } from 'node:crypto';
import { existsSync, rmSync } from 'node:fs';
import { writeFileAtomic } from '../../core/atomic-write.js';
import { WitnessError } from '../../core/errors.js';
import { lockFile } from '../../core/file-lock.js';
import { checkpointPath } from '../transcript/format.js';
import { mergedCheckpoints, writeMergedCheckpoints } from '../transcript/merge.js';
import { checkRecord } from './record-schema.js';
import { type Line, linesBySeq, SortFolder, type SortLimits } from './merge-sort.js';
import type { RunPlace } from './plan.js';
import { fileLines } from './results-stream.js';

export interface MergeReport {
  lines: number;
  duplicates: number;
  /** The inputs were signed shards: the merged file carries their checkpoints (RESULTS.checkpoint.json). */
  signed: boolean;
  problems: { file: string; line: number; message: string }[];
  /** With a plan: its runs that no input holds, in `seq` order (the merge is incomplete while any is). */
  missing: { id: string; seq: number; cell: string }[];
  /** With a plan: how many runs it has. */
  planned?: number;
  /** With a plan that can place lines (a `lazyPlan`), in a plain merge: lines dropped as not its runs (another experiment, seed or --runs). */
  outside: number;
}

/**
 * The runs a merge should hold (`eachPlannedRun`, `planRuns` or `lazyPlan` of the
 * sweep's experiment), in `seq` order. With `place` (a `lazyPlan`), a plain merge also
 * keeps only the plan's runs: a file that mixed experiments or seeds comes out clean.
 */
export type MergePlan = Iterable<{ id: string; seq: number; cellKey: string }> & {
  place?(line: { id: string; seq: number }): RunPlace;
};

/** Bytes gathered before one write: few syscalls, bounded memory. */
const WRITE_CHUNK = 1 << 20;

export interface MergeOptions {
  /** Limits of the sort of an input out of seq order (default 8 MiB of lines in memory, 128 runs merged at once); tests make them small. */
  sort?: SortLimits;
}

export function mergeResults(
  inputs: readonly string[],
  out: string,
  plan?: MergePlan,
  options: MergeOptions = {},
): MergeReport {
  if (inputs.length === 0) throw new WitnessError('USAGE', 'Name at least one results file to merge.');
  // A shard file that is not there is a shard not merged, not an empty one.
  for (const file of inputs)
    if (!existsSync(file))
      throw new WitnessError(
        'NOT_FOUND',
        `${file} does not exist; name only results files that are there (a shard still running, or a wrong path?).`,
      );
  // First pass: counts, problems and whether each file is in seq order.
  const scans = new Map(inputs.map((file) => [file, _scan(file)]));
  const signed = mergedCheckpoints(inputs, (file) => {
    const s = scans.get(file)!;
    if (s.problems.length > 0)
      throw new WitnessError(
        'INVALID_INPUT',
        `${file}:${s.problems[0]!.line} is not a results line (${s.problems[0]!.message}); a signed merge keeps every line: check the file with witness verify ${file} --keys DIR.json.`,
      );
    return s.records + (s.tornTail ? 1 : 0);
  });
  const problems: MergeReport['problems'] = inputs.flatMap((file) =>
    scans.get(file)!.problems.map((p) => ({ file, ...p })),
  );
  const ids = new IdKeys();
  let lines = 0;
  let duplicates = 0;
  let outside = 0;
  // A signed merge keeps every line (the chains cover them all); a plain one with a placing plan keeps its runs.
  const place = signed ? undefined : plan?.place?.bind(plan);
  const ours = (l: Line) => place === undefined || place(l) === 'planned';
  const sorting = new SortFolder(out, options.sort);
  function* chunks(): Generator<string> {
    let batch = '';
    // Inside the write: an input that cannot be sorted leaves no merged file.
    const sources = inputs.flatMap((file) =>
      scans.get(file)!.ordered ? [_lines(file)] : sorting.sorted(file, _lines(file)),
    );
    for (const group of linesBySeq(sources)) {
      const byId = new Map<string, Line>();
      for (const l of group) {
        if (!ours(l)) {
          outside++;
          continue;
        }
        const seen = byId.get(l.id);
        if (!seen) byId.set(l.id, l);
        else if (seen.raw === l.raw) duplicates++;
        else throw _conflict(l.id, seen.where, l.where);
      }
      // Lines of one seq (two experiments' runs) in a stable order, as the old in-memory sort.
      for (const l of [...byId.values()].sort((a, b) => (a.raw < b.raw ? -1 : a.raw > b.raw ? 1 : 0))) {
        ids.add(l.id);
        lines++;
        batch += `${l.raw}\n`;
        if (batch.length >= WRITE_CHUNK) {
          yield batch;
          batch = '';
        }
      }
    }
    yield batch;
    // Inside the write: a conflict found here still leaves no merged file.
    const twice = ids.seal();
    if (twice.size > 0) _checkRepeats(inputs, twice, ours);
  }
  // Atomic and durable: a crash never leaves a half-merged file. Under the output's
  // lock: replacing a file a sweep is appending to would lose its next lines.
  const lock = lockFile(out, 'results file');
  try {
    try {
      writeFileAtomic(out, chunks());
    } finally {
      sorting.remove();
    }
    // The merged file's checkpoints are the shards' own; a plain merge leaves none (not a stale one).
    if (signed) writeMergedCheckpoints(out, signed);
    else rmSync(checkpointPath(out), { force: true });
  } finally {
    lock.release();
  }
  const missing: MergeReport['missing'] = [];
  let planned: number | undefined;
  if (plan) {
    planned = 0;
    for (const r of plan) {
      planned++;
      if (!ids.has(r.id)) missing.push({ id: r.id, seq: r.seq, cell: r.cellKey });
    }
  }
  return {
    lines,
    duplicates,
    problems,
    signed: signed !== undefined,
    missing,
    ...(planned !== undefined ? { planned } : {}),
    outside,
  };
}

function _conflict(id: string, a: string, b: string): WitnessError {
  return new WitnessError(
    'INVALID_INPUT',
    `Run ${id} differs between ${a} and ${b}; these files are not from the same sweep.`,
  );
}

interface Scan {
  records: number;
  tornTail: boolean;
  problems: { line: number; message: string }[];
  /** Every record's seq is ≥ the one before (a sweep's own order). */
  ordered: boolean;
}

function _scan(file: string): Scan {
  const scan: Scan = { records: 0, tornTail: false, problems: [], ordered: true };
  let last = -Infinity;
  const it = _parsed(file, scan.problems);
  for (let next = it.next(); ; next = it.next()) {
    if (next.done) {
      scan.tornTail = next.value;
      break;
    }
    scan.records++;
    if (next.value.seq < last) scan.ordered = false;
    last = next.value.seq;
  }
  return scan;
}

/** A file's valid records (blank lines skipped, bad ones into `problems` when given); returns whether the file ends torn. */
function* _parsed(file: string, problems?: { line: number; message: string }[]): Generator<Line, boolean> {
  const it = fileLines(file);
  for (let next = it.next(); ; next = it.next()) {
    if (next.done) return next.value.tornTail;
    const { line, raw } = next.value;
    if (raw.trim() === '') continue;
    let record: { id: string; seq: number };
    try {
      record = checkRecord(JSON.parse(raw));
    } catch (error) {
      problems?.push({ line, message: (error as Error).message });
      continue;
    }
    yield { id: record.id, seq: record.seq, raw, where: `${file}:${line}` };
  }
}

function* _lines(file: string): Generator<Line> {
  yield* _parsed(file);
}

/**
 * 64-bit keys of run ids, 8 bytes a run: a plan's `r-<16 hex>` ids are their own key,
 * any other id is hashed. Sorted once the merge is written; `seal` returns the keys
 * seen twice (the same id at two seqs, or a hash collision: `_checkRepeats` tells).
 */
class IdKeys {
  private keys = new BigUint64Array(1 << 16);
  private size = 0;

  add(id: string): void {
    if (this.size === this.keys.length) {
      const grown = new BigUint64Array(this.keys.length * 2);
      grown.set(this.keys);
      this.keys = grown;
    }
    this.keys[this.size++] = _key(id);
  }

  seal(): Set<bigint> {
    this.keys = this.keys.subarray(0, this.size).sort();
    const twice = new Set<bigint>();
    for (let i = 1; i < this.size; i++) if (this.keys[i] === this.keys[i - 1]) twice.add(this.keys[i]!);
    return twice;
  }

  has(id: string): boolean {
    const key = _key(id);
    let lo = 0;
    let hi = this.size - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const k = this.keys[mid]!;
      if (k === key) return true;
      if (k < key) lo = mid + 1;
      else hi = mid - 1;
    }
    return false;
  }
}

function _key(id: string): bigint {
  if (/^r-[0-9a-f]{16}$/.test(id)) return BigInt(`0x${id.slice(2)}`);
  // Equal to another id's key only by a 2^-64 chance; `_checkRepeats` then compares the ids themselves.
  return BigInt(`0x${createHash('sha256').update(id).digest('hex').slice(0, 16)}`);
}

/** Reads the inputs again for ids whose key was written twice: the same id at two seqs is a conflict. */
function _checkRepeats(inputs: readonly string[], keys: Set<bigint>, ours: (l: Line) => boolean): void {
  const first = new Map<string, Line>();
  for (const file of inputs) {
    for (const l of _lines(file)) {
      if (!keys.has(_key(l.id)) || !ours(l)) continue;
      const seen = first.get(l.id);
      if (!seen) first.set(l.id, l);
      else if (seen.raw !== l.raw) throw _conflict(l.id, seen.where, l.where);
    }
  }
}
