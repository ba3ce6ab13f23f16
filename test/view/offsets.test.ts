import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fileLines } from '../../src/sim/experiment/results-stream.js';

describe('fileLines byte offsets (what the viewer reads a run back from)', () => {
  it("the bytes at each line's offset and length are that line, for any text and any chunk size", () => {
    const dir = mkdtempSync(join(tmpdir(), 'witness-offsets-'));
    const path = join(dir, 'f.jsonl');
    fc.assert(
      fc.property(
        fc.array(
          fc.string({ unit: 'grapheme', maxLength: 40 }).map((s) => s.replace(/\n/g, ' ')),
          { maxLength: 30 },
        ),
        fc.integer({ min: 1, max: 64 }),
        (lines, chunk) => {
          writeFileSync(path, lines.map((l) => `${l}\n`).join(''));
          const bytes = readFileSync(path);
          const seen = [...fileLines(path, chunk)];
          expect(seen.map((s) => s.raw)).toEqual(lines);
          for (const s of seen) expect(bytes.subarray(s.offset, s.offset + s.bytes).toString('utf8')).toBe(s.raw);
        },
      ),
    );
  });
});
