import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { receiptJsonSchema } from '../../src/attest/json-schema.js';

describe('docs/schemas/receipt.schema.json', () => {
  it('is exactly the schema generated from ReceiptSchema (regenerate it after changing the receipt format)', () => {
    const file = readFileSync(join(import.meta.dirname, '..', '..', 'docs', 'schemas', 'receipt.schema.json'), 'utf8');
    expect(file).toBe(`${JSON.stringify(receiptJsonSchema(), null, 2)}\n`);
  });
  it('describes every receipt field', () => {
    const receipt = (receiptJsonSchema().$defs as { receipt: { properties: Record<string, { description?: string }> } })
      .receipt;
    for (const [name, property] of Object.entries(receipt.properties)) expect(property.description, name).toBeTruthy();
  });
});
