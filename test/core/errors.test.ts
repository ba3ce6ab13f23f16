import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ERROR_CODES, exitCodeFor, WitnessError } from '../../src/core/errors.js';

describe('WitnessError', () => {
  it('maps what the caller must fix to exit status 2 and failures of the work to 1', () => {
    expect(exitCodeFor(new WitnessError('USAGE', 'x'))).toBe(2);
    expect(exitCodeFor(new WitnessError('INVALID_INPUT', 'x'))).toBe(2);
    expect(exitCodeFor(new WitnessError('IO', 'x'))).toBe(1);
    expect(exitCodeFor(new Error('x'))).toBe(1);
  });
  it('documents every code with its exit status in docs/errors.md', () => {
    const doc = readFileSync(join(import.meta.dirname, '..', '..', 'docs', 'errors.md'), 'utf8');
    for (const code of Object.keys(ERROR_CODES) as (keyof typeof ERROR_CODES)[]) {
      const row = doc.split('\n').find((line) => line.startsWith(`| \`${code}\` |`));
      expect(row, `docs/errors.md has no row for ${code}`).toBeDefined();
      expect(row!.trim().endsWith(`| ${exitCodeFor(new WitnessError(code, ''))} |`)).toBe(true);
      expect(row!.split(' | ')[1], `docs/errors.md gives ${code} another meaning than ERROR_CODES`).toBe(
        ERROR_CODES[code],
      );
    }
  });
  it('documents no code that Witness does not have', () => {
    const doc = readFileSync(join(import.meta.dirname, '..', '..', 'docs', 'errors.md'), 'utf8');
    const table = doc.slice(0, doc.indexOf('Exit status of every command'));
    const documented = [...table.matchAll(/^\| `([A-Z_]+)` \|/gm)].map((m) => m[1]);
    expect(documented.sort()).toEqual(Object.keys(ERROR_CODES).sort());
  });
});
