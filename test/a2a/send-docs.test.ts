/**
 * What docs/a2a.md §4 and docs/schemas say about `witness a2a send` is what the code
 * does: every code its check reports, and the record's JSON Schema as generated.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { delegationRecordJsonSchema } from '../../src/a2a/delegation-record.js';
import { DELEGATION_CODES } from '../../src/attest/reasons.js';

const DOCS = join(import.meta.dirname, '..', '..', 'docs');

describe('witness a2a send in the docs', () => {
  it('docs/a2a.md documents every code a delegation check adds, with its meaning', () => {
    const guide = readFileSync(join(DOCS, 'a2a.md'), 'utf8');
    for (const [code, meaning] of Object.entries(DELEGATION_CODES))
      expect(guide, code).toContain(`| \`${code}\` | ${meaning} |`);
  });

  it('docs/schemas/a2a-delegation.schema.json is the schema the record is checked with (regenerate with npm run schemas)', () => {
    const file = readFileSync(join(DOCS, 'schemas', 'a2a-delegation.schema.json'), 'utf8');
    expect(file).toBe(`${JSON.stringify(delegationRecordJsonSchema(), null, 2)}\n`);
  });
});
