/**
 * Every file a command writes (--out / -o) is a regular file: a path that exists and is
 * a device, a FIFO, a directory or a link to one is refused in one sentence (exit 2) and
 * left as it was — the atomic write's rename used to replace a character device with a
 * regular file. And folders are made by a bounded mkdir: where mkdir answers ENOENT
 * (/proc), Node's recursive mkdir spun for ever. Devices need root, as CI runs.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { lstatSync, mkdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cli, makeMailbox, tempDir, witnessCommand } from '../mailbox/helpers.js';

/** A folder holding one of each thing that is not a regular file. */
function oddPaths(): Record<string, { path: string; kind: string; is: (p: string) => boolean }> {
  const root = tempDir('witness-outputs-');
  const at = (name: string) => join(root, name);
  execFileSync('mknod', [at('null'), 'c', '1', '3']); // a character device of our own (never /dev/null itself)
  execFileSync('mkfifo', [at('fifo')]);
  mkdirSync(at('folder'));
  symlinkSync(at('null'), at('link'));
  return {
    device: { path: at('null'), kind: 'a character device', is: (p) => lstatSync(p).isCharacterDevice() },
    fifo: { path: at('fifo'), kind: 'a named pipe (FIFO)', is: (p) => lstatSync(p).isFIFO() },
    folder: { path: at('folder'), kind: 'a directory', is: (p) => lstatSync(p).isDirectory() },
    'link to a device': { path: at('link'), kind: 'a character device', is: (p) => lstatSync(p).isSymbolicLink() },
  };
}

async function resultsFile(): Promise<string> {
  const file = join(tempDir('witness-outputs-in-'), 'r.jsonl');
  await cli(['sim', '--quiet', '--runs', '1', '--out', file]);
  return file;
}

describe('--out refuses a path that is not a regular file', async () => {
  const mb = await makeMailbox(['a']);
  const results = await resultsFile();
  const commands: Record<string, (out: string) => string[]> = {
    'sim --out': (out) => ['sim', '--quiet', '--runs', '1', '--out', out],
    'sim merge -o': (out) => ['sim', 'merge', results, '-o', out],
    'mailbox export --out': (out) => ['mailbox', 'export', mb.dir, '--out', out],
    'a2a bench --out': (out) => ['a2a', 'bench', '--trials', '1', '--warmup', '0', '--out', out],
    // Refused before the keys are read or anything is sent: no agent is needed at this URL.
    'a2a send --out': (out) => [
      'a2a',
      'send',
      'http://127.0.0.1:1',
      'Inspect lot 7.',
      '--keys',
      'k.json',
      '--out',
      out,
    ],
  };
  for (const [name, argv] of Object.entries(commands)) {
    it(`${name}: a device, a FIFO, a folder or a link to a device is refused (exit 2) and left as it was`, async () => {
      for (const [what, odd] of Object.entries(oddPaths())) {
        const { out, err } = await cli(argv(odd.path), 2);
        expect(err, what).toBe(
          `witness: ${odd.path} exists and is ${odd.kind}, not a regular file; give the path of a file to write (Witness writes regular files only).\n`,
        );
        expect(out, what).toBe('');
        expect(odd.is(odd.path), what).toBe(true);
      }
    });
  }
});

/** Runs witness as a process with a deadline: a spinning mkdir would never return in-process. */
function run(...argv: string[]) {
  const [command, ...args] = witnessCommand();
  const r = spawnSync(command as string, [...args, ...argv], { encoding: 'utf8', timeout: 30_000 });
  return { status: r.status, err: r.stderr };
}

describe('a folder that cannot be made is an error, not a loop', () => {
  const refused =
    'witness: Cannot create the folder /proc/witness-nosuch: mkdir failed with ENOENT, although /proc exists (a file system that does not allow new folders here, such as /proc); choose another path.\n';

  it('mailbox init /proc/…', () => {
    expect(run('mailbox', 'init', '/proc/witness-nosuch', '--key', join(tempDir(), 'k.json'))).toEqual({
      status: 2,
      err: refused,
    });
  });

  it('sim --out /proc/…/x.jsonl', () => {
    expect(run('sim', '--quiet', '--out', '/proc/witness-nosuch/x.jsonl')).toEqual({ status: 2, err: refused });
  });

  it('mailbox import FILE /proc/…/imp', async () => {
    const mb = await makeMailbox(['a']);
    const file = join(tempDir(), 'mb.export.jsonl');
    await cli(['mailbox', 'export', mb.dir, '--out', file]);
    expect(run('mailbox', 'import', file, '/proc/witness-nosuch/imp', '--key', mb.keyPath)).toEqual({
      status: 2,
      err: refused,
    });
  });

  it('a file where a parent folder belongs is named', async () => {
    const file = await resultsFile();
    const { err } = await cli(['sim', '--quiet', '--out', join(file, 'x.jsonl')], 2);
    expect(err).toBe(
      `witness: Cannot create the folder ${file}: ${file} exists and is not a folder; choose another path.\n`,
    );
  });
});
