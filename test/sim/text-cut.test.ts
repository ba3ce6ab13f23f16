import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CUT_MARK, cutText, headOf, sealRound, summarizeRound } from '../../src/sim/network.js';
import type { Message, PublicRound } from '../../src/sim/types.js';

/** Strings of whole code points, surrogate pairs and lone surrogates mixed. */
const text = fc
  .array(
    fc.oneof(
      fc.string({ unit: 'grapheme-ascii', maxLength: 4 }),
      fc.string({ unit: 'binary', maxLength: 4 }),
      fc.integer({ min: 0xd800, max: 0xdfff }).map((unit) => String.fromCharCode(unit)),
    ),
    { maxLength: 40 },
  )
  .map((parts) => parts.join(''));

/** The definitions both functions must keep: Python's slicing over code points, as Array.from counts them. */
const cutByPoints = (s: string, limit: number) => {
  const points = Array.from(s);
  return points.length > limit ? `${points.slice(0, limit - CUT_MARK.length).join('')}${CUT_MARK}` : s;
};
const headByPoints = (s: string, limit: number) => Array.from(s).slice(0, limit).join('');

describe('cutting text in code points', () => {
  it('cutText gives what slicing the array of code points gives, for any text and limit', () => {
    fc.assert(
      fc.property(text, fc.integer({ min: 0, max: 50 }), (s, limit) => {
        expect(cutText(s, limit)).toBe(cutByPoints(s, limit));
      }),
    );
  });
  it('headOf gives what slicing the array of code points gives, for any text and limit', () => {
    fc.assert(
      fc.property(text, fc.integer({ min: 0, max: 50 }), (s, limit) => {
        expect(headOf(s, limit)).toBe(headByPoints(s, limit));
      }),
    );
  });
  it('keeps a surrogate pair whole at the cut and counts a lone surrogate as one character', () => {
    expect(cutText(`ab😀cd${'e'.repeat(10)}`, 6)).toBe('ab😀...');
    expect(headOf('a\ud800b😀', 3)).toBe('a\ud800b');
    expect(headOf('a😀\udc00', 2)).toBe('a😀');
  });
});

describe('the history line of a round', () => {
  const round = () =>
    sealRound(2, ['agent_0', 'agent_1', 'agent_2'], [4, 'abstain', 9], ['x'.repeat(60), 'short', 'y'.repeat(30)]);
  /** The same round as plain objects, which summarizeRound never keeps a line for. */
  const plain = (r: PublicRound): PublicRound => ({
    round: r.round,
    messages: r.messages.map((m) => ({ round: m.round, from: m.from, value: m.value, reasoning: m.reasoning })),
    values: r.values.slice(),
  });

  it('is the same whether a sealed round is asked for once or again, whatever limit was asked in between', () => {
    const sealed = round();
    const first = summarizeRound(sealed);
    const shorter = summarizeRound(sealed, 10);
    expect(summarizeRound(sealed)).toBe(first);
    expect(summarizeRound(sealed, 10)).toBe(shorter);
    expect(first).toBe(summarizeRound(plain(sealed)));
    expect(shorter).toBe(summarizeRound(plain(sealed), 10));
    expect(shorter).not.toBe(first);
  });
  it('follows a round that is not sealed when its messages change between calls', () => {
    const messages: Message[] = [{ round: 1, from: 'agent_0', value: 3, reasoning: 'first' }];
    const open: PublicRound = { round: 1, messages, values: [3] };
    expect(summarizeRound(open)).toBe('Round 1: agent_0 value: 3 | Reasoning: first');
    messages[0] = { round: 1, from: 'agent_0', value: 5, reasoning: 'second' };
    expect(summarizeRound(open)).toBe('Round 1: agent_0 value: 5 | Reasoning: second');
  });
});
