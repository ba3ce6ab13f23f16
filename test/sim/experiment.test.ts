import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { canonicalize } from '../../src/core/canonical-json.js';
import { sha256Hex } from '../../src/core/hash.js';
import { mergeResults } from '../../src/sim/experiment/merge.js';
import { expandCells, planRuns } from '../../src/sim/experiment/plan.js';
import { preset } from '../../src/sim/experiment/presets.js';
import { type ExperimentProgress, readResults, runExperiment } from '../../src/sim/experiment/run.js';
import { parseExperiment } from '../../src/sim/experiment/schema.js';

const tempDir = () => mkdtempSync(join(tmpdir(), 'witness-sim-'));
const smallExperiment = () =>
  parseExperiment({
    name: 'unit',
    seed: 5,
    runs: 6,
    grid: { honest: [3, 5], byzantine: [0, 1], byzantineStrategy: ['split', 'random'], rounds: 10 },
  });

describe('experiment plan', () => {
  it('collapses cells that differ only in the strategy of absent Byzantine agents', () => {
    const cells = expandCells(smallExperiment());
    // h ∈ {3,5} × (b=0 once, b=1 with two strategies)
    expect(cells).toHaveLength(6);
  });
  it('gives every run a stable id and its own seed', () => {
    const a = planRuns(smallExperiment());
    const b = planRuns(smallExperiment());
    expect(a.map((r) => r.id)).toEqual(b.map((r) => r.id));
    expect(new Set(a.map((r) => r.id)).size).toBe(a.length);
    expect(new Set(a.map((r) => r.seed)).size).toBe(a.length);
  });
  it('derives each id from the canonical JSON of its cell, index and base seed', () => {
    const e = smallExperiment();
    for (const run of planRuns(e).slice(0, 5)) {
      const digest = sha256Hex(`witness/run/v1\0${canonicalize({ cell: run.cell, index: run.index, seed: e.seed })}`);
      expect(run.id).toBe(`r-${digest.slice(0, 16)}`);
      expect(run.seed).toBe(Number.parseInt(digest.slice(16, 28), 16));
    }
  });
  it('changes every id when the base seed changes', () => {
    const other = planRuns({ ...smallExperiment(), seed: 6 });
    const ids = new Set(planRuns(smallExperiment()).map((r) => r.id));
    expect(other.some((r) => ids.has(r.id))).toBe(false);
  });
  it('splits runs into disjoint shards that cover the whole plan', () => {
    const all = planRuns(smallExperiment()).map((r) => r.id);
    const parts = [1, 2, 3].flatMap((index) => planRuns(smallExperiment(), { index, count: 3 }).map((r) => r.id));
    expect(parts.sort()).toEqual([...all].sort());
  });
  it('builds the paper-benign grid: N ∈ {4, 8, 16} × both awareness variants × 25 runs', () => {
    const e = parseExperiment(preset('paper-benign'));
    expect(expandCells(e)).toHaveLength(6);
    expect(planRuns(e)).toHaveLength(150);
  });
  it('builds the paper-byzantine grid: 8 honest + b ∈ {1..4} × 25 runs', () => {
    const e = parseExperiment(preset('paper-byzantine'));
    expect(expandCells(e).map((c) => c.byzantine)).toEqual([1, 2, 3, 4]);
    expect(expandCells(e).every((c) => c.honest === 8)).toBe(true);
    expect(planRuns(e)).toHaveLength(100);
  });
});

describe('runExperiment', () => {
  it('writes a byte-identical results file for the same seed', async () => {
    const dir = tempDir();
    await runExperiment({ experiment: smallExperiment(), out: join(dir, 'a.jsonl') });
    await runExperiment({ experiment: smallExperiment(), out: join(dir, 'b.jsonl'), concurrency: 4 });
    const a = readFileSync(join(dir, 'a.jsonl'));
    expect(a.length).toBeGreaterThan(0);
    expect(a.equals(readFileSync(join(dir, 'b.jsonl')))).toBe(true);
  });
  it('writes the same bytes with worker threads as in one thread', async () => {
    const dir = tempDir();
    const experiment = parseExperiment({ ...smallExperiment(), runs: 40 });
    await runExperiment({ experiment, out: join(dir, 'one.jsonl') });
    await runExperiment({ experiment, out: join(dir, 'two.jsonl'), workers: 2, pool: { workersOnly: true, chunk: 7 } });
    expect(readFileSync(join(dir, 'two.jsonl')).equals(readFileSync(join(dir, 'one.jsonl')))).toBe(true);
  });
  it('merges shards 1/2 and 2/2 into exactly the unsharded file', async () => {
    const dir = tempDir();
    const e = smallExperiment();
    await runExperiment({ experiment: e, out: join(dir, 'all.jsonl') });
    await runExperiment({ experiment: e, out: join(dir, 's1.jsonl'), shard: { index: 1, count: 2 } });
    await runExperiment({ experiment: e, out: join(dir, 's2.jsonl'), shard: { index: 2, count: 2 } });
    const report = mergeResults([join(dir, 's2.jsonl'), join(dir, 's1.jsonl')], join(dir, 'merged.jsonl'));
    expect(report.lines).toBe(planRuns(e).length);
    const lines = (f: string) => readFileSync(join(dir, f), 'utf8').split('\n').filter(Boolean);
    expect(new Set(lines('merged.jsonl'))).toEqual(new Set(lines('all.jsonl')));
    expect(readFileSync(join(dir, 'merged.jsonl'), 'utf8')).toBe(readFileSync(join(dir, 'all.jsonl'), 'utf8'));
  });
  it('refuses to merge two different lines for the same run id', async () => {
    const dir = tempDir();
    await runExperiment({ experiment: smallExperiment(), out: join(dir, 'a.jsonl') });
    const [first, ...rest] = readFileSync(join(dir, 'a.jsonl'), 'utf8').split('\n');
    writeFileSync(join(dir, 'b.jsonl'), `${first!.replace('"rounds":', '"rounds":1,"x":')}\n${rest.join('\n')}`);
    expect(() => mergeResults([join(dir, 'a.jsonl'), join(dir, 'b.jsonl')], join(dir, 'm.jsonl'))).toThrow(
      /differs between/,
    );
  });
  it('merges an input out of seq order and collapses duplicates within and across inputs', async () => {
    const dir = tempDir();
    const e = smallExperiment();
    await runExperiment({ experiment: e, out: join(dir, 'all.jsonl') });
    const all = readFileSync(join(dir, 'all.jsonl'), 'utf8').split('\n').filter(Boolean);
    // Reversed (not a sweep's order), one line twice in it, and three lines again in another file.
    writeFileSync(join(dir, 'rev.jsonl'), `${[...all].reverse().join('\n')}\n${all[4]}\n`);
    writeFileSync(join(dir, 'some.jsonl'), `${all.slice(0, 3).join('\n')}\n`);
    const report = mergeResults([join(dir, 'some.jsonl'), join(dir, 'rev.jsonl')], join(dir, 'm.jsonl'), planRuns(e));
    expect(report).toMatchObject({ lines: all.length, duplicates: 4, missing: [], planned: all.length });
    expect(readFileSync(join(dir, 'm.jsonl'), 'utf8')).toBe(readFileSync(join(dir, 'all.jsonl'), 'utf8'));
  });
  it('refuses one run id at two seqs, and leaves no merged file', async () => {
    const dir = tempDir();
    await runExperiment({ experiment: smallExperiment(), out: join(dir, 'a.jsonl') });
    const lines = readFileSync(join(dir, 'a.jsonl'), 'utf8').split('\n').filter(Boolean);
    const moved = lines[0]!.replace(/"seq":0\b/, '"seq":9999');
    expect(moved).not.toBe(lines[0]);
    writeFileSync(join(dir, 'b.jsonl'), `${moved}\n`);
    expect(() => mergeResults([join(dir, 'a.jsonl'), join(dir, 'b.jsonl')], join(dir, 'm.jsonl'))).toThrow(
      /differs between .*a\.jsonl:1 and .*b\.jsonl:1/,
    );
    expect(existsSync(join(dir, 'm.jsonl'))).toBe(false);
  });
  it('resumes: a rerun plays only the runs that are missing', async () => {
    const dir = tempDir();
    const out = join(dir, 'r.jsonl');
    const e = smallExperiment();
    const full = await runExperiment({ experiment: e, out });
    const text = readFileSync(out, 'utf8').split('\n');
    writeFileSync(out, `${text.slice(0, 10).join('\n')}\n`);
    const again = await runExperiment({ experiment: e, out });
    expect(again.skipped).toBe(10);
    expect(again.records).toHaveLength(full.records.length - 10);
    const ids = readResults(out).records.map((r) => r.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.length).toBe(full.records.length);
  });
  it('counts the runs already in the file in the tally, as the table does (#18 item 16)', async () => {
    const dir = tempDir();
    const out = join(dir, 't.jsonl');
    const e = smallExperiment();
    const full = await runExperiment({ experiment: e, out });
    const want = { valid: 0, invalid: 0, none: 0, timeout: 0, escalated: 0 };
    for (const r of full.records) want[r.outcome]++;
    const seen: ExperimentProgress[] = [];
    const again = await runExperiment({ experiment: e, out, onProgress: (p) => seen.push(p) });
    expect(again.ran).toBe(0);
    expect(seen.at(-1)).toMatchObject({ done: full.records.length, skipped: full.records.length, outcomes: want });
    expect(Object.values(want).reduce((a, b) => a + b, 0)).toBe(full.records.length);
  });
  it('stops taking new runs when aborted and says so', async () => {
    const controller = new AbortController();
    let seen = 0;
    const summary = await runExperiment({
      experiment: smallExperiment(),
      onProgress: (p) => {
        seen = p.done;
        if (p.done >= 3) controller.abort();
      },
      signal: controller.signal,
    });
    expect(summary.aborted).toBe(true);
    expect(seen).toBeLessThan(summary.planned);
  });
  it('can stream records in run order without keeping them', async () => {
    const seen: number[] = [];
    const summary = await runExperiment({
      experiment: smallExperiment(),
      keepRecords: false,
      onRecord: (r) => seen.push(r.seq),
    });
    expect(summary.records).toEqual([]);
    expect(summary.ran).toBe(summary.planned);
    expect(seen).toEqual([...seen].sort((a, b) => a - b));
    expect(seen).toHaveLength(summary.planned);
  });
  it('records the fields other tools rely on in every line', async () => {
    const { records } = await runExperiment({ experiment: smallExperiment() });
    const r = records[0]!;
    for (const key of ['id', 'cell', 'seed', 'honest', 'byzantine', 'initial', 'rounds', 'outcome', 'trajectory'])
      expect(r).toHaveProperty(key);
    expect(r.trajectory[0]).toHaveProperty('values');
    expect(r.trajectory[0]).toHaveProperty('votes');
  });
});

describe('results files', () => {
  it('reports a corrupt line by number and still uses the other lines', async () => {
    const dir = tempDir();
    const out = join(dir, 'c.jsonl');
    await runExperiment({ experiment: smallExperiment(), out });
    const lines = readFileSync(out, 'utf8').split('\n');
    lines[2] = '{"id": "broken"';
    lines[4] = '{"id":"x","outcome":"maybe"}';
    writeFileSync(out, lines.join('\n'));
    const { records, problems } = readResults(out);
    expect(problems.map((p) => p.line)).toEqual([3, 5]);
    expect(records).toHaveLength(lines.filter(Boolean).length - 2);
  });
});
