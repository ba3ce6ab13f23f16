/**
 * The signed line's format: the writer's hand-built receipt text is exactly RFC 8785
 * of itself, a signed line splits back into the unsigned line and its receipt, and
 * the writer's byte buffer builds exactly the string form's bytes.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalize } from '../../src/core/canonical-json.js';
import { DOMAIN_TAGS } from '../../src/attest/domain.js';
import { sha256Hex } from '../../src/core/hash.js';
import {
  ReceiptBuilder,
  type ReceiptFields,
  SignedLineBuffer,
  signedLine,
  splitSignedLine,
} from '../../src/sim/transcript/format.js';

const hex64 = fc.stringMatching(/^[0-9a-f]{64}$/);
// Cell labels and engine names are free text (model names): escapes, non-ASCII, astral characters.
const text = fc.string({ unit: 'grapheme', minLength: 1, maxLength: 40 });
const fields = fc.record({
  run: fc.stringMatching(/^r-[0-9a-f]{16}$/),
  seq: fc.nat(),
  seed: fc.integer({ min: 0, max: 2 ** 48 - 1 }),
  cellText: text.map((t) => canonicalize(t)),
  contentSha256: hex64,
  prompts: fc.option(hex64, { nil: null }),
  prev: fc.option(hex64, { nil: null }),
  signedAt: fc.option(
    fc.date({ min: new Date(0), max: new Date(4e12), noInvalidDate: true }).map((d) => d.toISOString()),
    { nil: undefined },
  ),
});
const sig = fc.stringMatching(/^[A-Za-z0-9_-]{86}$/);
const builder = fc
  .record({ engine: text, keyId: fc.stringMatching(/^ed25519:[0-9a-f]{16}$/) })
  .map(({ engine, keyId }) => new ReceiptBuilder(engine, keyId));
const receiptText = (b: ReceiptBuilder, f: ReceiptFields, s?: string) => ReceiptBuilder.receipt(b.signingText(f), s);

describe('receipt text', () => {
  it('is the RFC 8785 form of itself, with and without a signature', () => {
    fc.assert(
      fc.property(builder, fields, sig, (b, f, s) => {
        for (const text of [receiptText(b, f), receiptText(b, f, f.signedAt === undefined ? undefined : s)])
          expect(canonicalize(JSON.parse(text))).toBe(text);
      }),
    );
  });
  it('signs the domain tag and the receipt without its signature', () => {
    fc.assert(
      fc.property(builder, fields, sig, (b, f, s) => {
        fc.pre(f.signedAt !== undefined);
        const { sig: _sig, ...unsigned } = JSON.parse(receiptText(b, f, s));
        expect(b.signingText(f)).toBe(DOMAIN_TAGS.simulationRecord + canonicalize(unsigned));
      }),
    );
  });
  it('leaves out sig and signed_at when lines are not signed on their own', () => {
    fc.assert(
      fc.property(builder, fields, (b, f) => {
        expect(Object.keys(JSON.parse(receiptText(b, { ...f, signedAt: undefined })))).not.toContain('signed_at');
      }),
    );
  });
});

describe('signed lines', () => {
  it('split back into the unsigned line, byte for byte, and the receipt', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.jsonValue(), { minKeys: 1 }), builder, fields, (record, b, f) => {
        fc.pre(!('receipt' in record));
        const content = JSON.stringify(record);
        const receipt = receiptText(b, f);
        const line = signedLine(content, receipt);
        const split = splitSignedLine(line, JSON.parse(line));
        expect(split?.content).toBe(content);
        expect(split?.receiptText).toBe(receipt);
      }),
    );
  });
  it('are built as bytes exactly as the string form, one buffer reused across lines of any size', () => {
    const buffer = new SignedLineBuffer();
    // Lines far past the buffer's first size, and non-ASCII (3- and 4-byte UTF-8), in random order.
    const big = fc.string({ unit: 'grapheme', maxLength: 9000 });
    const record = fc.dictionary(fc.oneof(fc.string(), big), fc.oneof(fc.jsonValue(), big), { minKeys: 1 });
    fc.assert(
      fc.property(fc.array(fc.tuple(record, builder, fields), { minLength: 1, maxLength: 4 }), (lines) => {
        for (const [r, b, f] of lines) {
          const content = JSON.stringify(r);
          expect(buffer.content(content)).toBe(sha256Hex(content));
          const receipt = receiptText(b, f);
          expect(buffer.line(receipt).toString('utf8')).toBe(`${signedLine(content, receipt)}\n`);
        }
      }),
      { numRuns: 200 },
    );
    // One line certain to outgrow the buffer: 40,000 three-byte characters.
    const content = JSON.stringify({ text: '€'.repeat(40_000) });
    expect(buffer.content(content)).toBe(sha256Hex(content));
    expect(buffer.line('{"v":1}').toString('utf8')).toBe(`${signedLine(content, '{"v":1}')}\n`);
  });
  it('refuse, as bytes too, content that is not a JSON object with members', () => {
    const buffer = new SignedLineBuffer();
    for (const content of ['{}', '[1]', '"x"'])
      expect(() => buffer.content(content)).toThrow(/JSON object with members/);
  });
  it('does not split when the receipt is not the last member in canonical form', () => {
    const receipt = { b: 1, a: 2 };
    expect(splitSignedLine(`{"receipt":${JSON.stringify(receipt)},"x":1}`, { receipt, x: 1 })).toBeUndefined();
    expect(splitSignedLine(`{"x":1,"receipt":${JSON.stringify(receipt)}}`, { x: 1, receipt })).toBeUndefined();
  });
});
