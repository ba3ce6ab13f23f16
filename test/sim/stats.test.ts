import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  convergenceRound,
  normalQuantile,
  type SummaryInput,
  SummaryAccumulator,
  summarizeCells,
  summarizeGroups,
  wilsonInterval,
} from '../../src/sim/stats.js';
import type { Outcome, Proposal, Role } from '../../src/sim/types.js';

describe('wilsonInterval', () => {
  it('matches published values: 5 of 10 → [0.2366, 0.7634]', () => {
    const ci = wilsonInterval(5, 10);
    expect(ci.low).toBeCloseTo(0.2366, 4);
    expect(ci.high).toBeCloseTo(0.7634, 4);
  });
  it('is informative at zero successes: 0 of 25 → [0, 0.1332]', () => {
    const ci = wilsonInterval(0, 25);
    expect(ci.low).toBe(0);
    expect(ci.high).toBeCloseTo(0.1332, 4);
  });
  it('reaches exactly 1 at all successes', () => {
    expect(wilsonInterval(25, 25).high).toBe(1);
  });
  it('widens with confidence', () => {
    const a = wilsonInterval(30, 100, 0.9);
    const b = wilsonInterval(30, 100, 0.99);
    expect(b.high - b.low).toBeGreaterThan(a.high - a.low);
  });
  it('always contains the observed rate and stays within [0, 1]', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 5000 }), fc.double({ min: 0, max: 1, noNaN: true }), (n, f) => {
        const k = Math.floor(f * n);
        const ci = wilsonInterval(k, n);
        expect(ci.low).toBeGreaterThanOrEqual(0);
        expect(ci.high).toBeLessThanOrEqual(1);
        expect(ci.low).toBeLessThanOrEqual(k / n + 1e-12);
        expect(ci.high).toBeGreaterThanOrEqual(k / n - 1e-12);
      }),
    );
  });
  it('rejects impossible counts', () => {
    expect(() => wilsonInterval(3, 2)).toThrow(RangeError);
    expect(() => wilsonInterval(-1, 2)).toThrow(RangeError);
    expect(() => wilsonInterval(1, 2, 1)).toThrow(RangeError);
  });
});

describe('normalQuantile', () => {
  it('gives 1.959964 for the 97.5th percentile', () => {
    expect(normalQuantile(0.975)).toBeCloseTo(1.959964, 5);
  });
  it('is antisymmetric around 0.5, also in the tails', () => {
    for (const p of [0.001, 0.01, 0.2, 0.4]) expect(normalQuantile(p)).toBeCloseTo(-normalQuantile(1 - p), 8);
  });
});

/** A run with no trajectory: enough for outcome and rounds counts. */
const run = (cell: string, outcome: Outcome, rounds: number, extra: Partial<SummaryInput> = {}) => ({
  cell,
  honest: 4,
  byzantine: 0,
  outcome,
  rounds,
  roles: [],
  initial: {},
  trajectory: [],
  ...extra,
});

describe('summarizeCells', () => {
  it('counts outcomes per cell in order of first appearance, with rounds mean and median', () => {
    const runs = [
      run('b', 'valid', 2, { decisions: 16 }),
      run('a', 'timeout', 50, { byzantine: 1, decisions: 400 }),
      run('b', 'none', 3, { decisions: 24 }),
      run('b', 'valid', 7, { decisions: 56 }),
    ];
    const [b, a] = summarizeCells(runs);
    expect(b?.cell).toBe('b');
    expect(b?.runs).toBe(3);
    expect(b?.outcomes.valid.count).toBe(2);
    expect(b?.outcomes.none.rate).toBeCloseTo(1 / 3);
    expect(b?.rounds.median).toBe(3);
    expect(b?.rounds.mean).toBe(4);
    expect(b?.decisions).toBe(32);
    expect(a?.outcomes.timeout.count).toBe(1);
  });
  it('counts no_consensus as none + timeout, with its own Wilson interval', () => {
    const runs = [
      run('c', 'none', 5),
      run('c', 'timeout', 50),
      run('c', 'timeout', 50),
      run('c', 'valid', 4),
      run('c', 'invalid', 6),
      run('c', 'escalated', 30),
    ];
    const [c] = summarizeCells(runs);
    expect(c!.no_consensus.count).toBe(3);
    expect(c!.no_consensus.rate).toBe(0.5);
    expect(c!.no_consensus.ci).toEqual(wilsonInterval(3, 6));
  });
  it('gives h and b of the runs, or null when pooled runs differ', () => {
    const [same] = summarizeCells([run('x', 'valid', 1), run('x', 'valid', 1)]);
    expect([same!.honest, same!.byzantine]).toEqual([4, 0]);
    const [mixed] = summarizeCells([run('x', 'valid', 1), run('x', 'valid', 1, { byzantine: 2 })]);
    expect([mixed!.honest, mixed!.byzantine]).toEqual([4, null]);
  });
  it('refuses to summarise no runs', () => {
    expect(() => new SummaryAccumulator().finish()).toThrow(RangeError);
  });
});

/** Hand-built games: agents a0..a3, `byzantine` marks which are Byzantine; rows are each round's proposals. */
function game(rows: Proposal[][], byzantine: number[] = [], initial: number[] = [10, 20, 30]) {
  const roles = rows[0]!.map((_, i) => (byzantine.includes(i) ? 'byzantine' : 'honest') as Role);
  const honestIds = roles.flatMap((r, i) => (r === 'honest' ? [`a${i}`] : []));
  return {
    roles,
    initial: Object.fromEntries(honestIds.map((id, k) => [id, initial[k % initial.length]!])),
    trajectory: rows.map((values, i) => ({ round: i + 1, values })),
  };
}

describe("convergenceRound (the reference's convergence_speed)", () => {
  it('is the first round in which every honest agent holds the same honest initial value', () => {
    expect(
      convergenceRound(
        game([
          [10, 20, 30],
          [20, 20, 30],
          [20, 20, 20],
          [20, 20, 20],
        ]),
      ),
    ).toBe(3);
  });
  it('keeps the first round when the agents agree and then drift apart again', () => {
    expect(
      convergenceRound(
        game([
          [10, 20, 30],
          [30, 30, 30],
          [30, 29, 30],
          [10, 20, 30],
        ]),
      ),
    ).toBe(2);
  });
  it('is null when the honest agents never agree', () => {
    expect(
      convergenceRound(
        game([
          [10, 20, 30],
          [20, 10, 30],
          [20, 30, 20],
        ]),
      ),
    ).toBeNull();
  });
  it('ignores Byzantine values, proposals and abstentions alike', () => {
    const g = game(
      [
        [10, 20, 30, 'abstain'],
        [20, 20, 20, 49],
        [20, 20, 20, 'abstain'],
      ],
      [3],
    );
    expect(convergenceRound(g)).toBe(2);
  });
  it('does not count agreement on a value no honest agent started with, even one a Byzantine agent proposed', () => {
    const g = game(
      [
        [25, 25, 25, 25],
        [31, 31, 31, 31],
        [30, 30, 30, 7],
      ],
      [3],
    );
    expect(convergenceRound(g)).toBe(3);
    expect(
      convergenceRound(
        game([
          [25, 25, 25],
          [25, 25, 25],
        ]),
      ),
    ).toBeNull();
  });
  it('leaves out an honest agent without a value, as the reference skips None', () => {
    expect(convergenceRound(game([['abstain', 20, 20]]))).toBe(1);
  });
  it('uses the round numbers of the trajectory', () => {
    const g = game([
      [10, 20, 30],
      [20, 20, 20],
    ]);
    expect(convergenceRound({ ...g, trajectory: g.trajectory.map((r) => ({ ...r, round: r.round + 10 })) })).toBe(12);
  });
  it('equals the definition read literally on any run', () => {
    // The definition, with no shortcut: the honest agents' values each round, then the test.
    const literal = (g: ReturnType<typeof game>) => {
      const honestInitial = new Set(Object.values(g.initial));
      for (const row of g.trajectory) {
        const held = row.values.filter((v, i) => g.roles[i] === 'honest' && typeof v === 'number');
        if (held.length > 0 && held.every((v) => v === held[0]) && honestInitial.has(held[0] as number))
          return row.round;
      }
      return null;
    };
    const value = fc.oneof(fc.integer({ min: 0, max: 3 }), fc.constant<Proposal>('abstain'));
    const arbGame = fc.integer({ min: 1, max: 6 }).chain((n) =>
      fc.record({
        rows: fc.array(fc.array(value, { minLength: n, maxLength: n }), { minLength: 1, maxLength: 5 }),
        byzantine: fc.uniqueArray(fc.nat({ max: n - 1 }), { maxLength: n - 1 }),
        initial: fc.array(fc.integer({ min: 0, max: 3 }), { minLength: 1, maxLength: 3 }),
      }),
    );
    fc.assert(
      fc.property(arbGame, ({ rows, byzantine, initial }) => {
        const g = game(rows, byzantine, initial);
        expect(convergenceRound(g)).toBe(literal(g));
      }),
      { numRuns: 500 },
    );
  });
});

describe('convergence in summaries', () => {
  it('counts runs that converged and gives mean and median of their first round', () => {
    const runs = [
      {
        ...run('c', 'valid', 3),
        ...game([
          [10, 20, 30],
          [20, 20, 30],
          [20, 20, 20],
        ]),
      }, // round 3
      {
        ...run('c', 'none', 2),
        ...game([
          [30, 30, 30],
          [10, 20, 30],
        ]),
      }, // round 1, then apart
      {
        ...run('c', 'timeout', 2),
        ...game([
          [10, 20, 30],
          [20, 10, 30],
        ]),
      }, // never
      { ...run('c', 'valid', 8), ...game([...Array(7).fill([10, 20, 30]), [10, 10, 10]]) }, // round 8
    ];
    const [c] = summarizeCells(runs);
    expect(c!.convergence.count).toBe(3);
    expect(c!.convergence.ci).toEqual(wilsonInterval(3, 4));
    expect(c!.convergence.mean_round).toBe(4);
    expect(c!.convergence.median_round).toBe(3);
    // The reference's summaries average over the valid runs: rounds 3 and 8.
    expect(c!.convergence.valid_mean_round).toBe(5.5);
  });
  it('has no round when no run converged', () => {
    const [c] = summarizeCells([
      {
        ...run('c', 'timeout', 2),
        ...game([
          [10, 20, 30],
          [20, 10, 30],
        ]),
      },
    ]);
    expect(c!.convergence).toMatchObject({ count: 0, mean_round: null, median_round: null, valid_mean_round: null });
  });
});

describe('pooling (property)', () => {
  const arbRun = fc.record({
    cell: fc.constantFrom('a', 'b', 'c'),
    outcome: fc.constantFrom<Outcome>('valid', 'invalid', 'none', 'timeout', 'escalated'),
    rounds: fc.integer({ min: 0, max: 60 }),
    first: fc.option(fc.integer({ min: 1, max: 5 }), { nil: null }),
  });
  const toInput = (r: { cell: string; outcome: Outcome; rounds: number; first: number | null }) => ({
    ...run(r.cell, r.outcome, r.rounds),
    ...game(Array.from({ length: 5 }, (_, i) => (r.first !== null && i + 1 === r.first ? [20, 20, 20] : [10, 20, 30]))),
  });
  it('a pool of all runs has the counts of its cells added up, whatever the order', () => {
    fc.assert(
      fc.property(fc.array(arbRun, { minLength: 1, maxLength: 60 }), fc.integer(), (raw, seed) => {
        const runs = raw.map(toInput);
        const cells = summarizeCells(runs);
        const shuffled = [...runs].sort((x, y) => ((x.rounds * 7919 + seed) % 13) - ((y.rounds * 7919 + seed) % 13));
        const pooled = summarizeGroups(shuffled, () => 'all').get('all')!;
        expect(pooled.runs).toBe(runs.length);
        for (const o of ['valid', 'invalid', 'none', 'timeout', 'escalated'] as const) {
          expect(pooled.outcomes[o].count).toBe(cells.reduce((s, c) => s + c.outcomes[o].count, 0));
        }
        expect(pooled.no_consensus.count).toBe(pooled.outcomes.none.count + pooled.outcomes.timeout.count);
        expect(pooled.convergence.count).toBe(raw.filter((r) => r.first !== null).length);
      }),
    );
  });
  it('mean and median from counts equal those of the sorted list', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 50 }), { minLength: 1, maxLength: 80 }), (rounds) => {
        const [c] = summarizeCells(rounds.map((r) => run('x', 'valid', r)));
        const sorted = [...rounds].sort((a, b) => a - b);
        const mid = sorted.length >> 1;
        const median = sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
        expect(c!.rounds.median).toBe(median);
        expect(c!.rounds.mean).toBeCloseTo(rounds.reduce((s, x) => s + x, 0) / rounds.length, 9);
      }),
    );
  });
});
