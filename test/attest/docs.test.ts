import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EVIDENCE_CODES } from '../../src/attest/reasons.js';

const guide = readFileSync(join(import.meta.dirname, '..', '..', 'docs', 'attest.md'), 'utf8');

describe('docs/attest.md', () => {
  it('documents every code of the one vocabulary, with its meaning', () => {
    for (const [code, meaning] of Object.entries(EVIDENCE_CODES))
      expect(guide, code).toContain(`| \`${code}\` | ${meaning} |`);
  });
  it('documents every receipt field', () => {
    for (const field of [
      'v',
      'type',
      'output_sha256',
      'output_len',
      'deployer',
      'instance',
      'key_id',
      'issued_at',
      'nonce',
      'parent',
      'depth',
      'construction',
      'cosigners',
      'ancestry_root',
      'signatures',
    ]) {
      expect(guide, field).toContain(`| \`${field}\``);
    }
  });
});
