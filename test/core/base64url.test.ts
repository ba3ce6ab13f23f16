import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeBase64urlStrict, isCanonicalBase64url } from '../../src/core/base64url.js';

const B64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

describe('strict base64url', () => {
  it('accepts exactly the texts that are the encoding of their own bytes', () => {
    const text = fc.oneof(fc.string({ unit: fc.constantFrom(...B64URL) }), fc.string());
    fc.assert(
      fc.property(text, (t) => {
        const roundTrips = /^[A-Za-z0-9_-]*$/.test(t) && Buffer.from(t, 'base64url').toString('base64url') === t;
        expect(isCanonicalBase64url(t)).toBe(roundTrips);
      }),
      { numRuns: 3000 },
    );
  });
  it('decodes every byte string from its one text, and refuses a second spelling of the same bytes', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 1, maxLength: 70 }), (bytes) => {
        const text = Buffer.from(bytes).toString('base64url');
        expect(decodeBase64urlStrict(text)?.equals(Buffer.from(bytes))).toBe(true);
        const last = B64URL.indexOf(text.at(-1) as string);
        if (text.length % 4 !== 0) expect(decodeBase64urlStrict(text.slice(0, -1) + B64URL[last | 1])).toBeUndefined();
      }),
    );
  });
});
