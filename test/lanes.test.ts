// The test lanes (test/support/lanes.ts): every test file is in exactly one, a file
// named as e2e by hand exists, and the unit lane holds no file whose source, or a
// helper's, starts processes or reaches PostgreSQL, Chromium or installed tools.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { E2E_FILES, lanes } from './support/lanes.js';

const ROOT = join(import.meta.dirname, '..');

describe('test lanes', () => {
  const { unit, e2e } = lanes(ROOT);
  it('puts every test file in exactly one lane, this one in unit', () => {
    expect(unit.filter((f) => e2e.has(f))).toEqual([]);
    expect(unit).toContain('test/lanes.test.ts');
    expect(unit.length + e2e.size).toBeGreaterThan(150);
  });
  it('names only files that exist as e2e by hand', () => {
    expect(Object.keys(E2E_FILES).filter((f) => !existsSync(join(ROOT, f)))).toEqual([]);
  });
  it('classes a file by its helpers too: one importing the mailbox helpers (which spawn the CLI) is e2e', () => {
    expect(e2e.get('test/mailbox/quota.test.ts')).toMatch(/starts processes \(through helpers\.ts\)/);
    expect(unit).toContain('test/core/canonical-json.test.ts');
  });
});
