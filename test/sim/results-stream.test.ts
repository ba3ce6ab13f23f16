/**
 * Results files read as streams: lines that straddle the
 * 1 MiB read chunks come out whole, a torn tail is reported, and a file that is not
 * results at all (README.md) is an error, not an empty table.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { memoryIo } from '../../src/cli/io.js';
import { runMain } from '../../src/cli/main.js';
import { fileLines } from '../../src/sim/experiment/results-stream.js';

const ROOT = join(import.meta.dirname, '..', '..');

describe('results streams', () => {
  it('yields every line whole across chunk boundaries, and says when the last is torn', () => {
    const dir = mkdtempSync(join(tmpdir(), 'witness-stream-'));
    const long = 'x'.repeat(1_500_000);
    const lines = ['a', long, 'b', `${long}é`, ''];
    writeFileSync(join(dir, 'f'), `${lines.join('\n')}\ntorn`);
    const it = fileLines(join(dir, 'f'));
    const got: string[] = [];
    let next = it.next();
    for (; !next.done; next = it.next()) got.push(next.value.raw);
    expect(got).toEqual(lines);
    expect(next.value.tornTail).toBe(true);
  });

  it('`witness report README.md` is an error (exit 2) naming the file, not an empty table', async () => {
    const io = memoryIo(ROOT);
    const code = await runMain(['report', 'README.md'], io);
    expect(code).toBe(2);
    expect(io.err).toMatch(/README\.md is not a results file: none of its \d+ lines is a run record/);
    expect(io.err).not.toContain('skipped');
    expect(io.out).toBe('');
  });
});
