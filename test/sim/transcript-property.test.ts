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
import { MAX_PROBLEMS_PER_CODE, verifyResults } from '../../src/sim/transcript/verify.js';

const dir = mkdtempSync(join(tmpdir(), 'witness-transcript-prop-'));
const key = newSigningKey('lab');
const directory = new KeyDirectory(
  addKey(emptyDirectory(), publicJwk(key), { notBefore: Date.now() - 60_000, notAfter: Date.now() + 86_400_000 }),
);
let original: string[] = [];
/** 40 runs: more than the problem list keeps of one code (MAX_PROBLEMS_PER_CODE). */
let longer: string[] = [];

beforeAll(async () => {
  // Two shards merged would exercise two chains; one whole sweep keeps each run short. Both kinds are in the CLI test.
  await runExperiment({
    experiment: parseExperiment({ ...preset('smoke'), runs: 4 }),
    out: join(dir, 'r.jsonl'),
    sign: { key },
  });
  original = readFileSync(join(dir, 'r.jsonl'), 'utf8').split('\n').filter(Boolean);
  await runExperiment({
    experiment: parseExperiment({ ...preset('smoke'), runs: 10 }),
    out: join(dir, 'long.jsonl'),
    sign: { key },
  });
  longer = readFileSync(join(dir, 'long.jsonl'), 'utf8').split('\n').filter(Boolean);
});

let n = 0;
/** Verifies `lines` as a results file with the checkpoint of `of` (the original by default). */
function verdict(lines: string[], of = 'r.jsonl') {
  const file = join(dir, `t${n++}.jsonl`);
  writeFileSync(file, lines.map((l) => `${l}\n`).join(''));
  copyFileSync(checkpointPath(join(dir, of)), checkpointPath(file));
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

describe('problems of a file broken in many places: each where it belongs, the first of each code listed, the rest counted', () => {
  it('any set of lines dropped: RUN_MISSING names each dropped run before the next line kept (or after the last), in seq order', () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.nat({ max: 39 }), { minLength: 1, maxLength: 40 }), (dropped) => {
        expect(longer.length).toBe(40);
        const gone = new Set(dropped);
        const kept = longer.filter((_, i) => !gone.has(i));
        const runs = longer.map((l) => JSON.parse(l) as { id: string; seq: number });
        const expected = [...gone]
          .sort((a, b) => a - b)
          .map((i) => {
            const after = kept.findIndex((l) => (JSON.parse(l) as { seq: number }).seq > runs[i]!.seq);
            return {
              id: runs[i]!.id,
              line: after === -1 ? kept.length + 1 : after + 1,
              where: after === -1 ? 'after the last line' : `before line ${after + 1}`,
            };
          });
        const missing = verdict(kept, 'long.jsonl').problems.filter((p) => p.code === 'RUN_MISSING');
        const listed = expected.slice(0, MAX_PROBLEMS_PER_CODE);
        expect(
          missing.slice(0, listed.length).map((p) => ({
            id: /run (r-[0-9a-f]+)/.exec(p.message)?.[1],
            line: p.line,
            where: /belongs (.*)$/.exec(p.message)?.[1],
          })),
        ).toEqual(listed);
        const more = expected.length - listed.length;
        expect(missing.slice(listed.length).map((p) => p.message)).toEqual(
          more > 0 ? [expect.stringMatching(new RegExp(`^and ${more} more lines with this problem`))] : [],
        );
      }),
      // Long runs of dropped lines too: more of them belong before one line than the list keeps.
      {
        numRuns: 60,
        examples: [
          [Array.from({ length: 30 }, (_, i) => i)],
          [Array.from({ length: 25 }, (_, i) => i + 10)],
          [Array.from({ length: 40 }, (_, i) => i)],
        ],
      },
    );
  });

  it('every line changed: the first MAX_PROBLEMS_PER_CODE named by line, then one problem counting the rest', () => {
    const changed = longer.map((l) => l.replace('"cell":"', '"cell":"x'));
    const problems = verdict(changed, 'long.jsonl').problems.filter((p) => p.code === 'CONTENT_MISMATCH');
    expect(problems.map((p) => p.line)).toEqual([
      ...Array.from({ length: MAX_PROBLEMS_PER_CODE }, (_, i) => i + 1),
      undefined,
    ]);
    expect(problems.at(-1)?.message).toMatch(
      new RegExp(`^and ${40 - MAX_PROBLEMS_PER_CODE} more lines with this problem`),
    );
  });
});
