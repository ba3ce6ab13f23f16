import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseReceipt, RECEIPT_TAGS, type Receipt, receiptDigest, signingBytes } from '../../src/attest/receipt.js';
import { verifyEvidence } from '../../src/attest/verify.js';
import { sha256Hex } from '../../src/core/hash.js';
import { canonicalBytes, canonicalize } from '../../src/core/canonical-json.js';
import { parseStrictJson } from '../../src/core/strict-json.js';
import { codes, keysFor, NOW, signerAt, trust } from './helpers.js';

const [key] = keysFor('org-a');
if (!key) throw new Error('no key');
const { directory } = trust([key]);
const output = Buffer.from('released bytes');
const receipt = await signerAt(key, NOW).releaseOutput(output);

function parsedCodes(input: unknown): string[] {
  const result = parseReceipt(input);
  return result.ok ? [] : result.reasons.map((r) => r.code);
}
function messages(input: unknown): string {
  const result = parseReceipt(input);
  return result.ok ? '' : result.reasons.map((r) => r.message).join('\n');
}
const edited = (edit: (r: Record<string, unknown>) => void) => {
  const copy = structuredClone(receipt) as unknown as Record<string, unknown>;
  edit(copy);
  return copy;
};

describe('receipt bytes', () => {
  it('signs the domain tag of its type followed by the RFC 8785 form without signatures', () => {
    const { signatures: _s, ...body } = receipt;
    expect(
      signingBytes(receipt).equals(Buffer.concat([Buffer.from('witness/receipt/v1\0'), canonicalBytes(body)])),
    ).toBe(true);
  });
  it('uses a different tag for edge manifests, so one kind of signature never verifies as the other', () => {
    expect(RECEIPT_TAGS.edge).toBe('witness/edge/v1\0');
    expect(signingBytes({ ...receipt, type: 'edge' }).equals(signingBytes(receipt))).toBe(false);
  });
  it('gives a digest that covers the signatures too', () => {
    const other = {
      ...receipt,
      signatures: [{ ...(receipt.signatures[0] as Receipt['signatures'][0]), sig: 'A'.repeat(86) }],
    };
    expect(receiptDigest(other)).not.toBe(receiptDigest(receipt));
  });
  it('canonicalizes the RFC 8785 input vectors read through the strict parser to the published bytes', () => {
    const dir = join(import.meta.dirname, '..', 'fixtures', 'vectors', 'jcs');
    for (const name of readdirSync(join(dir, 'input'))) {
      const expected = readFileSync(join(dir, 'outhex', name.replace('.json', '.txt')), 'utf8').replace(/\s+/g, '');
      expect(
        canonicalBytes(parseStrictJson(readFileSync(join(dir, 'input', name), 'utf8'))).toString('hex'),
        name,
      ).toBe(expected);
    }
  });
});

describe('parseReceipt on bad input', () => {
  it('accepts the receipt a signer produced', () => {
    expect(parsedCodes(receipt)).toEqual([]);
    expect(parsedCodes(JSON.stringify(receipt, null, 2))).toEqual([]);
  });
  it('reports a missing field as MALFORMED naming the field', () => {
    expect(parsedCodes(edited((r) => delete r.nonce))).toEqual(['MALFORMED']);
    expect(messages(edited((r) => delete r.nonce))).toMatch(/receipt\.nonce/);
  });
  it('reports a field of the wrong type as MALFORMED naming the field', () => {
    expect(messages(edited((r) => (r.depth = '0')))).toMatch(/receipt\.depth/);
    expect(messages(edited((r) => (r.output_len = 1.5)))).toMatch(/receipt\.output_len/);
  });
  it('refuses fields the format does not have, such as an embedded key', () => {
    expect(messages(edited((r) => (r.jwk = { x: 'AAAA' })))).toMatch(/jwk/);
  });
  it('reports text that is not JSON as MALFORMED with the line and column', () => {
    expect(parsedCodes('{"v": 1,')).toEqual(['MALFORMED']);
    expect(messages('{"v": 1,')).toMatch(/line 1, column/);
  });
  it('reports a duplicate key in the receipt text as NON_CANONICAL', () => {
    const text = JSON.stringify(receipt).replace('"v":1', '"v":1,"depth":0');
    expect(parsedCodes(text)).toEqual(['NON_CANONICAL']);
  });
  it('reports a number not spelled as RFC 8785 writes it as NON_CANONICAL (two readers could read two values)', () => {
    const text = JSON.stringify(receipt);
    expect(text).toMatch(/"output_len":\d+,/);
    for (const spelling of ['10.000000000000000001', '1e1', '10.0', '-0'])
      expect(parsedCodes(text.replace(/"output_len":\d+,/, `"output_len":${spelling},`))).toEqual(['NON_CANONICAL']);
    expect(parsedCodes(text)).toEqual([]);
  });
  it('reports a lone surrogate in a text field as NON_CANONICAL', () => {
    expect(parsedCodes(edited((r) => (r.instance = 'agent-\uD800')))).toEqual(['NON_CANONICAL']);
  });
  it('reports base64url with non-zero padding bits as NON_CANONICAL', () => {
    const sig = (receipt.signatures[0] as Receipt['signatures'][0]).sig;
    const last = sig.at(-1) as string;
    // 86 characters carry 516 bits for 512: the low 4 bits of the last one are padding.
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const padded = alphabet[alphabet.indexOf(last) | 1] as string;
    expect(
      parsedCodes(
        edited(
          (r) =>
            ((r.signatures as Array<{ sig: string }>)[0] = {
              ...(r.signatures as Array<{ sig: string }>)[0],
              sig: sig.slice(0, -1) + padded,
            } as { sig: string }),
        ),
      ),
    ).toContain('NON_CANONICAL');
  });
  it('refuses upper-case hex, impossible dates and a window that ends before it starts', () => {
    expect(messages(edited((r) => (r.output_sha256 = (r.output_sha256 as string).toUpperCase())))).toMatch(
      /output_sha256/,
    );
    expect(messages(edited((r) => (r.issued_at = '2026-02-30T00:00:00.000Z')))).toMatch(/issued_at/);
    expect(messages(edited((r) => (r.issued_at = '2026-01-05T24:00:00.000Z')))).toMatch(
      /issued_at: not a real calendar time/,
    );
    expect(messages(edited((r) => (r.not_after = r.issued_at)))).toMatch(/not_after must be later/);
  });
  it('accepts exactly the times that survive a Date round trip, for any digits in the time format', () => {
    const digits = (n: number) =>
      fc.array(fc.integer({ min: 0, max: 9 }), { minLength: n, maxLength: n }).map((d) => d.join(''));
    const time = fc
      .tuple(
        fc.constantFrom('1999', '2024', '2026', '2100'),
        digits(2),
        digits(2),
        digits(2),
        digits(2),
        digits(2),
        digits(3),
      )
      .map(([y, mo, d, h, mi, s, ms]) => `${y}-${mo}-${d}T${h}:${mi}:${s}.${ms}Z`);
    fc.assert(
      fc.property(time, (t) => {
        const real = Number.isFinite(Date.parse(t)) && new Date(Date.parse(t)).toISOString() === t;
        const later = new Date(Date.parse(t) + 1000);
        const notAfter = Number.isFinite(later.getTime()) ? later.toISOString() : '2999-01-01T00:00:00.000Z';
        expect(
          messages(edited((r) => Object.assign(r, { issued_at: t, not_after: notAfter }))).includes(
            'receipt.issued_at: not a real calendar time',
          ),
        ).toBe(!real);
      }),
      { numRuns: 3000 },
    );
  });
  it('refuses a nonce shorter than 128 bits', () => {
    expect(messages(edited((r) => (r.nonce = 'AAAAAAAAAAAAAAAAAAAAA')))).toMatch(/128 random bits/);
  });
});

describe('receipts as a signer writes them', () => {
  it('verify after any JSON round trip, whatever the output bytes and instance name', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.uint8Array({ maxLength: 256 }),
        fc.string({ minLength: 1, maxLength: 40, unit: 'grapheme' }),
        fc.boolean(),
        async (bytes, instance, pretty) => {
          const r = await signerAt(key, NOW).releaseOutput(bytes, { instance });
          const text = JSON.stringify(JSON.parse(canonicalize(r)), null, pretty ? 2 : undefined);
          const result = await verifyEvidence(text, bytes, { directory, now: NOW });
          expect(codes(result)).toEqual([]);
        },
      ),
      { numRuns: 60 },
    );
  });
  it('never verify against different output bytes', async () => {
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ maxLength: 64 }), fc.uint8Array({ maxLength: 64 }), async (a, b) => {
        fc.pre(!Buffer.from(a).equals(Buffer.from(b)));
        const r = await signerAt(key, NOW).releaseOutput(a);
        const result = await verifyEvidence(r, b, { directory, now: NOW });
        expect(result.ok).toBe(false);
        expect(codes(result)).toContain('OUTPUT_MISMATCH');
      }),
      { numRuns: 60 },
    );
  });
});

describe('signed bytes and digest through the one canonicaliser', () => {
  it('are the tag + canonicalize of the receipt without signatures, and SHA-256 of canonicalize of all of it, for any receipt a signer writes', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.uint8Array({ maxLength: 32 }),
        fc.string({ minLength: 1, maxLength: 20, unit: 'grapheme' }),
        fc.constantFrom('chain', 'merkle', 'dag'),
        async (bytes, instance, construction) => {
          const root = await signerAt(key, NOW).releaseOutput(Buffer.from('root'), { construction });
          const r = await signerAt(key, NOW, {
            cosign: () => ({ key_id: key.kid, alg: 'Ed25519', sig: 'A'.repeat(86) }),
          }).releaseOutput(bytes, { instance, ancestors: [root], construction });
          const { signatures: _s, ...body } = r;
          expect(signingBytes(r).toString('utf8')).toBe(RECEIPT_TAGS[r.type] + canonicalize(body));
          expect(receiptDigest(r)).toBe(sha256Hex(canonicalize(r)));
          const parsed = parseReceipt(JSON.stringify(root)); // what the verifier computes from the text
          expect(
            parsed.ok &&
              parsed.value.signingBytes.equals(signingBytes(root)) &&
              parsed.value.digest === receiptDigest(root),
          ).toBe(true);
        },
      ),
      { numRuns: 40 },
    );
  });
});
