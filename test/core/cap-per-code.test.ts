import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { capPerCode, LowestLinesPerCode } from '../../src/core/cap-per-code.js';

const item = (code: string, n: number) => ({ code, message: `${code} ${n}` });

describe('capPerCode', () => {
  it('keeps the first max of each code in order, then one item per capped code counting the rest', () => {
    const items = [item('A', 1), item('B', 1), item('A', 2), item('A', 3), item('B', 2), item('A', 4)];
    expect(capPerCode(items, 2, (code, more) => ({ code, message: `${more} more` }))).toEqual([
      item('A', 1),
      item('B', 1),
      item('A', 2),
      item('B', 2),
      { code: 'A', message: '2 more' },
    ]);
  });
  it('returns the items unchanged when no code reaches the cap', () => {
    const items = [item('A', 1), item('B', 1)];
    expect(capPerCode(items, 5, () => item('X', 0))).toEqual(items);
  });
});

describe('LowestLinesPerCode', () => {
  type Problem = { code: string; line?: number; n: number };
  const rest = (code: string, more: number): Problem => ({ code, n: -more });

  it('gives what capPerCode gives of the items stably sorted by line, whatever their order (property)', () => {
    const problem = fc.record({
      code: fc.constantFrom('A', 'B', 'C'),
      line: fc.option(fc.integer({ min: 1, max: 30 }), { nil: undefined }),
    });
    fc.assert(
      fc.property(fc.array(problem, { maxLength: 200 }), fc.integer({ min: 1, max: 8 }), (raw, max) => {
        const items: Problem[] = raw.map((p, n) =>
          p.line === undefined ? { code: p.code, n } : { code: p.code, line: p.line, n },
        );
        const sorted = [...items].sort(
          (a, b) => (a.line ?? Number.MAX_SAFE_INTEGER) - (b.line ?? Number.MAX_SAFE_INTEGER),
        );
        const list = new LowestLinesPerCode<Problem>(max, rest);
        for (const p of items) list.push(p);
        expect(list.items()).toEqual(capPerCode(sorted, max, rest));
        expect(list.size).toBe(items.length);
      }),
      { numRuns: 500 },
    );
  });
});
