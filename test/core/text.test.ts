import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isWitnessError } from '../../src/core/errors.js';
import { checkWellFormedText, checkWellFormedValue, loneSurrogateIndex } from '../../src/core/text.js';

describe('well-formed text', () => {
  it('accepts text with surrogate pairs and refuses lone surrogates wherever they are', () => {
    expect(loneSurrogateIndex('a😀b')).toBe(-1);
    expect(loneSurrogateIndex('\ud800')).toBe(0);
    expect(loneSurrogateIndex('ab\udc00')).toBe(2);
    expect(loneSurrogateIndex('\ud83d\ud83d\ude00')).toBe(0);
    expect(loneSurrogateIndex('x\ud83d')).toBe(1);
  });

  it('agrees with the engine: well formed exactly when it survives a UTF-8 round trip', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (s) => {
        const roundTrips = Buffer.from(s, 'utf8').toString('utf8') === s;
        expect(loneSurrogateIndex(s) === -1).toBe(roundTrips);
      }),
      { numRuns: 2000 },
    );
  });

  it('names the field and the code unit in an INVALID_INPUT error', () => {
    try {
      checkWellFormedText('ok\udfff', 'body');
      expect.unreachable();
    } catch (error) {
      expect(isWitnessError(error, 'INVALID_INPUT')).toBe(true);
      expect((error as Error).message).toContain('body holds a lone surrogate (U+DFFF at index 2)');
    }
  });

  it('finds a lone surrogate in a nested key or value and names its path', () => {
    expect(() => checkWellFormedValue({ a: [{ b: 'x' }, { c: '\ud800' }] }, 'edge')).toThrow('edge.a[1].c');
    expect(() => checkWellFormedValue({ '\udc00': 1 }, 'edge')).toThrow('a key of edge');
    expect(() => checkWellFormedValue({ a: [1, null, 'ok'] }, 'edge')).not.toThrow();
  });
});
