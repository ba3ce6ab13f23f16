import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalize, canonicalizeWithout } from '../../src/core/canonical-json.js';
import { isWitnessError } from '../../src/core/errors.js';

const vectors = join(import.meta.dirname, '..', 'fixtures', 'vectors', 'jcs');

describe('RFC 8785 vectors', () => {
  const names = readdirSync(join(vectors, 'input')).filter((n) => n.endsWith('.json'));
  it('finds the six published vector files', () => {
    expect(names.sort()).toEqual([
      'arrays.json',
      'french.json',
      'structures.json',
      'unicode.json',
      'values.json',
      'weird.json',
    ]);
  });
  for (const name of names) {
    it(`canonicalizes ${name} to the expected bytes`, () => {
      const input: unknown = JSON.parse(readFileSync(join(vectors, 'input', name), 'utf8'));
      const expectedHex = readFileSync(join(vectors, 'outhex', name.replace('.json', '.txt')), 'utf8').replace(
        /\s+/g,
        '',
      );
      const expectedText = readFileSync(join(vectors, 'output', name), 'utf8');
      const out = canonicalize(input);
      expect(out).toBe(expectedText);
      expect(Buffer.from(out, 'utf8').toString('hex')).toBe(expectedHex);
    });
  }
});

describe('values canonical JSON cannot express', () => {
  const rejects = (value: unknown) => {
    try {
      canonicalize(value);
    } catch (error) {
      return isWitnessError(error, 'NOT_CANONICALIZABLE');
    }
    return false;
  };
  it('rejects a lone high surrogate', () => expect(rejects({ a: 'x\uD800' })).toBe(true));
  it('rejects a lone low surrogate in a key', () => expect(rejects({ '\uDC00': 1 })).toBe(true));
  it('rejects NaN', () => expect(rejects([Number.NaN])).toBe(true));
  it('rejects Infinity and -Infinity', () => {
    expect(rejects(Number.POSITIVE_INFINITY)).toBe(true);
    expect(rejects({ x: Number.NEGATIVE_INFINITY })).toBe(true);
  });
  it('rejects BigInt, functions and undefined in arrays', () => {
    expect(rejects(1n)).toBe(true);
    expect(rejects(() => 1)).toBe(true);
    expect(rejects([undefined])).toBe(true);
  });
  it('rejects class instances such as Date and Map', () => {
    expect(rejects(new Date(0))).toBe(true);
    expect(rejects(new Map())).toBe(true);
  });
  it('names the path of the bad value in the message', () => {
    expect(() => canonicalize({ a: [1, Number.NaN] })).toThrow(/\$\.a\[1\]/);
  });
});

describe('canonical form properties', () => {
  it('keeps a properly paired surrogate (an emoji)', () => {
    expect(canonicalize('\uD83D\uDE02')).toBe('"😂"');
  });
  it('writes -0 as 0 and large numbers in exponent form as ECMAScript does', () => {
    expect(canonicalize([-0, 1e21, 1e-7, 0.1])).toBe('[0,1e+21,1e-7,0.1]');
  });
  it('is idempotent: canonicalizing the parsed canonical text gives the same text', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const once = canonicalize(value);
        expect(canonicalize(JSON.parse(once))).toBe(once);
      }),
    );
  });
  it('does not depend on key insertion order', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.integer()), (dict) => {
        const reversed = Object.fromEntries(Object.entries(dict).reverse());
        expect(canonicalize(reversed)).toBe(canonicalize(dict));
      }),
    );
  });
});

describe('canonicalizeWithout', () => {
  const outcome = (f: () => unknown) => {
    try {
      return f();
    } catch (error) {
      return (error as { code?: string }).code ?? 'threw';
    }
  };
  it('equals canonicalize of the object and of a copy without the key, for any object (lone surrogates and odd keys included)', () => {
    const text = fc.oneof(fc.string({ unit: 'binary' }), fc.string({ unit: 'binary-ascii' }), fc.constant('"\\'));
    const value = fc.oneof(
      text,
      fc.integer(),
      fc.double(),
      fc.constant(null),
      fc.array(text, { maxLength: 3 }),
      fc.dictionary(text, text, { maxKeys: 3 }),
    );
    fc.assert(
      fc.property(
        fc.dictionary(text, value, { maxKeys: 8 }),
        fc.oneof(text, fc.constant('signatures')),
        value,
        fc.boolean(),
        (record, key, extra, add) => {
          const withKey = add ? { ...record, [key]: extra } : record;
          const { [key]: _omit, ...rest } = withKey;
          expect(outcome(() => canonicalizeWithout(withKey, key))).toEqual(
            outcome(() => ({ full: canonicalize(withKey), without: canonicalize(rest) })),
          );
        },
      ),
      { numRuns: 500 },
    );
  });
});

describe('strings', () => {
  it('writes every well-formed string exactly as JSON.stringify does (RFC 8785 §3.2.2.2)', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme' }), fc.string({ unit: 'binary-ascii' }), (a, b) => {
        expect(canonicalize([a, b])).toBe(JSON.stringify([a, b]));
      }),
    );
  });
});
