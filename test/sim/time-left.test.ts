/**
 * The progress line's estimate of the time left (time-left.ts): the time per run as
 * a + b × agents, fitted on the sizes played for 2 s or more (else ∝ agents + 12),
 * applied to the runs left of each size.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { lazyPlan } from '../../src/sim/experiment/plan.js';
import { parseExperiment } from '../../src/sim/experiment/schema.js';
import { TimeLeft } from '../../src/sim/experiment/time-left.js';

/** Cells of 4, 8 and 16 honest agents, `runs` each, in that order. */
const plan = (runs: number) =>
  lazyPlan(parseExperiment({ name: 'eta', seed: 1, runs, grid: { honest: [4, 8, 16], byzantine: 0 } }));

/** Plays the plan's runs cell by cell (4, then 8, then 16 agents), each taking `cost(agents)` ms, until `until` runs were played; returns the estimate then. */
function estimateAfter(
  until: number,
  cost: (agents: number) => number,
  runs = 10,
  done?: Set<number>,
): number | undefined {
  const p = plan(runs);
  let now = 0;
  const left = new TimeLeft(p, done && { has: (r) => done.has(r.seq) }, now);
  let played = 0;
  // seq is index-major (seq mod 3 is the cell): walk it cell by cell.
  const order = Array.from({ length: p.end }, (_, seq) => seq).sort((a, b) => (a % 3) - (b % 3) || a - b);
  for (const seq of order) {
    if (played >= until) break;
    if (done?.has(seq)) continue;
    const agents = p.cellAt(seq)!.honest;
    now += cost(agents);
    left.played(agents, now);
    played++;
  }
  return left.estimateMs();
}

describe('TimeLeft', () => {
  it('has no estimate before a run finished', () => {
    expect(estimateAfter(0, () => 5)).toBeUndefined();
  });
  it('takes the time per run as proportional to agents + 12 while one cell size was played', () => {
    // 5 of the 4-agent runs at 3 ms = 16 × 0.1875: 5 runs of 4 agents, 10 of 8 and 10 of 16 left.
    expect(estimateAfter(5, () => 3)).toBeCloseTo(5 * 3 + 10 * 20 * 0.1875 + 10 * 28 * 0.1875, 6);
  });
  it('is exact for the cells not yet played when the cost is linear in the agents', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 2, max: 50 }),
        fc.integer({ min: 0, max: 20 }),
        fc.integer({ min: 11, max: 20 }),
        (a, b, played) => {
          // Runs of 2 s or more: every size played is fitted.
          const cost = (agents: number) => 1000 * (a + b * agents);
          // After all 10 runs of 4 agents and some of 8: 20 − (played − 10) runs of 8 and 16 left.
          const want = (20 - played) * cost(8) + 10 * cost(16);
          expect(estimateAfter(played, cost)).toBeCloseTo(want, 3);
        },
      ),
    );
  });
  it('falls back to the average when bigger cells were cheaper', () => {
    // 10 runs of 4 agents at 9 s, 5 of 8 at 3 s: 105 / 15 = 7 s a run, 15 runs left.
    expect(estimateAfter(15, (agents) => (agents === 4 ? 9000 : 3000))).toBeCloseTo(105_000, 3);
  });
  it('does not fit a slope to the first moments of a new cell size (one pause there once made the ETA 181 % long)', () => {
    // 100 runs of 4 agents at 50 ms, then one of 8 agents held up 500 ms: the flat average would say 54.5 ms a run.
    const estimate = estimateAfter(101, (agents) => (agents === 4 ? 50 : 500), 100)!;
    const flat = ((100 * 50 + 500) / 101) * 199;
    expect(estimate).toBeGreaterThan(flat);
    expect(estimate).toBeLessThan(2 * flat);
  });
  it('counts only the runs left, not those already in the file', () => {
    // Every run of 16 agents is done: after the 4-agent cell, the 8-agent one is all that is left (2 ms ∝ 16, so 2.5 ms ∝ 20).
    const done = new Set(Array.from({ length: 10 }, (_, i) => 3 * i + 2));
    expect(estimateAfter(10, () => 2, 10, done)).toBeCloseTo(25, 6);
  });
});
