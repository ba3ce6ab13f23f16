import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalize } from '../../src/core/canonical-json.js';
import { isWitnessError } from '../../src/core/errors.js';
import { parseStrictJson } from '../../src/core/strict-json.js';

const jcs = join(import.meta.dirname, '..', 'fixtures', 'vectors', 'jcs');

function errorOf(text: string): unknown {
  try {
    parseStrictJson(text);
  } catch (error) {
    return error;
  }
  return undefined;
}

describe('parseStrictJson', () => {
  it('rejects an object that names the same key twice', () => {
    const error = errorOf('{"a":1,"a":2}');
    expect(isWitnessError(error, 'INVALID_INPUT')).toBe(true);
    expect((error as Error).message).toMatch(/duplicate key "a"/);
  });
  it('rejects a duplicate key nested deep inside arrays', () => {
    expect(isWitnessError(errorOf('[{"x":[{"k":1,"j":0,"k":1}]}]'), 'INVALID_INPUT')).toBe(true);
  });
  it('rejects keys that are equal only after unescaping', () => {
    expect((errorOf('{"a":1,"\\u0061":2}') as Error).message).toMatch(/duplicate key "a"/);
  });
  it('accepts the same key in two different objects', () => {
    expect(parseStrictJson('[{"a":1},{"a":2}]')).toEqual([{ a: 1 }, { a: 2 }]);
  });
  it('names the line and column of the problem', () => {
    expect((errorOf('{\n  "a": 1,\n  "a": 2\n}') as Error).message).toMatch(/line 3, column 3/);
  });
  it('keeps __proto__ as an ordinary own key, as JSON.parse does', () => {
    const value = parseStrictJson('{"__proto__":{"polluted":true}}') as Record<string, unknown>;
    expect(Object.keys(value)).toEqual(['__proto__']);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
  });
  it('rejects trailing commas, comments, single quotes, NaN and trailing text', () => {
    for (const bad of ['[1,]', '{"a":1,}', '// c\n1', "{'a':1}", 'NaN', '1 2', '01', '"\t"', '', '-']) {
      expect(isWitnessError(errorOf(bad), 'INVALID_INPUT'), bad).toBe(true);
    }
  });
  it('refuses nesting deeper than its limit instead of overflowing the stack', () => {
    const deep = `${'['.repeat(100_000)}${']'.repeat(100_000)}`;
    expect((errorOf(deep) as Error).message).toMatch(/nesting deeper/);
  });
  it('reads the RFC 8785 input vectors to the same value as JSON.parse', () => {
    for (const name of readdirSync(join(jcs, 'input'))) {
      const text = readFileSync(join(jcs, 'input', name), 'utf8');
      expect(canonicalize(parseStrictJson(text))).toBe(canonicalize(JSON.parse(text)));
    }
  });
  it('agrees with JSON.parse on any JSON text without duplicate keys', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.boolean(), (value, pretty) => {
        const text = JSON.stringify(value, null, pretty ? 2 : undefined);
        expect(parseStrictJson(text)).toStrictEqual(JSON.parse(text));
      }),
    );
  });
  it('never accepts text that JSON.parse rejects', () => {
    fc.assert(
      fc.property(
        fc.string({
          unit: fc.constantFrom('{', '}', '[', ']', '"', ':', ',', '1', 'a', '\\', ' ', 'e', '-', '.', 'n', 'u', 'l'),
        }),
        (text) => {
          let standard = true;
          try {
            JSON.parse(text);
          } catch {
            standard = false;
          }
          if (!standard) expect(isWitnessError(errorOf(text), 'INVALID_INPUT')).toBe(true);
        },
      ),
    );
  });
  it('with canonicalNumbers, accepts exactly the numbers JSON.stringify writes', () => {
    fc.assert(
      fc.property(fc.double({ noNaN: true, noDefaultInfinity: true }), (n) => {
        const text = JSON.stringify(n);
        expect(parseStrictJson(text, { canonicalNumbers: true })).toBe(JSON.parse(text));
      }),
    );
    for (const spelling of ['1.0', '1e0', '-0', '0.10', '1E2', '100000000000000000000000'])
      expect(() => parseStrictJson(spelling, { canonicalNumbers: true })).toThrow(/not in its canonical form/);
    expect(parseStrictJson('1.0')).toBe(1); // other readers (configs, experiments) take any spelling
  });
});
