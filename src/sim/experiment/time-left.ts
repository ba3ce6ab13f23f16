/**
 * @module
 * The progress line's estimate of the time a sweep has left. Cells are played in plan
 * order and differ in cost: in paper-benign a run of 16 agents took about 1.5× one of
 * 4 (bench/eta.ts), so the average so far, the old estimate, was 20–30 % short once the
 * bigger cells came last. Here the time per run is fitted as a + b × agents over the
 * runs played so far (least squares on each size's mean, weighted by its runs) and
 * applied to the runs left of each size. A size enters the fit once its runs took
 * MIN_FIT_MS: the first runs of a new size last a few milliseconds, and one pause (a
 * collection, a sync, a checkpoint) among them made a slope from nothing — paper-byzantine's
 * ETA once read 181 % long. While fewer than two sizes are in the fit the time is
 * taken as proportional to agents + PRIOR_AGENTS (see there). When
 * bigger cells were cheaper (b < 0), b is 0: the plain average. A cost quadratic in the
 * agents was tried before and was 80 % too long (NOTES.md): the messages of a round are
 * not what a run costs.
 */
import type { Plan } from './plan.js';

/**
 * With one cell size played: the time per run taken as ∝ agents + 12. Measured with
 * rule-based agents (paper-benign, bench/eta.ts --trace, a quiet machine): a run of 8
 * agents took 1.3× one of 4, of 16 agents 1.7×; agents + 12 gives 1.25× and 1.75×.
 * Model-backed agents cost closer to ∝ agents (a call per agent per round), so for them
 * this is still short, but less than the plain average.
 */
const PRIOR_AGENTS = 12;

/** Play time a cell size needs before its mean enters the fit: a 100 ms pause then moves it 5 % at most. */
const MIN_FIT_MS = 2000;

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

  /**
   * Weighted least squares of ms per run on agents over the sizes played long enough,
   * b ≥ 0; with fewer than two such sizes, the prior (see the module comment). Called
   * for every record: no allocation.
   */
  #fit(): { a: number; b: number } | undefined {
    const all = { runs: 0, agents: 0, ms: 0 };
    const fit = { runs: 0, agents: 0, ms: 0, sizes: 0 };
    for (const [n, p] of this.#played) {
      all.runs += p.runs;
      all.agents += p.runs * n;
      all.ms += p.ms;
      if (p.ms < MIN_FIT_MS) continue;
      fit.runs += p.runs;
      fit.agents += p.runs * n;
      fit.ms += p.ms;
      fit.sizes++;
    }
    if (all.runs === 0) return undefined;
    if (fit.sizes < 2) {
      const b = all.ms / all.runs / (all.agents / all.runs + PRIOR_AGENTS);
      return { a: (all.ms - b * all.agents) / all.runs, b };
    }
    const meanAgents = fit.agents / fit.runs;
    const meanMs = fit.ms / fit.runs;
    let sxx = 0;
    let sxy = 0;
    for (const [n, p] of this.#played) {
      if (p.ms < MIN_FIT_MS) continue;
      sxx += p.runs * (n - meanAgents) ** 2;
      sxy += (n - meanAgents) * (p.ms - p.runs * meanMs);
    }
    const b = Math.max(0, sxy / sxx);
    return { a: meanMs - b * meanAgents, b };
  }
}
