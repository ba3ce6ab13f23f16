import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Rng } from '../../src/core/rng.js';

describe('Rng', () => {
  it('gives the same sequence for the same base seed and run id', () => {
    const a = Rng.forRun(42, 'run-1');
    const b = Rng.forRun(42, 'run-1');
    const seqA = Array.from({ length: 20 }, () => a.nextUint32());
    const seqB = Array.from({ length: 20 }, () => b.nextUint32());
    expect(seqA).toEqual(seqB);
  });
  it('gives different sequences for different run ids', () => {
    const a = Rng.forRun(42, 'run-1');
    const b = Rng.forRun(42, 'run-2');
    expect(Array.from({ length: 4 }, () => a.nextUint32())).not.toEqual(
      Array.from({ length: 4 }, () => b.nextUint32()),
    );
  });
  it('pins its first outputs so an algorithm change cannot go unnoticed', () => {
    const r = Rng.forRun(1, 'a');
    const first = [r.nextUint32(), r.nextUint32(), r.nextUint32()];
    // Recorded from this implementation; a change here changes every results file.
    expect(first).toMatchSnapshot();
  });
  it('int stays within its inclusive bounds', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: -1000, max: 1000 }),
        fc.integer({ min: 0, max: 2000 }),
        fc.string(),
        (lo, width, id) => {
          const r = Rng.forRun(7, id);
          for (let i = 0; i < 50; i++) {
            const x = r.int(lo, lo + width);
            expect(x).toBeGreaterThanOrEqual(lo);
            expect(x).toBeLessThanOrEqual(lo + width);
          }
        },
      ),
    );
  });
  it('int covers every value of a small range roughly uniformly', () => {
    const r = Rng.forRun(3, 'uniform');
    const counts = new Array(6).fill(0);
    for (let i = 0; i < 60000; i++) counts[r.int(0, 5)]++;
    for (const c of counts) expect(Math.abs(c - 10000)).toBeLessThan(500);
  });
  it('shuffle returns a permutation of its input', () => {
    fc.assert(
      fc.property(fc.array(fc.integer()), fc.string(), (items, id) => {
        const out = Rng.forRun(5, id).shuffle(items);
        expect([...out].sort((x, y) => x - y)).toEqual([...items].sort((x, y) => x - y));
      }),
    );
  });
  it('forks: the same label gives the same stream, different labels different streams', () => {
    const parent = Rng.forRun(9, 'run');
    const a = parent.fork('x');
    const b = Rng.forRun(9, 'run').fork('x');
    const c = parent.fork('y');
    const take = (r: Rng) => Array.from({ length: 8 }, () => r.nextUint32());
    const seqA = take(a);
    expect(seqA).toEqual(take(b));
    expect(seqA).not.toEqual(take(c));
  });
  it('forks do not depend on how much the parent has already drawn', () => {
    const fresh = Rng.forRun(9, 'run');
    const used = Rng.forRun(9, 'run');
    for (let i = 0; i < 10; i++) used.nextUint32();
    expect(fresh.fork('x').nextUint32()).toBe(used.fork('x').nextUint32());
  });
  it('rejects an empty or reversed int range', () => {
    expect(() => Rng.forRun(1, 'x').int(5, 4)).toThrow(RangeError);
  });
});
