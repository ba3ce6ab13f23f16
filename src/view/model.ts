/**
 * @module
 * What the viewer's pages show, as JSON, over indexed results files: the sweep
 * (cells with their outcome rates, Wilson intervals and LLM metrics), a page of a
 * cell's runs, one game round by round, and two cells side by side. The server answers
 * these on demand; a bundle writes them out once. Every statistic is the project's
 * own: summaries from sim/stats.ts, paired differences from sim/paired.ts, convergence
 * from `convergenceRound` — the viewer computes none of its own.
 */
import { WitnessError } from '../core/errors.js';
import { formatRate } from '../report/format.js';
import { ratesCaption } from '../report/html.js';
import { measureRate, shownMeasures } from '../report/html-table.js';
import { shortLabels } from '../report/labels.js';
import type { LlmMetrics } from '../report/llm-metrics.js';
import { pairedJson } from '../report/paired-table.js';
import type { RunRecord } from '../sim/experiment/record.js';
import { PairedRuns } from '../sim/paired.js';
import { type CellSummary, convergenceRound, OUTCOMES } from '../sim/stats.js';
import type { Outcome } from '../sim/types.js';
import type { ResultsIndex, RunRow } from './results-index.js';

/** Runs per page of a cell's list. */
export const PAGE_SIZE = 50;
/** Changed runs listed in a comparison (the count is always whole). */
const CHANGED_SHOWN = 500;

export interface CellRef {
  file: number;
  cell: number;
}

export interface Overview {
  files: {
    name: string;
    experiment: string | null;
    runs: number;
    problems: { line: number; message: string }[];
    problem_count: number;
    torn_tail: boolean;
    dropped: { repeated: number; other_experiment: number; seq_taken: number };
    /** Words every cell label of the file shares, shown once. */
    common: string;
    /** The rate columns worth showing (as the HTML report's table), and the caption that explains them. */
    measures: string[];
    caption: string;
    /** Each cell with its label without the shared words, its rates as `40 (17–69)`, and its LLM metrics. */
    cells: (CellSummary & { id: number; short: string; rates: Record<string, string>; llm: LlmMetrics })[];
  }[];
  outcomes: readonly Outcome[];
  /** Cells that played the same games: within a file (paired.ts's groups) and, across two files, cells of the same label. */
  pairs: { a: CellRef; b: CellRef; label: string }[];
}

export class ViewModel {
  constructor(
    readonly indexes: readonly ResultsIndex[],
    readonly names: readonly string[],
  ) {}

  overview(): Overview {
    const files = this.indexes.map((ix, f) => {
      const { short, common } = shortLabels(ix.cells.map((c) => c.cell));
      const measures = shownMeasures(ix.cells, { inRange: ix.decides.some((d) => d !== undefined) });
      return {
        name: this.names[f]!,
        experiment: ix.experiment ?? null,
        runs: ix.runs,
        problems: ix.scan.problems,
        problem_count: ix.scan.problemCount,
        torn_tail: ix.scan.tornTail,
        dropped: {
          repeated: ix.dropped.repeated,
          other_experiment: ix.dropped.otherExperiment,
          seq_taken: ix.dropped.seqTaken,
        },
        common,
        measures,
        caption: ratesCaption(measures).replace(/^.*?sort\. /, ''),
        cells: ix.cells.map((c, id) => ({
          ...c,
          id,
          short: short.get(c.cell) ?? c.cell,
          rates: Object.fromEntries(measures.map((m) => [m, formatRate(measureRate(m, c))])),
          llm: ix.llm.get(c.cell)!,
        })),
      };
    });
    return { files, pairs: this.#pairs(files), outcomes: OUTCOMES };
  }

  #pairs(files: Overview['files']): Overview['pairs'] {
    const pairs: Overview['pairs'] = [];
    this.indexes.forEach((ix, f) => {
      const paired = new PairedRuns();
      for (let cell = 0; cell < ix.cells.length; cell++)
        for (const pos of ix.positions(cell))
          paired.add(_pairedInput(ix.cells[cell]!.cell, ix.row(pos), ix.decides[cell]));
      for (const c of paired.comparisons()) {
        const [a, b] = [ix.cellId(c.base)!, ix.cellId(c.other)!];
        pairs.push({
          a: { file: f, cell: a },
          b: { file: f, cell: b },
          label: `${files[f]!.cells[b]!.short} vs ${files[f]!.cells[a]!.short}`,
        });
      }
    });
    // Two files: each cell against the cell of the same label in the other file.
    for (let f = 1; f < this.indexes.length; f++) {
      for (const cell of this.indexes[0]!.cells) {
        const other = this.indexes[f]!.cellId(cell.cell);
        if (other === undefined) continue;
        const a = { file: 0, cell: this.indexes[0]!.cellId(cell.cell)! };
        pairs.push({
          a,
          b: { file: f, cell: other },
          label: `${files[0]!.cells[a.cell]!.short}: ${files[f]!.name} vs ${files[0]!.name}`,
        });
      }
    }
    return pairs;
  }

  /** One page of a cell's runs, with the given outcomes only when any are given. */
  runs(
    ref: CellRef,
    outcomes: readonly Outcome[],
    page: number,
  ): { total: number; page: number; pages: number; rows: RunRow[] } {
    const ix = this.#index(ref.file);
    this.#cell(ix, ref);
    for (const o of outcomes)
      if (!OUTCOMES.includes(o))
        throw new WitnessError('USAGE', `"${o}" is not an outcome; use one of ${OUTCOMES.join(', ')}.`);
    if (!Number.isInteger(page) || page < 0)
      throw new WitnessError('USAGE', `Page ${page} is not a page number; pages count from 0.`);
    const { total, rows } = ix.list(ref.cell, outcomes, page * PAGE_SIZE, PAGE_SIZE);
    return { total, page, pages: Math.max(1, Math.ceil(total / PAGE_SIZE)), rows };
  }

  /** One game: its whole record, where it converged, and where in the file it sits. */
  run(
    file: number,
    pos: number,
  ): { file: number; pos: number; cell: number; record: RunRecord; convergence_round: number | null } {
    const ix = this.#index(file);
    const record = ix.record(pos);
    return { file, pos, cell: ix.cellId(record.cell)!, record, convergence_round: convergenceRound(record) };
  }

  /**
   * Two cells over the games both played (the same seed at the same run index): the
   * paired difference of `b`'s valid rate against `a`'s with its interval, from
   * PairedRuns, and the runs whose outcome differs. Null comparison: no common game.
   */
  compare(a: CellRef, b: CellRef) {
    const [ia, ib] = [this.#index(a.file), this.#index(b.file)];
    const [la, lb] = [this.#cell(ia, a), this.#cell(ib, b)];
    const paired = new PairedRuns();
    // PairedRuns takes a vote cell as the base: `a` is given as the vote side so it is the base, whatever its mode.
    const rowsA = ia.positions(a.cell).map((p) => ia.row(p));
    const rowsB = ib.positions(b.cell).map((p) => ib.row(p));
    for (const r of rowsA) paired.add(_pairedInput('a', r, undefined));
    for (const r of rowsB) paired.add(_pairedInput('b', r, 'other'));
    const comparison = paired.comparisons().find((c) => c.base === 'a' && c.other === 'b');
    const byIndex = new Map(rowsB.map((r) => [r.index, r]));
    const changed: { index: number; a: RunRow; b: RunRow; discordant: boolean }[] = [];
    let total = 0;
    for (const ra of rowsA) {
      const rb = byIndex.get(ra.index);
      if (!rb || rb.seed !== ra.seed || rb.outcome === ra.outcome) continue;
      total++;
      if (changed.length < CHANGED_SHOWN)
        changed.push({
          index: ra.index,
          a: ra,
          b: rb,
          discordant: (ra.outcome === 'valid') !== (rb.outcome === 'valid'),
        });
    }
    return {
      a: { ...a, label: la },
      b: { ...b, label: lb },
      comparison: comparison ? pairedJson(comparison) : null,
      changed_total: total,
      changed,
    };
  }

  #index(file: number): ResultsIndex {
    const ix = this.indexes[file];
    if (!ix)
      throw new WitnessError('NOT_FOUND', `No results file number ${file}; the viewer has ${this.indexes.length}.`);
    return ix;
  }

  #cell(ix: ResultsIndex, ref: CellRef): string {
    const cell = ix.cells[ref.cell];
    if (!cell)
      throw new WitnessError(
        'NOT_FOUND',
        `${this.names[ref.file]} has no cell number ${ref.cell}; it has ${ix.cells.length}.`,
      );
    return cell.cell;
  }
}

function _pairedInput(cell: string, r: RunRow, decide: string | undefined) {
  return { cell, index: r.index, seed: r.seed, outcome: r.outcome, config: { decide } };
}
