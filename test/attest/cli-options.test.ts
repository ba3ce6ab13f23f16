// Every option of `witness verify`, `attest` and `keys` is honoured or refused, and bad
// paths and values are one-line errors with the documented exit status.
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cli, sign, workspace } from './cli-helpers.js';

/** One line on stderr, no stack trace, no "internal error". */
function oneLine(err: string): void {
  expect(err.trim().split('\n')).toHaveLength(1);
  expect(err).not.toMatch(/internal error|\n\s+at /);
}

describe('options that would be silently ignored are refused (exit 2)', () => {
  it('keys add: --days together with --not-after', async () => {
    const cwd = await workspace();
    const r = await cli(
      cwd,
      'keys',
      'add',
      'child.key.json',
      '--dir',
      'other.json',
      '--not-after',
      '2030-01-01T00:00:00Z',
      '--days',
      '10',
    );
    expect([r.code, r.err]).toEqual([2, expect.stringMatching(/--days and --not-after/)]);
  });
  it('attest sign: --cosign-key without a dag parent', async () => {
    const cwd = await workspace();
    const alone = await cli(
      cwd,
      'attest',
      'sign',
      '--key',
      'child.key.json',
      '--output',
      'answer.txt',
      '--cosign-key',
      'parent.key.json',
    );
    expect([alone.code, alone.err]).toEqual([2, expect.stringMatching(/--cosign-key applies only to a dag edge/)]);
    await sign(cwd, 'task.json', '--key', 'parent.key.json', '--output', 'task.txt');
    const chain = await cli(
      cwd,
      'attest',
      'sign',
      '--key',
      'child.key.json',
      '--output',
      'answer.txt',
      '--parent',
      'task.json',
      '--cosign-key',
      'parent.key.json',
    );
    expect([chain.code, chain.err]).toEqual([2, expect.stringMatching(/--cosign-key applies only to a dag edge/)]);
  });
  it('verify: a --skew beyond the maximum the nonce store covers', async () => {
    const cwd = await workspace();
    await sign(cwd, 'r.json', '--key', 'child.key.json', '--output', 'answer.txt');
    const r = await cli(cwd, 'verify', 'r.json', '--output', 'answer.txt', '--keys', 'trusted.json', '--skew', '7200');
    expect([r.code, r.err]).toEqual([2, expect.stringMatching(/--skew.*maximum of 3600/)]);
  });
  it('verify: --output or --keys missing for a receipt names what is missing', async () => {
    const cwd = await workspace();
    await sign(cwd, 'r.json', '--key', 'child.key.json', '--output', 'answer.txt');
    const r = await cli(cwd, 'verify', 'r.json', '--keys', 'trusted.json');
    expect([r.code, r.err]).toEqual([2, expect.stringMatching(/needs --output <file>/)]);
  });
});

describe('bad paths and values are one line with the documented exit status', () => {
  it('a directory as evidence, output or keys names the option and the path (exit 2)', async () => {
    const cwd = await workspace();
    await sign(cwd, 'r.json', '--key', 'child.key.json', '--output', 'answer.txt');
    mkdirSync(join(cwd, 'd'));
    const cases: Array<[string[], RegExp]> = [
      [
        ['verify', 'd', '--output', 'answer.txt', '--keys', 'trusted.json'],
        /The evidence d is a folder, but not one this verifier knows \(a mailbox folder \(mailbox\.json\)\)/,
      ],
      [['verify', 'r.json', '--output', 'd', '--keys', 'trusted.json'], /output file .*\/d is a directory/],
      [['verify', 'r.json', '--output', 'answer.txt', '--keys', 'd'], /key directory .*\/d is a directory/],
      [['attest', 'sign', '--key', 'd', '--output', 'answer.txt'], /key file .*\/d is a directory/],
      [['attest', 'sign', '--key', 'child.key.json', '--output', 'd'], /output file .*\/d is a directory/],
      [
        ['attest', 'sign', '--key', 'child.key.json', '--output', 'answer.txt', '--parent', 'd'],
        /evidence file .*\/d is a directory/,
      ],
      [['keys', 'add', 'd', '--dir', 'trusted.json'], /key file .*\/d is a directory/],
      [['keys', 'list', '--dir', 'd'], /key directory .*\/d is a directory/],
    ];
    for (const [args, message] of cases) {
      const r = await cli(cwd, ...args);
      expect([r.code, r.err], args.join(' ')).toEqual([2, expect.stringMatching(message)]);
      oneLine(r.err);
    }
  });
  it.skipIf(process.getuid?.() === 0)(
    'an unreadable output file is one line, exit 1 (skipped as root: root reads any file)',
    async () => {
      const cwd = await workspace();
      await sign(cwd, 'r.json', '--key', 'child.key.json', '--output', 'answer.txt');
      writeFileSync(join(cwd, 'secret.txt'), 'x');
      chmodSync(join(cwd, 'secret.txt'), 0o000);
      const r = await cli(cwd, 'verify', 'r.json', '--output', 'secret.txt', '--keys', 'trusted.json');
      expect([r.code, r.err]).toEqual([
        1,
        expect.stringMatching(/Cannot read the output file .*secret\.txt: permission denied/),
      ]);
      oneLine(r.err);
    },
  );
  if (process.getuid?.() === 0)
    console.log(
      'cli-options: the unreadable-file case is skipped: this test runs as root, which can read a mode-000 file.',
    );
  it('attest sign --ttl 1e20: refused with the maximum stated (exit 2)', async () => {
    const cwd = await workspace();
    const r = await cli(cwd, 'attest', 'sign', '--key', 'child.key.json', '--output', 'answer.txt', '--ttl', '1e20');
    expect([r.code, r.err]).toEqual([2, expect.stringMatching(/--ttl.*maximum of 3153600000 seconds/)]);
    oneLine(r.err);
  });
  it('keys add --days 1e9 and keys rotate --days 1e9: refused with the maximum stated (exit 2)', async () => {
    const cwd = await workspace();
    const add = await cli(cwd, 'keys', 'add', 'child.key.json', '--dir', 'other.json', '--days', '1e9');
    expect([add.code, add.err]).toEqual([2, expect.stringMatching(/--days.*maximum of 36500 days/)]);
    oneLine(add.err);
    await cli(cwd, 'keys', 'new', '--deployer', 'org-child', '--out', 'child2.key.json');
    const rotate = await cli(
      cwd,
      'keys',
      'rotate',
      'ed25519:0000000000000000',
      'child2.key.json',
      '--dir',
      'trusted.json',
      '--days',
      '1e9',
    );
    expect([rotate.code, rotate.err]).toEqual([2, expect.stringMatching(/--days.*maximum of 36500 days/)]);
  });
  it('keys add: a window that would end after year 9999 is refused, naming the last time allowed', async () => {
    const cwd = await workspace();
    const r = await cli(
      cwd,
      'keys',
      'add',
      'child.key.json',
      '--dir',
      'other.json',
      '--not-before',
      '9999-06-01T00:00:00Z',
      '--days',
      '365',
    );
    expect([r.code, r.err]).toEqual([2, expect.stringMatching(/after 9999-12-31T23:59:59\.999Z/)]);
    oneLine(r.err);
  });
});
