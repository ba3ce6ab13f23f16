import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { normalQuantile, summarizeCells, wilsonInterval } from '../../src/sim/stats.js';

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

describe('summarizeCells', () => {
  it('counts outcomes per cell in order of first appearance, with rounds mean and median', () => {
    const runs = [
      { cell: 'b', honest: 4, byzantine: 0, outcome: 'valid' as const, rounds: 2, decisions: 16 },
      { cell: 'a', honest: 4, byzantine: 1, outcome: 'timeout' as const, rounds: 50, decisions: 400 },
      { cell: 'b', honest: 4, byzantine: 0, outcome: 'none' as const, rounds: 3, decisions: 24 },
      { cell: 'b', honest: 4, byzantine: 0, outcome: 'valid' as const, rounds: 7, decisions: 56 },
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
});
