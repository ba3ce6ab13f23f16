/**
 * @module
 * The progress line's estimate of the time a sweep has left. Cells are played in plan
 * order and differ in cost: in paper-benign a run of 16 agents took about 1.5× one of
 * 4 (bench/eta.ts), so the average so far, the old estimate, was 20–30 % short once the
 * bigger cells came last. Here the time per run is fitted as a + b × agents over the
 * runs played so far (least squares on each size's mean, weighted by its runs) and
 * applied to the runs left of each size. With one size played, or bigger cells cheaper
 * (b < 0), b is 0: the plain average. A cost quadratic in the agents was tried before
 * and was 80 % too long (NOTES.md): the messages of a round are not what a run costs.
 */
import type { Plan } from './plan.js';

export class TimeLeft {
  /** Runs left to play, by the number of agents in their cell. */
  readonly #left = new Map<number, number>();
  /** Runs played and the time they took, by the number of agents. */
  readonly #played = new Map<number, { runs: number; ms: number }>();
  #last: number;

  /** `done`: the runs already in the file, which are not played. */
  constructor(plan: Pick<Plan, 'end' | 'cellAt'>, done?: { has(run: { seq: number }): boolean }, now = Date.now()) {
    // Cells only, no run ids: a pass over 2 million seqs costs milliseconds.
    for (let seq = 0; seq < plan.end; seq++) {
      const cell = plan.cellAt(seq);
      if (!cell || done?.has({ seq })) continue;
      const agents = cell.honest + cell.byzantine;
      this.#left.set(agents, (this.#left.get(agents) ?? 0) + 1);
    }
    this.#last = now;
  }

  /** A run of `agents` agents finished at `now`: the time since the one before is its. */
  played(agents: number, now = Date.now()): void {
    const seen = this.#played.get(agents) ?? { runs: 0, ms: 0 };
    seen.runs++;
    seen.ms += now - this.#last;
    this.#played.set(agents, seen);
    this.#last = now;
    const left = this.#left.get(agents);
    if (left !== undefined) this.#left.set(agents, Math.max(0, left - 1));
  }

  /** Milliseconds left, or undefined before the first run finished. */
  estimateMs(): number | undefined {
    const fit = this.#fit();
    if (!fit) return undefined;
    let ms = 0;
    for (const [agents, runs] of this.#left) ms += runs * (fit.a + fit.b * agents);
    return ms;
  }

  /** Weighted least squares of ms per run on agents; b ≥ 0 (see the module comment). */
  #fit(): { a: number; b: number } | undefined {
    let runs = 0;
    let agents = 0;
    let ms = 0;
    for (const [n, p] of this.#played) {
      runs += p.runs;
      agents += p.runs * n;
      ms += p.ms;
    }
    if (runs === 0) return undefined;
    const meanAgents = agents / runs;
    const meanMs = ms / runs;
    let sxx = 0;
    let sxy = 0;
    for (const [n, p] of this.#played) {
      sxx += p.runs * (n - meanAgents) ** 2;
      sxy += (n - meanAgents) * (p.ms - p.runs * meanMs);
    }
    const b = sxx > 0 ? Math.max(0, sxy / sxx) : 0;
    return { a: meanMs - b * meanAgents, b };
  }
}
