/**
 * core's writeAll and the results writer on a full disk (for the
 * writes under every acknowledgement): a write that does not fit is finished or
 * failed, never taken as whole, and a results file keeps only complete lines.
 * The disk is a small tmpfs mounted and removed by the test.
 */
import { closeSync, mkdirSync, openSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeAll } from '../../src/core/atomic-write.js';
import { isWitnessError } from '../../src/core/errors.js';
import { openJsonlWriter, readJsonl } from '../../src/core/jsonl.js';
import { fillDisk, mountTmpfs, type Tmpfs, TMPFS_UNAVAILABLE } from '../mailbox/faults.js';

describe.skipIf(TMPFS_UNAVAILABLE !== undefined)('writes on a full disk', () => {
  let fs: Tmpfs;
  let dir: string; // fillDisk puts its filler beside this folder
  beforeAll(() => {
    fs = mountTmpfs(1024 * 1024);
    dir = join(fs.dir, 'files');
    mkdirSync(dir);
  });
  afterAll(() => fs?.unmount());

  it('writeAll fails (ENOSPC) on a write that only partly fits, instead of returning after a short write', () => {
    const path = join(dir, 'short.bin');
    const filler = fillDisk(dir, 16 * 1024, 'short-filler');
    const fd = openSync(path, 'a');
    try {
      let error: unknown;
      try {
        writeAll(fd, Buffer.alloc(256 * 1024, 0x61), { sync: 'data' });
      } catch (e) {
        error = e;
      }
      expect((error as NodeJS.ErrnoException | undefined)?.code).toBe('ENOSPC');
      expect(statSync(path).size).toBeLessThan(256 * 1024); // what the kernel took before it ran out: the caller cuts it
    } finally {
      closeSync(fd);
      rmSync(filler);
      rmSync(path);
    }
  });

  it('writeAll writes every byte and syncs when there is room', () => {
    const path = join(dir, 'whole.bin');
    const fd = openSync(path, 'a');
    try {
      writeAll(fd, Buffer.alloc(200 * 1024, 0x62), { sync: 'full' });
    } finally {
      closeSync(fd);
    }
    expect(readFileSync(path)).toEqual(Buffer.alloc(200 * 1024, 0x62));
    rmSync(path);
  });

  it('a results writer on a full disk acknowledges only lines it stored whole; once space is freed the file reads clean', () => {
    const path = join(dir, 'results.jsonl');
    const writer = openJsonlWriter(path, { fsync: 'always' });
    const filler = fillDisk(dir, 24 * 1024, 'results-filler');
    const acked: number[] = [];
    const errors: unknown[] = [];
    try {
      for (let i = 0; i < 200; i++) {
        try {
          writer.append({ run: i, pad: 'x'.repeat(700) });
          acked.push(i);
        } catch (error) {
          errors.push(error);
        }
      }
      expect(errors.length).toBeGreaterThan(0);
      for (const e of errors) expect(isWitnessError(e, 'IO'), String(e)).toBe(true);
      const text = readFileSync(path, 'utf8');
      expect(text === '' || text.endsWith('\n')).toBe(true); // no torn line left for the next append to be glued to
      rmSync(filler);
      writer.append({ run: 'after' });
    } finally {
      rmSync(filler, { force: true });
      writer.close(); // also on failure, or the tmpfs stays busy and cannot be unmounted
    }
    const read = readJsonl<{ run: number | string }>(path);
    expect(read.problems).toEqual([]);
    expect(read.tornTail).toBe(false);
    expect(read.records.map((r) => r.value.run)).toEqual([...acked, 'after']);
    rmSync(path);
  });
});
