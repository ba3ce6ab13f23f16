import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { hasReceiptShape, ReceiptSchema } from '../../src/attest/receipt.js';
import { compileShape } from '../../src/attest/shape.js';
import { keysFor, NOW, signerAt } from './helpers.js';

const [key] = keysFor('org-a');
if (!key) throw new Error('no key');
const plain = await signerAt(key, NOW).releaseOutput(Buffer.from('x'));
const merkle = await signerAt(key, NOW).releaseOutput(Buffer.from('y'), { construction: 'merkle' });
const fields = [...Object.keys(merkle), 'extra'];
const oddValue = fc.oneof(
  fc.anything(),
  fc.string(),
  fc.constantFrom(
    '',
    'A'.repeat(86),
    'a'.repeat(64),
    'ed25519:0123456789abcdef',
    '2026-02-30T00:00:00.000Z',
    'edge',
    'dag',
    1,
    -1,
    4097,
    1.5,
    null,
    [],
    ['org-a', 'org-a'],
  ),
);

describe('hasReceiptShape (the verifier fast path, compiled from the schema)', () => {
  it('accepts the receipts a signer writes', () => {
    expect(hasReceiptShape(plain)).toBe(true);
    expect(hasReceiptShape(merkle)).toBe(true);
  });
  it('never accepts a value that ReceiptSchema refuses, for any single-field or signature change', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(plain, merkle),
        fc.constantFrom(...fields),
        oddValue,
        fc.boolean(),
        fc.boolean(),
        (base, field, value, remove, inSignature) => {
          const copy = structuredClone(base) as unknown as Record<string, unknown>;
          const target = inSignature
            ? ((copy.signatures as Array<Record<string, unknown>>)[0] as Record<string, unknown>)
            : copy;
          const name = inSignature ? (['key_id', 'alg', 'sig', 'extra'][fields.indexOf(field) % 4] as string) : field;
          if (remove) delete target[name];
          else target[name] = value;
          if (hasReceiptShape(copy)) expect(ReceiptSchema.safeParse(copy).success).toBe(true);
        },
      ),
      { numRuns: 2000 },
    );
  });
  it('agrees with ReceiptSchema on every JSON value of that kind (what a parsed evidence file holds)', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(plain, merkle),
        fc.constantFrom(...fields),
        oddValue,
        fc.boolean(),
        (base, field, value, remove) => {
          const copy = structuredClone(base) as unknown as Record<string, unknown>;
          if (remove) delete copy[field];
          else copy[field] = value;
          const json = JSON.parse(JSON.stringify(copy)) as unknown;
          expect(hasReceiptShape(json)).toBe(ReceiptSchema.safeParse(json).success);
        },
      ),
      { numRuns: 2000 },
    );
  });
  it('refuses to compile a schema keyword it does not implement, rather than ignore it', () => {
    expect(() => compileShape({ type: 'string', format: 'email' })).toThrow(/keyword format is not supported/);
    expect(() => compileShape({ type: 'object', properties: {} })).toThrow(/closed objects/);
  });
  it('refuses arrays, null and class instances at the top level', () => {
    for (const v of [null, [], new Date(), 'receipt', 1]) expect(hasReceiptShape(v)).toBe(false);
  });
});
