/**
 * Newcombe's method 10 for the difference of paired proportions (paired-interval.ts),
 * against a published worked example and the interval's invariants.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { newcombePairedInterval } from '../../src/sim/paired-interval.js';

describe('newcombePairedInterval', () => {
  it('gives the worked example of Fagerland, Lydersen and Laake (Cavo et al. 2012): −0.0621 (−0.1186 to −0.0046)', () => {
    // Statistical Analysis of Contingency Tables (2017), ch. 8: complete response before
    // and after consolidation therapy, [[59, 6], [16, 80]]; the book's p₁₊ − p₊₁ is our
    // first − second, so our second − first is its negation.
    const r = newcombePairedInterval({ both: 59, firstOnly: 6, secondOnly: 16, neither: 80 });
    expect(r.difference).toBeCloseTo(0.0621, 4);
    expect(r.low).toBeCloseTo(0.0046, 4);
    expect(r.high).toBeCloseTo(0.1186, 4);
  });
  const table = fc.record({
    both: fc.nat({ max: 60 }),
    firstOnly: fc.nat({ max: 60 }),
    secondOnly: fc.nat({ max: 60 }),
    neither: fc.nat({ max: 60 }),
  });
  it('holds the estimate, stays in [−1, 1], and is mirrored when the two conditions swap', () => {
    fc.assert(
      fc.property(table, (t) => {
        const r = newcombePairedInterval(t);
        expect(r.low).toBeGreaterThanOrEqual(-1);
        expect(r.high).toBeLessThanOrEqual(1);
        expect(r.low).toBeLessThanOrEqual(r.difference + 1e-12);
        expect(r.high).toBeGreaterThanOrEqual(r.difference - 1e-12);
        const swapped = newcombePairedInterval({ ...t, firstOnly: t.secondOnly, secondOnly: t.firstOnly });
        expect(swapped.difference).toBeCloseTo(-r.difference, 12);
        expect(swapped.low).toBeCloseTo(-r.high, 12);
        expect(swapped.high).toBeCloseTo(-r.low, 12);
      }),
    );
  });
  it('is narrower, with the correlation of paired runs, than the square-and-add of the two Wilson intervals (independent samples)', () => {
    // Concordant pairs dominate (ad − bc > n/2): φ > 0 makes the paired interval shorter.
    const r = newcombePairedInterval({ both: 40, firstOnly: 3, secondOnly: 9, neither: 48 });
    const n = 100;
    const z = 1.959963984540054;
    const wilson = (x: number) => {
      const p = x / n;
      const c = (p + (z * z) / (2 * n)) / (1 + (z * z) / n);
      const h = (z / (1 + (z * z) / n)) * Math.sqrt((p * (1 - p)) / n + (z * z) / (4 * n * n));
      return [c - h, c + h] as const;
    };
    const [l1, u1] = wilson(43);
    const [l2, u2] = wilson(49);
    const squareAndAdd =
      Math.sqrt((0.49 - l2) ** 2 + (u1 - 0.43) ** 2) + Math.sqrt((u2 - 0.49) ** 2 + (0.43 - l1) ** 2);
    expect(r.high - r.low).toBeLessThan(squareAndAdd);
  });
  it('refuses counts that are not whole numbers ≥ 0', () => {
    expect(() => newcombePairedInterval({ both: 1, firstOnly: -1, secondOnly: 0, neither: 0 })).toThrow(RangeError);
  });
});
