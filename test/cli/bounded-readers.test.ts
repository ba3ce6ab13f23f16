/**
 * Readers of evidence are bounded: a line past the longest read, a file past the most
 * read whole, and a file that is not a regular file (a device that never ends) each get
 * a one-line error naming the file (and the line), never an internal error or gigabytes
 * of memory. Sparse files make the 1 GB cases cheap; /dev/zero is the endless one. The
 * errors are checked, not the time.
 */
import { spawnSync } from 'node:child_process';
import { appendFileSync, chmodSync, mkdtempSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';

const dir = mkdtempSync(join(tmpdir(), 'witness-bounded-'));
const GB = 1024 * 1024 * 1024;
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const cli = (...argv: string[]) => runCli(argv, dir);

/** A sparse file of `size` bytes beginning with `head`, then `tail` appended. */
function sparse(name: string, head: string, size: number, tail = ''): string {
  const path = join(dir, name);
  writeFileSync(path, head);
  truncateSync(path, size);
  if (tail) appendFileSync(path, tail);
  return path;
}

beforeAll(async () => {
  expect((await cli('keys', 'new', '--deployer', 'acme', '--out', 'k.json')).code).toBe(0);
  expect((await cli('keys', 'add', 'k.json', '--dir', 'trusted.json')).code).toBe(0);
  const sim = await cli('sim', '--preset', 'smoke', '--out', 'r.jsonl', '--sign', 'k.json', '--quiet');
  expect(sim.code, sim.err).toBe(0);
}, 120_000);

describe('bounded readers of evidence', () => {
  it('verify: a results file whose first line is valid and whose second is 1 GB, unterminated, reports line 2 as cut off, exit 1', async () => {
    const first = readFileSync(join(dir, 'r.jsonl'), 'utf8').split('\n')[0]!;
    const path = sparse('long-tail.jsonl', `${first}\n`, GB);
    const r = await cli('verify', path, '--keys', 'trusted.json', '--json');
    expect(r.err).not.toMatch(/internal error|0x1fffffe8/);
    expect(JSON.parse(r.out).problems).toContainEqual({
      code: 'MALFORMED',
      message: expect.stringMatching(/last line is cut off/),
      at: 'line 2',
    });
    expect(r.code).toBe(1);
  });

  it('verify: a 1 GB second line followed by more lines is refused at line 2, naming the file, exit 1', async () => {
    const first = readFileSync(join(dir, 'r.jsonl'), 'utf8').split('\n')[0]!;
    const path = sparse('long-line.jsonl', `${first}\n`, GB, `\n${first}\n`);
    const r = await cli('verify', path, '--keys', 'trusted.json');
    expect(r.err).not.toMatch(/internal error|0x1fffffe8/);
    expect(r.err).toMatch(new RegExp(`${path} line 2 is longer than 16777216 bytes`));
    expect(r.code).toBe(1);
  });

  it('report: such a line is refused at line 2, exit 1', async () => {
    const first = readFileSync(join(dir, 'r.jsonl'), 'utf8').split('\n')[0]!;
    const path = sparse('long-line-report.jsonl', `${first}\n`, GB, `\n${first}\n`);
    const r = await cli('report', path);
    expect(r.err).toMatch(/line 2 is longer than 16777216 bytes/);
    expect(r.code).toBe(1);
  });

  it('verify --checkpoint of a 1 GB file is refused by its size, naming it, exit 2', async () => {
    const path = sparse('big.checkpoint.json', '{', GB);
    const r = await cli('verify', 'r.jsonl', '--checkpoint', path, '--keys', 'trusted.json');
    expect(r.err).not.toMatch(/internal error/);
    // Read as a checkpoint file or a kept checkpoint note (told apart by content), so the evidence limit applies.
    expect(r.err).toMatch(new RegExp(`The (results )?checkpoint ${path} is larger than \\d+ bytes`));
    expect(r.code).toBe(2);
  });

  it('verify of a 1 GB JSON document (no newline) is refused, not read whole', async () => {
    const path = sparse('big.json', '{"type":', GB);
    const r = await cli('verify', path);
    expect(r.err).not.toMatch(/internal error/);
    expect(`${r.out}${r.err}`).toMatch(/big\.json/);
    expect(r.code).toBe(1);
  });

  for (const [what, argv] of [
    ['verify /dev/zero', ['verify', '/dev/zero']],
    ['report /dev/zero', ['report', '/dev/zero']],
    ['verify --keys /dev/zero', ['verify', 'r.jsonl', '--keys', '/dev/zero']],
    ['verify --checkpoint /dev/zero', ['verify', 'r.jsonl', '--keys', 'trusted.json', '--checkpoint', '/dev/zero']],
    ['sim --sign /dev/zero', ['sim', '--preset', 'smoke', '--out', 'never.jsonl', '--sign', '/dev/zero']],
  ] as const) {
    it(`${what}: refused before reading as not a regular file, exit 2`, async () => {
      const r = await cli(...argv);
      expect(r.err).toMatch(/\/dev\/zero is not a regular file/);
      expect(r.code).toBe(2);
    });
  }

  it('a key file of 1 GB is refused by its size, naming it', async () => {
    const path = sparse('big.key.json', '{', GB);
    chmodSync(path, 0o600);
    const r = await cli('sim', '--preset', 'smoke', '--out', 'never2.jsonl', '--sign', path);
    expect(r.err).toMatch(new RegExp(`${path} is larger than 1048576 bytes`));
    expect(r.code).toBe(2);
  });

  it('a FIFO given as evidence is refused without waiting for a writer', async () => {
    const path = join(dir, 'fifo');
    expect(spawnSync('mkfifo', [path]).status).toBe(0);
    const r = await cli('verify', path);
    expect(r.err).toMatch(/fifo is not a regular file/);
    expect(r.code).toBe(2);
  });
});
