/** Reading model replies the reference's way (agents/llm/reply.ts; docs/fidelity.md). */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseModelJson, readDecision, readVote } from '../../src/sim/agents/llm/reply.js';
import { InvalidAnswerError } from '../../src/sim/answers.js';
import type { Attempt } from '../../src/sim/types.js';

const ROUND: Attempt = { phase: 'round', number: 1, of: 3 };
const SINGLE: Attempt = { phase: 'single', number: 1, of: 3 };
const phrases = { defaultReasoning: 'Moving my proposal.' };
const range = [0, 50] as const;
const fails = (f: () => unknown) => expect(f).toThrow(InvalidAnswerError);

describe('JSON in a reply', () => {
  it('takes the whole reply, else the first point from the first brace where braces balance and the text parses', () => {
    expect(parseModelJson('  {"a": 1}\n')).toEqual({ a: 1 });
    expect(parseModelJson('Sure: {"a": {"b": 2}} and {"c": 3}')).toEqual({ a: { b: 2 } });
    expect(parseModelJson('```json\n{"a": 1}\n```')).toEqual({ a: 1 });
    expect(parseModelJson('<think>\n\n</think>\n\n{"a": 1}')).toEqual({ a: 1 });
    // Braces inside strings count, as in the reference: a balance that does not parse is passed over…
    expect(parseModelJson('x {"a": "}{"} y')).toEqual({ a: '}{' });
    // …and one that never comes back to zero finds nothing.
    fails(() => parseModelJson('x {"a": "}"} y'));
    fails(() => parseModelJson('{"a": 1'));
    fails(() => parseModelJson('no json here'));
    fails(() => parseModelJson('[1, 2]'));
    fails(() => parseModelJson('{"error": "engine failed"}'));
  });

  it('finds any object embedded in text that has no other braces', () => {
    fc.assert(
      fc.property(
        fc.string().filter((s) => !/[{}]/.test(s)),
        fc.string().filter((s) => !/[{}]/.test(s)),
        fc.dictionary(
          fc.string().filter((k) => k !== 'error' && !/[{}]/.test(k)),
          fc.integer(),
        ),
        (before, after, object) => {
          const text = `${before}${JSON.stringify(object)}${after}`;
          expect(parseModelJson(text)).toEqual(JSON.parse(JSON.stringify(object)));
        },
      ),
    );
  });
});

describe('a proposal', () => {
  const honest = (a: Record<string, unknown>, attempt = ROUND) => readDecision(a, 'honest', range, attempt, phrases);
  const byzantine = (a: Record<string, unknown>, attempt = ROUND) =>
    readDecision(a, 'byzantine', range, attempt, phrases);
  const good = { internal_strategy: 'Go low.', value: 12, public_reasoning: 'Twelve is near the middle.' };

  it('in a whole-round try needs a value, a note of 3+ and reasoning of 10+ characters after trimming', () => {
    expect(honest(good)).toEqual({
      value: 12,
      publicReasoning: good.public_reasoning,
      internalStrategy: good.internal_strategy,
    });
    fails(() => honest({ ...good, value: null }));
    fails(() => honest({ ...good, internal_strategy: '  ab  ' }));
    fails(() => honest({ ...good, public_reasoning: '   123456789   ' }));
    expect(honest({ ...good, public_reasoning: '1234567890' }).publicReasoning).toBe('1234567890');
    // Ten characters are code points: five emoji pass.
    expect(honest({ ...good, public_reasoning: '😀😀😀😀😀😀😀😀😀😀' }).value).toBe(12);
  });

  it("trims as Python's str.strip does: control separators and NEL are spaces, a byte-order mark is not", () => {
    fails(() => honest({ ...good, internal_strategy: '\x1f\x1cab\x85' }));
    fails(() => honest({ ...good, public_reasoning: '\x1e123456789\x1d' }));
    expect(honest({ ...good, internal_strategy: '\ufeffab' }).value).toBe(12);
    fails(() => honest({ ...good, internal_strategy: 'x', public_reasoning: '\x1f\x85' }, SINGLE));
  });

  it('in a single follow-up needs only non-empty fields (honest) or a note and an integer or abstain (Byzantine)', () => {
    expect(honest({ ...good, internal_strategy: 'x', public_reasoning: 'y' }, SINGLE).publicReasoning).toBe('y');
    fails(() => honest({ ...good, public_reasoning: ' ' }, SINGLE));
    expect(byzantine({ internal_strategy: 'x', value: 7 }, SINGLE)).toMatchObject({
      value: 7,
      publicReasoning: 'Moving my proposal.',
    });
    fails(() => byzantine({ internal_strategy: 'x', value: 7.5 }, SINGLE));
  });

  it('clamps a value out of range and cuts a fraction toward zero instead of refusing it', () => {
    expect(honest({ ...good, value: 99 }).value).toBe(50);
    expect(honest({ ...good, value: -3 }).value).toBe(0);
    expect(honest({ ...good, value: 7.9 }).value).toBe(7);
    fails(() => honest({ ...good, value: 'abstain' }));
  });

  it('lets a Byzantine agent abstain in a whole-round try, and ends its tries with its note when it abstains in a single follow-up', () => {
    expect(byzantine({ ...good, value: 'abstain' })).toMatchObject({
      value: 'abstain',
      publicReasoning: good.public_reasoning,
      internalStrategy: 'Go low.',
    });
    let error: unknown;
    try {
      byzantine({ internal_strategy: 'Hide.', value: 'abstain' }, SINGLE);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(InvalidAnswerError);
    expect(error).toMatchObject({ final: true, note: 'Hide.' });
  });

  it('takes a Byzantine value that is neither an integer nor abstain as an abstention with no reasoning', () => {
    expect(byzantine({ ...good, value: 12.5 })).toMatchObject({ value: 'abstain', publicReasoning: '' });
    expect(byzantine({ ...good, value: 'twelve' })).toMatchObject({ value: 'abstain', publicReasoning: '' });
  });
});

describe('a vote', () => {
  it('in a whole-round try must be exactly stop or continue, so a Byzantine abstain is retried', () => {
    expect(readVote({ decision: 'stop' }, 'honest', ROUND)).toBe('stop');
    fails(() => readVote({ decision: 'abstain' }, 'byzantine', ROUND));
    fails(() => readVote({ decision: ' stop' }, 'honest', ROUND));
    fails(() => readVote({ decision: 'maybe' }, 'honest', ROUND));
  });

  it('in a single follow-up takes surrounding spaces, and a Byzantine abstain', () => {
    expect(readVote({ decision: ' stop ' }, 'honest', SINGLE)).toBe('stop');
    expect(readVote({ decision: 'abstain' }, 'byzantine', SINGLE)).toBe('abstain');
    fails(() => readVote({ decision: 'abstain' }, 'honest', SINGLE));
    fails(() => readVote({ decision: 'STOP' }, 'honest', SINGLE));
  });

  it("in a single follow-up trims as Python's str.strip does: a unit separator is a space, a byte-order mark is not", () => {
    expect(readVote({ decision: '\x1fstop\x85' }, 'honest', SINGLE)).toBe('stop');
    fails(() => readVote({ decision: '\ufeffstop' }, 'honest', SINGLE));
  });
});
