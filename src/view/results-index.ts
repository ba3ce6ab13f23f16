/**
 * @module
 * A results file indexed for the viewer, not loaded: one streamed pass (the same
 * bounded reader as `witness report`, each run counted once by UniqueRuns) keeps the
 * per-cell summaries and LLM metrics and, per run, where its line is (byte offset and
 * length) and the few fields a list or a pairing needs — 30 bytes a run in typed
 * arrays, plus the id set UniqueRuns keeps. A run's full line is read back from disk
 * when a page asks for it.
 */
import { closeSync, openSync, readSync } from 'node:fs';
import { WitnessError } from '../core/errors.js';
import { GroupedLlmMetrics, type LlmMetrics } from '../report/llm-metrics.js';
import type { RunRecord } from '../sim/experiment/record.js';
import { checkRecord } from '../sim/experiment/record-schema.js';
import { emptyScan, type ResultsScan, resultsRecords } from '../sim/experiment/results-stream.js';
import { type DroppedRuns, droppedMessage, UniqueRuns } from '../sim/experiment/unique-runs.js';
import { CellSummaries, type CellSummary, OUTCOMES } from '../sim/stats.js';
import type { Outcome } from '../sim/types.js';

/** Growable typed columns, one entry per kept run. */
class _Columns {
  size = 0;
  offset = new Float64Array(1024);
  bytes = new Uint32Array(1024);
  cell = new Uint32Array(1024);
  index = new Uint32Array(1024);
  seed = new Float64Array(1024);
  outcome = new Uint8Array(1024);
  rounds = new Uint16Array(1024);

  push(offset: number, bytes: number, cell: number, r: RunRecord): void {
    if (this.size === this.offset.length) this.#grow();
    const i = this.size++;
    this.offset[i] = offset;
    this.bytes[i] = bytes;
    this.cell[i] = cell;
    this.index[i] = r.index;
    this.seed[i] = r.seed;
    this.outcome[i] = OUTCOMES.indexOf(r.outcome);
    this.rounds[i] = Math.min(r.rounds, 65535);
  }

  #grow(): void {
    const n = this.offset.length * 2;
    const grow = <T extends Float64Array | Uint32Array | Uint8Array | Uint16Array>(a: T, make: (n: number) => T): T => {
      const b = make(n);
      b.set(a);
      return b;
    };
    this.offset = grow(this.offset, (k) => new Float64Array(k));
    this.bytes = grow(this.bytes, (k) => new Uint32Array(k));
    this.cell = grow(this.cell, (k) => new Uint32Array(k));
    this.index = grow(this.index, (k) => new Uint32Array(k));
    this.seed = grow(this.seed, (k) => new Float64Array(k));
    this.outcome = grow(this.outcome, (k) => new Uint8Array(k));
    this.rounds = grow(this.rounds, (k) => new Uint16Array(k));
  }
}

/** One run as a list shows it. */
export interface RunRow {
  /** Position of the run in the index (what a page asks for). */
  pos: number;
  index: number;
  seed: number;
  outcome: Outcome;
  rounds: number;
}

export class ResultsIndex {
  readonly cells: CellSummary[];
  readonly llm: Map<string, LlmMetrics>;
  readonly scan: ResultsScan;
  readonly dropped: DroppedRuns;
  readonly experiment: string | undefined;
  /** What `witness report` says about the lines it dropped, or undefined (the id set is not kept). */
  readonly droppedNote: string | undefined;
  /** Per cell, its decision layer (undefined: the vote), which paired.ts takes as the base. */
  readonly decides: (string | undefined)[];
  readonly #columns: _Columns;
  readonly #cellIds: Map<string, number>;

  private constructor(
    readonly path: string,
    parts: {
      cells: CellSummary[];
      llm: Map<string, LlmMetrics>;
      scan: ResultsScan;
      unique: UniqueRuns;
      columns: _Columns;
      cellIds: Map<string, number>;
      decides: (string | undefined)[];
    },
  ) {
    this.cells = parts.cells;
    this.llm = parts.llm;
    this.scan = parts.scan;
    this.dropped = { ...parts.unique.dropped };
    this.experiment = parts.unique.experiment;
    this.droppedNote = droppedMessage(path, parts.unique);
    this.decides = parts.decides;
    this.#columns = parts.columns;
    this.#cellIds = parts.cellIds;
  }

  /** Reads `path` once (a stream: memory is the index's, not the file's). */
  static build(path: string): ResultsIndex {
    const scan = emptyScan();
    const unique = new UniqueRuns();
    const summaries = new CellSummaries();
    const llm = new GroupedLlmMetrics<RunRecord>((r) => r.cell);
    const columns = new _Columns();
    const cellIds = new Map<string, number>();
    const decides: (string | undefined)[] = [];
    for (const { record, offset, bytes } of resultsRecords(path, scan)) {
      if (!unique.keep(record)) continue;
      let cell = cellIds.get(record.cell);
      if (cell === undefined) {
        cell = cellIds.size;
        cellIds.set(record.cell, cell);
        decides.push(record.config.decide);
      }
      summaries.add(record);
      llm.add(record);
      columns.push(offset, bytes, cell, record);
    }
    return new ResultsIndex(path, {
      cells: summaries.cells(),
      llm: llm.finish(),
      scan,
      unique,
      columns,
      cellIds,
      decides,
    });
  }

  get runs(): number {
    return this.#columns.size;
  }

  /** The cell's number (its place in `cells`), or undefined for a label not in the file. */
  cellId(label: string): number | undefined {
    return this.#cellIds.get(label);
  }

  /** The runs of one cell with the given outcomes (all when empty), `limit` from `skip`, and how many match. */
  list(cell: number, outcomes: readonly Outcome[], skip: number, limit: number): { total: number; rows: RunRow[] } {
    const c = this.#columns;
    const want = outcomes.length === 0 ? undefined : new Set(outcomes.map((o) => OUTCOMES.indexOf(o)));
    const rows: RunRow[] = [];
    let total = 0;
    for (let i = 0; i < c.size; i++) {
      if (c.cell[i] !== cell || (want && !want.has(c.outcome[i]!))) continue;
      if (total >= skip && rows.length < limit) rows.push(this.row(i));
      total++;
    }
    return { total, rows };
  }

  /** The positions of a cell's runs, in file order. */
  positions(cell: number): number[] {
    const c = this.#columns;
    const out: number[] = [];
    for (let i = 0; i < c.size; i++) if (c.cell[i] === cell) out.push(i);
    return out;
  }

  row(pos: number): RunRow {
    const c = this.#columns;
    return {
      pos,
      index: c.index[pos]!,
      seed: c.seed[pos]!,
      outcome: OUTCOMES[c.outcome[pos]!]!,
      rounds: c.rounds[pos]!,
    };
  }

  /** The whole record of the run at `pos`, read back from the file. */
  record(pos: number): RunRecord {
    const c = this.#columns;
    if (!Number.isInteger(pos) || pos < 0 || pos >= c.size)
      throw new WitnessError(
        'NOT_FOUND',
        `${this.path} has no run number ${pos}; runs are numbered 0 to ${c.size - 1}.`,
      );
    const buffer = Buffer.alloc(c.bytes[pos]!);
    const fd = openSync(this.path, 'r');
    try {
      readSync(fd, buffer, 0, buffer.length, c.offset[pos]!);
    } finally {
      closeSync(fd);
    }
    try {
      return checkRecord(JSON.parse(buffer.toString('utf8')));
    } catch (cause) {
      throw new WitnessError(
        'CORRUPT',
        `${this.path} changed since it was indexed: run ${pos} no longer reads as a run record. Restart witness view.`,
        { cause },
      );
    }
  }
}
