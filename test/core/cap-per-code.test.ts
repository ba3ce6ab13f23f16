import { describe, expect, it } from 'vitest';
import { capPerCode } from '../../src/core/cap-per-code.js';

const item = (code: string, n: number) => ({ code, message: `${code} ${n}` });

describe('capPerCode', () => {
  it('keeps the first max of each code in order, then one item per capped code counting the rest', () => {
    const items = [item('A', 1), item('B', 1), item('A', 2), item('A', 3), item('B', 2), item('A', 4)];
    expect(capPerCode(items, 2, (code, more) => ({ code, message: `${more} more` }))).toEqual([item('A', 1), item('B', 1), item('A', 2), item('B', 2), { code: 'A', message: '2 more' }]);
  });
  it('returns the items unchanged when no code reaches the cap', () => {
    const items = [item('A', 1), item('B', 1)];
    expect(capPerCode(items, 5, () => item('X', 0))).toEqual(items);
  });
});
