/**
 * Properties of signed results, with fast-check (the seed is printed on failure): any
 * single change to a signed file — one character of one line, a line dropped, a line
 * duplicated anywhere, two lines swapped — is reported, and the report names the line
 * where it happened (or, for a change to the last line's receipt, the checkpoint).
 */
import { copyFileSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { addKey, emptyDirectory, KeyDirectory } from '../../src/attest/key-directory.js';
import { newSigningKey, publicJwk } from '../../src/attest/keys.js';
import { preset } from '../../src/sim/experiment/presets.js';
import { runExperiment } from '../../src/sim/experiment/run.js';
import { parseExperiment } from '../../src/sim/experiment/schema.js';
import { checkpointPath } from '../../src/sim/transcript/format.js';
import { verifyResults } from '../../src/sim/transcript/verify.js';

const dir = mkdtempSync(join(tmpdir(), 'witness-transcript-prop-'));
const key = newSigningKey('lab');
const directory = new KeyDirectory(addKey(emptyDirectory(), publicJwk(key), { notBefore: Date.now() - 60_000, notAfter: Date.now() + 86_400_000 }));
let original: string[] = [];

beforeAll(async () => {
  // Two shards merged would exercise two chains; one whole sweep keeps each run short. Both kinds are in the CLI test.
  await runExperiment({ experiment: parseExperiment({ ...preset('smoke'), runs: 4 }), out: join(dir, 'r.jsonl'), sign: { key } });
  original = readFileSync(join(dir, 'r.jsonl'), 'utf8').split('\n').filter(Boolean);
});

let n = 0;
/** Verifies `lines` as a results file with the original checkpoint. */
function verdict(lines: string[]) {
  const file = join(dir, `t${n++}.jsonl`);
  writeFileSync(file, lines.map((l) => `${l}\n`).join(''));
  copyFileSync(checkpointPath(join(dir, 'r.jsonl')), checkpointPath(file));
  return verifyResults(file, { directory });
}

/** The problem is reported at one of `lines` (1-based), or for the whole file. */
function reportedNear(result: ReturnType<typeof verdict>, lines: number[]): boolean {
  return !result.ok && result.problems.some((p) => p.line === undefined || lines.includes(p.line));
}

describe('any single change to a signed results file is reported', () => {
  it('one character of one line replaced by another', () => {
    fc.assert(
      fc.property(fc.nat(), fc.nat(), fc.string({ minLength: 1, maxLength: 1, unit: 'binary' }), (i, at, ch) => {
        const lines = [...original];
        const k = i % lines.length;
        const line = lines[k] as string;
        const p = at % line.length;
        fc.pre(line[p] !== ch && ch !== '\n' && ch !== '\r');
        lines[k] = line.slice(0, p) + ch + line.slice(p + 1);
        // An edit in a receipt breaks the next line's link; the last line's, the checkpoint's head.
        expect(reportedNear(verdict(lines), [k + 1, k + 2])).toBe(true);
      }),
      { numRuns: 150 },
    );
  });
  it('one line dropped', () => {
    fc.assert(
      fc.property(fc.nat(), (i) => {
        const lines = [...original];
        const k = i % lines.length;
        lines.splice(k, 1);
        expect(reportedNear(verdict(lines), [k + 1])).toBe(true);
      }),
    );
  });
  it('one line duplicated to any place', () => {
    fc.assert(
      fc.property(fc.nat(), fc.nat(), (i, j) => {
        const lines = [...original];
        const from = i % lines.length;
        const to = j % (lines.length + 1);
        lines.splice(to, 0, lines[from] as string);
        const result = verdict(lines);
        expect(result.problems.some((p) => p.code === 'DUPLICATE_RUN')).toBe(true);
      }),
    );
  });
  it('two different lines swapped', () => {
    fc.assert(
      fc.property(fc.nat(), fc.nat(), (i, j) => {
        const lines = [...original];
        const a = i % lines.length;
        const b = j % lines.length;
        fc.pre(a !== b);
        [lines[a], lines[b]] = [lines[b] as string, lines[a] as string];
        expect(reportedNear(verdict(lines), [Math.min(a, b) + 1])).toBe(true);
      }),
    );
  });
});
