/** Readers count each run once (unique-runs.ts), whatever order and repetition the lines come in. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { UniqueRuns } from '../../src/sim/experiment/unique-runs.js';

describe('UniqueRuns', () => {
  it('keeps the first line of every run and counts the rest as repeated', () => {
    fc.assert(
      fc.property(fc.array(fc.nat({ max: 40 }), { minLength: 1, maxLength: 200 }), (picks) => {
        const unique = new UniqueRuns();
        // Run k always sits at seq k, as in one plan.
        const kept = picks.filter((k) =>
          unique.keep({ id: `r-${k}`, seq: k, experiment: 'e', cell: `c${k % 3}`, index: Math.floor(k / 3) }),
        );
        expect(kept).toEqual([...new Set(picks)]);
        expect(unique.dropped).toEqual({ repeated: picks.length - kept.length, otherExperiment: 0, seqTaken: 0 });
      }),
    );
  });
  it('drops another experiment, and another run of the same cell and index at a seq already held (another seed)', () => {
    const unique = new UniqueRuns();
    expect(unique.keep({ id: 'a', seq: 0, experiment: 'e', cell: 'x', index: 0 })).toBe(true);
    expect(unique.keep({ id: 'b', seq: 1, experiment: 'other', cell: 'x', index: 1 })).toBe(false);
    expect(unique.keep({ id: 'c', seq: 0, experiment: 'e', cell: 'x', index: 0 })).toBe(false);
    expect(unique.keep({ id: 'd', seq: 5000, experiment: 'e', cell: 'x', index: 1 })).toBe(true);
    expect(unique.dropped).toEqual({ repeated: 0, otherExperiment: 1, seqTaken: 1 });
  });
  it('keeps a run of another cell or index at a seq already held (an older version ordered runs by --runs)', () => {
    const unique = new UniqueRuns();
    expect(unique.keep({ id: 'a', seq: 10, experiment: 'e', cell: 'y', index: 0 })).toBe(true);
    expect(unique.keep({ id: 'b', seq: 10, experiment: 'e', cell: 'x', index: 10 })).toBe(true);
    expect(unique.count).toBe(0);
  });
});
