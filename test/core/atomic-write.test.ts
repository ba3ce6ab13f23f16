import { execFileSync, spawn } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { writeFileAtomic } from '../../src/core/atomic-write.js';
import { versionContent } from './support/atomic-writer.js';

const ROOT = join(import.meta.dirname, '..', '..');
const TSX_LOADER = pathToFileURL(join(ROOT, 'node_modules/tsx/dist/loader.mjs')).href;
const WRITER = join(import.meta.dirname, 'support', 'atomic-writer.ts');

function folder(): string {
  return mkdtempSync(join(tmpdir(), 'witness-atomic-'));
}

describe('writeFileAtomic', () => {
  it('replaces the content and leaves nothing else in the folder', () => {
    const dir = folder();
    const file = join(dir, 'a.json');
    writeFileSync(file, 'old');
    writeFileAtomic(file, 'new text');
    expect(readFileSync(file, 'utf8')).toBe('new text');
    expect(readdirSync(dir)).toEqual(['a.json']);
  });

  it('writes chunks (strings and bytes, from a generator) in order, as one file', () => {
    const dir = folder();
    const file = join(dir, 'chunks.jsonl');
    writeFileSync(file, 'old');
    writeFileAtomic(
      file,
      (function* () {
        yield 'a\n';
        yield Buffer.from('b\n');
        yield '';
        yield 'é\n';
      })(),
    );
    expect(readFileSync(file, 'utf8')).toBe('a\nb\né\n');
    expect(readdirSync(dir)).toEqual(['chunks.jsonl']);
  });

  it('keeps the old file and no temporary file when the chunk source throws midway', () => {
    const dir = folder();
    const file = join(dir, 'kept.jsonl');
    writeFileSync(file, 'old');
    expect(() =>
      writeFileAtomic(
        file,
        (function* () {
          yield 'half\n';
          throw new Error('source failed');
        })(),
      ),
    ).toThrow('source failed');
    expect(readFileSync(file, 'utf8')).toBe('old');
    expect(readdirSync(dir)).toEqual(['kept.jsonl']);
  });

  it('replaces a symbolic link at the target instead of writing through it', () => {
    const dir = folder();
    const victim = join(dir, 'victim.txt');
    writeFileSync(victim, 'do not touch');
    symlinkSync(victim, join(dir, 'a.json'));
    writeFileAtomic(join(dir, 'a.json'), 'mine');
    expect(readFileSync(victim, 'utf8')).toBe('do not touch');
    expect(statSync(join(dir, 'a.json')).isFile()).toBe(true);
    expect(readFileSync(join(dir, 'a.json'), 'utf8')).toBe('mine');
  });

  it('keeps the permission bits of the file it replaces, and gives a new file exactly the mode asked for', () => {
    const dir = folder();
    const kept = join(dir, 'kept.json');
    writeFileSync(kept, 'x');
    chmodSync(kept, 0o600);
    writeFileAtomic(kept, 'y');
    expect(statSync(kept).mode & 0o777).toBe(0o600);
    const fresh = join(dir, 'fresh.json');
    const umask = process.umask(0o077);
    try {
      writeFileAtomic(fresh, 'z', { mode: 0o644 });
    } finally {
      process.umask(umask);
    }
    expect(statSync(fresh).mode & 0o777).toBe(0o644);
  });

  it('leaves the old content and no temporary file when the rename fails', () => {
    const dir = folder();
    const target = join(dir, 'taken');
    // The folder appears while the file is written (after the check that refuses one up front), so the rename itself fails.
    const chunks = function* () {
      yield 'new';
      mkdirSync(target);
      writeFileSync(join(target, 'inside'), 'kept');
    };
    let error: NodeJS.ErrnoException | undefined;
    try {
      writeFileAtomic(target, chunks());
    } catch (e) {
      error = e as NodeJS.ErrnoException;
    }
    expect(error?.code).toMatch(/^(EISDIR|ENOTDIR|EEXIST|ENOTEMPTY)$/);
    expect(readdirSync(dir)).toEqual(['taken']);
    expect(readFileSync(join(target, 'inside'), 'utf8')).toBe('kept');
  });

  it('refuses a folder, a device or a FIFO up front, naming it, and leaves it as it was', () => {
    const dir = folder();
    const target = join(dir, 'taken');
    mkdirSync(target);
    expect(() => writeFileAtomic(target, 'new')).toThrow(`${target} exists and is a directory, not a regular file`);
    const device = join(dir, 'null');
    execFileSync('mknod', [device, 'c', '1', '3']); // our own device node (needs root, as CI runs), never /dev/null itself
    expect(() => writeFileAtomic(device, 'new')).toThrow(
      `${device} exists and is a character device, not a regular file`,
    );
    expect(lstatSync(device).isCharacterDevice()).toBe(true);
    expect(readdirSync(dir).sort()).toEqual(['null', 'taken']);
  });

  it('with exclusive, creates a missing file but never replaces an existing one', () => {
    const dir = folder();
    const file = join(dir, 'key.json');
    writeFileAtomic(file, 'first', { exclusive: true, mode: 0o600 });
    expect(() => writeFileAtomic(file, 'second', { exclusive: true, mode: 0o600 })).toThrow(/EEXIST/);
    expect(readFileSync(file, 'utf8')).toBe('first');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readdirSync(dir)).toEqual(['key.json']);
  });

  it('refuses a folder that does not exist with the file system error, creating nothing', () => {
    const dir = folder();
    expect(() => writeFileAtomic(join(dir, 'missing', 'a.json'), 'x')).toThrow(/ENOENT/);
    expect(existsSync(join(dir, 'missing'))).toBe(false);
  });

  it('leaves a whole version — the old or the new, never a torn one — when its writer is killed mid-write', async () => {
    for (let round = 0; round < 3; round++) {
      const dir = folder();
      const file = join(dir, 'big.bin');
      const seen = await new Promise<number>((resolve, reject) => {
        const child = spawn(process.execPath, ['--import', TSX_LOADER, WRITER, file], {
          stdio: ['ignore', 'pipe', 'inherit'],
        });
        const killAfter = 1 + round; // versions written before the kill lands in the next one
        let out = '';
        child.stdout.on('data', (chunk: Buffer) => {
          out += chunk.toString();
          const lines = out.split('\n').filter(Boolean);
          if (lines.length >= killAfter) child.kill('SIGKILL');
        });
        child.on('error', reject);
        child.on('exit', () => resolve(out.split('\n').filter(Boolean).length));
      });
      const content = readFileSync(file);
      const version = Number(/^version (\d+)\n/.exec(content.subarray(0, 32).toString('latin1'))?.[1]);
      expect(version).toBeGreaterThanOrEqual(seen);
      expect(content.equals(versionContent(version))).toBe(true);
    }
  }, 120_000);
});
