// What a newcomer types first: bare `witness`, `-v`, and a typo.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { closestName } from '../../src/core/did-you-mean.js';
import { VERSION } from '../../src/cli/version.js';
import { runCli } from '../support/cli.js';

const cli = (cwd: string, ...argv: string[]) => runCli(argv, cwd);
const cwd = mkdtempSync(join(tmpdir(), 'witness-newcomer-'));

describe('first commands', () => {
  it('bare witness prints the help on stdout and exits 0', async () => {
    const r = await cli(cwd);
    expect([r.code, r.err]).toEqual([0, '']);
    expect(r.out).toMatch(/^Usage: witness /);
  });
  it('witness -v prints the version, as -V and --version do', async () => {
    for (const flag of ['-v', '-V', '--version'])
      expect(await cli(cwd, flag)).toEqual({ code: 0, out: `${VERSION}\n`, err: '' });
  });
  it('probe qwn: exit 2 with "did you mean qwen"', async () => {
    const r = await cli(cwd, 'probe', 'qwn');
    expect([r.code, r.err]).toEqual([2, expect.stringContaining('Unknown runtime "qwn". Did you mean "qwen"?')]);
  });
  it('an experiment key "round" suggests grid.rounds; a YAML error ends in a full stop, not a dangling colon', async () => {
    writeFileSync(join(cwd, 'typo.yaml'), 'name: t\nround: 5\ngrid: {honest: 4}\n');
    const typo = await cli(cwd, 'sim', 'typo.yaml');
    expect([typo.code, typo.err]).toEqual([
      2,
      expect.stringContaining('Unrecognized key: "round" (did you mean "grid.rounds"?)'),
    ]);
    writeFileSync(join(cwd, 'broken.yaml'), 'name: t\nrounds: [1\n');
    const broken = await cli(cwd, 'sim', 'broken.yaml');
    expect(broken.code).toBe(2);
    expect(broken.err.trimEnd()).toMatch(/at line \d+, column \d+\.$/);
  });
  it('closestName finds a typo, not a different word', () => {
    expect(closestName('qwn', ['opencode', 'qwen', 'claude'])).toBe('qwen');
    expect(closestName('round', ['rounds', 'runs'])).toBe('rounds');
    expect(closestName('zebra', ['opencode', 'qwen', 'claude'])).toBeUndefined();
  });
});
