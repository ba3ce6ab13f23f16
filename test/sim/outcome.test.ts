import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { classifyOutcome, shouldStop } from '../../src/sim/outcome.js';

describe('stop rule: stop votes ≥ 2N/3 of all agents', () => {
  it('stops N = 9 at 6 stop votes but not at 5', () => {
    expect(shouldStop(6, 9)).toBe(true);
    expect(shouldStop(5, 9)).toBe(false);
  });
  it('needs 7 stop votes for N = 10', () => {
    expect(shouldStop(7, 10)).toBe(true);
    expect(shouldStop(6, 10)).toBe(false);
  });
  it('agrees with the real-number rule s ≥ 2N/3 for every N and s', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 500 }), fc.integer({ min: 0, max: 500 }), (n, s) => {
        fc.pre(s <= n);
        expect(shouldStop(s, n)).toBe(s >= Math.ceil((2 * n) / 3));
      }),
    );
  });
});

describe('outcomes', () => {
  it('is valid when stopped and honest agents agree on an honest initial value', () => {
    expect(classifyOutcome({ honestInitial: [3, 7], honestFinal: [7, 7], stoppedByVote: true })).toBe('valid');
  });
  it('is invalid when stopped and honest agents agree on a value nobody honest started with', () => {
    expect(classifyOutcome({ honestInitial: [3, 7], honestFinal: [50, 50], stoppedByVote: true })).toBe('invalid');
  });
  it('is none when stopped while honest agents still differ', () => {
    expect(classifyOutcome({ honestInitial: [3, 7], honestFinal: [3, 7], stoppedByVote: true })).toBe('none');
  });
  it('is timeout without a stop vote, even when honest agents agree', () => {
    expect(classifyOutcome({ honestInitial: [3, 7], honestFinal: [7, 7], stoppedByVote: false })).toBe('timeout');
  });
});
