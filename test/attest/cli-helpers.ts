// The attest CLI run in-process (runMain) in a fresh folder with two deployers' keys.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import { runCli } from '../support/cli.js';

/** The one in-process CLI helper (test/support/cli.ts), with the folder first as these tests read best. */
export const cli = (cwd: string, ...args: string[]) => runCli(args, cwd);

/** A folder with two deployers' keys trusted by trusted.json and an output file. */
export async function workspace() {
  const cwd = mkdtempSync(join(tmpdir(), 'witness-attest-'));
  for (const d of ['parent', 'child']) {
    expect((await cli(cwd, 'keys', 'new', '--deployer', `org-${d}`, '--out', `${d}.key.json`)).code).toBe(0);
    expect(
      (
        await cli(
          cwd,
          'keys',
          'add',
          `${d}.key.json`,
          '--dir',
          'trusted.json',
          '--not-before',
          '2020-01-01T00:00:00Z',
          '--not-after',
          '2100-01-01T00:00:00Z',
        )
      ).code,
    ).toBe(0);
  }
  writeFileSync(join(cwd, 'task.txt'), 'summarise the logs');
  writeFileSync(join(cwd, 'answer.txt'), 'the summary');
  return cwd;
}

export async function sign(cwd: string, file: string, ...args: string[]) {
  const r = await cli(cwd, 'attest', 'sign', ...args);
  expect(r.code, r.err).toBe(0);
  writeFileSync(join(cwd, file), r.out);
}
