/**
 * @module
 * Paired comparisons of cells that played the same games (docs/consensus.md, "Paired
 * comparisons"): cells that differ only in their paired axes (the decision layer by
 * default) have the same seed at each run index, so run i of one and run i of the
 * other are one game under two treatments. Cells are paired by their seeds, which the
 * results lines carry, so any file — a sweep's, a merge's — is paired without its
 * experiment. For each such pair: the difference of the valid rates with Newcombe's
 * paired interval (paired-interval.ts) and McNemar's discordant counts.
 *
 * Memory: 9 bytes per run (its seed and outcome), in arrays per cell indexed by run.
 */
import type { Interval } from './interval.js';
import { newcombePairedInterval, type PairedCounts } from './paired-interval.js';
import type { Outcome } from './types.js';

export interface PairedInput {
  cell: string;
  index: number;
  seed: number;
  outcome: Outcome;
  config: { decide?: string };
}

/** `other` against `base` over the runs both played (the same seed at the same index). */
export interface PairedComparison {
  base: string;
  other: string;
  /** Runs played in both cells. */
  pairs: number;
  /** The 2 × 2 table of valid outcomes: `firstOnly` valid in base only, `secondOnly` in other only (McNemar's discordant runs). */
  counts: PairedCounts;
  /** other's valid rate − base's, over the pairs. */
  difference: number;
  ci: Interval;
}

class _Cell {
  seeds = new Float64Array(16);
  /** 0: no run at this index; 1: a run, not valid; 2: a valid run. */
  state = new Uint8Array(16);
  constructor(
    readonly key: string,
    readonly vote: boolean,
  ) {}

  add(index: number, seed: number, valid: boolean): void {
    if (!Number.isInteger(index) || index < 0 || index >= 2 ** 31) return;
    if (index >= this.state.length) {
      let size = this.state.length;
      while (size <= index) size *= 2;
      const seeds = new Float64Array(size);
      seeds.set(this.seeds);
      const state = new Uint8Array(size);
      state.set(this.state);
      this.seeds = seeds;
      this.state = state;
    }
    // The first line of a run counts, as the readers count it.
    if (this.state[index] !== 0) return;
    this.seeds[index] = seed;
    this.state[index] = valid ? 2 : 1;
  }

  /** Whether the two cells played the same games: equal seeds at the first index both have. */
  sameGames(other: _Cell): boolean {
    const n = Math.min(this.state.length, other.state.length);
    for (let i = 0; i < n; i++)
      if (this.state[i] !== 0 && other.state[i] !== 0) return this.seeds[i] === other.seeds[i];
    return false;
  }
}

export class PairedRuns {
  readonly #cells = new Map<string, _Cell>();

  add(run: PairedInput): void {
    let cell = this.#cells.get(run.cell);
    if (!cell) {
      cell = new _Cell(run.cell, run.config.decide === undefined);
      this.#cells.set(run.cell, cell);
    }
    cell.add(run.index, run.seed, run.outcome === 'valid');
  }

  /**
   * For every group of cells that played the same games, each cell against the
   * group's base: its vote cell when it has one, else its first cell; in file order.
   */
  comparisons(confidence = 0.95): PairedComparison[] {
    const groups: _Cell[][] = [];
    for (const cell of this.#cells.values()) {
      const group = groups.find((g) => g[0]!.sameGames(cell));
      if (group) group.push(cell);
      else groups.push([cell]);
    }
    const out: PairedComparison[] = [];
    for (const group of groups) {
      if (group.length < 2) continue;
      const base = group.find((c) => c.vote) ?? group[0]!;
      for (const other of group) if (other !== base) out.push(_compare(base, other, confidence));
    }
    return out;
  }
}

function _compare(base: _Cell, other: _Cell, confidence: number): PairedComparison {
  const counts: PairedCounts = { both: 0, firstOnly: 0, secondOnly: 0, neither: 0 };
  const n = Math.min(base.state.length, other.state.length);
  for (let i = 0; i < n; i++) {
    const a = base.state[i]!;
    const b = other.state[i]!;
    // A run of one cell whose seed differs from the other's at this index is no pair (a file mixing plans).
    if (a === 0 || b === 0 || base.seeds[i] !== other.seeds[i]) continue;
    if (a === 2 && b === 2) counts.both++;
    else if (a === 2) counts.firstOnly++;
    else if (b === 2) counts.secondOnly++;
    else counts.neither++;
  }
  const { difference, low, high } = newcombePairedInterval(counts, confidence);
  return {
    base: base.key,
    other: other.key,
    pairs: counts.both + counts.firstOnly + counts.secondOnly + counts.neither,
    counts,
    difference,
    ci: { low, high },
  };
}
