import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { RESULTS_REASON_CODES } from '../../src/sim/transcript/reasons.js';

const guide = readFileSync(join(import.meta.dirname, '..', '..', 'docs', 'results-format.md'), 'utf8');

describe('docs/results-format.md', () => {
  it('documents every reason code verifyResults can return, with its meaning', () => {
    for (const [code, meaning] of Object.entries(RESULTS_REASON_CODES))
      expect(guide, code).toContain(`| \`${code}\` | ${meaning} |`);
  });
  it('documents every field of a line receipt and of a checkpoint', () => {
    for (const field of [
      'run',
      'content_sha256',
      'engine',
      'prompts',
      'key_id',
      'prev',
      'signed_at',
      'experiment',
      'shard',
      'count',
      'cassette',
      'line_signatures',
    ])
      expect(guide, field).toContain(`\`${field}\``);
  });
});
