import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { E12_PROBLEM_CODES } from '../../src/a2a/e12-verify.js';

const guide = readFileSync(join(import.meta.dirname, '..', '..', 'docs', 'a2a.md'), 'utf8');

describe('docs/a2a.md', () => {
  it('documents every problem code of an E12 re-verification, with its meaning', () => {
    for (const [code, meaning] of Object.entries(E12_PROBLEM_CODES))
      expect(guide, code).toContain(`| \`${code}\` | ${meaning} |`);
  });
});
