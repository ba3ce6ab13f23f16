/**
 * The runs a sweep has left to play are a walk over the lazy plan, not a list (issue
 * 18): the walk hands out exactly the plan minus the finished runs, in plan order, and
 * a sweep's file is byte for byte what it was when the runs left were an array — the
 * digests below were taken from the commit before the walk (3d0940e), with that code,
 * and re-taken when seq became index-major (seq = index × cells + the cell's place):
 * that moved every line's seq and place in the file, and nothing else, which
 * CONTENT (the lines without their seq, sorted) pins, unchanged since 3d0940e.
 */
import { getEventListeners } from 'node:events';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { sha256Hex } from '../../src/core/hash.js';
import { lazyPlan, type PlannedRun, runQueue } from '../../src/sim/experiment/plan.js';
import { runExperiment } from '../../src/sim/experiment/run.js';
import { parseExperiment } from '../../src/sim/experiment/schema.js';

const experiment = () =>
  parseExperiment({
    name: 'unit',
    seed: 5,
    runs: 40,
    grid: { honest: [3, 5], byzantine: [0, 1], byzantineStrategy: ['split', 'random'], rounds: 10 },
  });
/** SHA-256 of the results files for `experiment()`: whole (any concurrency, any workers) and shard 2/3, in index-major order. */
const WHOLE = '36a575361cd5f49387a9f23f822560a0778b8ce222507ea4f4c2649b55ed5938';
const SHARD_2_OF_3 = 'c97f7cf83bf5e09952cbaae14de74a82badf85316e621795794e9ca965f262dc';
/** SHA-256 of the whole file's lines without their seq, sorted, as 3d0940e wrote them (cell-major). */
const CONTENT = '77ef9f07671915e30fdcfb0d1b911ab3e4c051d9b9ee4e0875c9a5237f55a5dd';

const digestOf = (path: string) => sha256Hex(readFileSync(path));
const contentOf = (path: string) =>
  sha256Hex(
    readFileSync(path, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => l.replace(/"seq":\d+,/, ''))
      .sort()
      .join('\n'),
  );

describe('runQueue', () => {
  it('hands out the plan minus the finished runs, in plan order, as many as it says', () => {
    const plan = lazyPlan(parseExperiment({ ...experiment(), runs: 7 }));
    fc.assert(
      fc.property(fc.uniqueArray(fc.nat({ max: plan.length - 1 })), (finishedSeqs) => {
        const finished = new Set(finishedSeqs);
        const queue = runQueue(plan, { has: (run) => finished.has(run.seq), count: finished.size });
        const taken: PlannedRun[] = [];
        for (let run = queue.take(); run; run = queue.take()) taken.push(run);
        expect(taken.map((r) => r.seq)).toEqual([...plan].map((r) => r.seq).filter((seq) => !finished.has(seq)));
        expect(taken).toHaveLength(queue.length);
      }),
    );
  });
  it('says it is a bug when the finished runs were miscounted, instead of stopping short', () => {
    const plan = lazyPlan(experiment());
    const queue = runQueue(plan, { has: (run) => run.seq < 2, count: 1 });
    expect(() => {
      for (let i = 0; i <= queue.length; i++) queue.take();
    }).toThrow(/runs left to play, not the .* counted/);
  });
});

describe('worker threads', () => {
  it('leave nothing attached to the sweep signal once it ends (it once kept every chunk of records reachable)', async () => {
    const controller = new AbortController();
    await runExperiment({
      experiment: experiment(),
      workers: 2,
      pool: { workersOnly: true },
      keepRecords: false,
      signal: controller.signal,
    });
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });
});

describe('a fresh sweep writes the same bytes as when the runs left were an array', () => {
  const dir = mkdtempSync(join(tmpdir(), 'witness-queue-'));
  it('in one thread, with concurrency, and with worker threads', async () => {
    for (const [name, options] of [
      ['one', {}],
      ['c4', { concurrency: 4 }],
      ['w3', { workers: 3, pool: { workersOnly: true, chunk: 5 } }],
    ] as const) {
      await runExperiment({ experiment: experiment(), out: join(dir, `${name}.jsonl`), ...options });
      expect(digestOf(join(dir, `${name}.jsonl`)), name).toBe(WHOLE);
      expect(contentOf(join(dir, `${name}.jsonl`)), name).toBe(CONTENT);
    }
  });
  it('for one shard, in one thread and with worker threads', async () => {
    const shard = { index: 2, count: 3 };
    await runExperiment({ experiment: experiment(), out: join(dir, 's2.jsonl'), shard });
    expect(digestOf(join(dir, 's2.jsonl'))).toBe(SHARD_2_OF_3);
    const pool = { workersOnly: true, chunk: 5 };
    await runExperiment({ experiment: experiment(), out: join(dir, 's2-w.jsonl'), shard, workers: 3, pool });
    expect(digestOf(join(dir, 's2-w.jsonl'))).toBe(SHARD_2_OF_3);
  });
  it('when resumed from a file cut short, with gaps, in one thread and with workers', async () => {
    for (const workers of [1, 2]) {
      const out = join(dir, `resumed-${workers}.jsonl`);
      await runExperiment({ experiment: experiment(), out });
      const lines = readFileSync(out, 'utf8').split('\n').filter(Boolean);
      // Every third run of the first half is left out, and the second half is gone.
      writeFileSync(out, lines.flatMap((l, i) => (i < lines.length / 2 && i % 3 !== 0 ? [`${l}\n`] : [])).join(''));
      const again = await runExperiment({
        experiment: experiment(),
        out,
        workers,
        pool: { workersOnly: true, chunk: 5 },
      });
      expect(again.ran + again.skipped).toBe(lines.length);
      // Resumed runs are appended after the ones kept: same lines, not the same order.
      expect(readFileSync(out, 'utf8').split('\n').filter(Boolean).sort()).toEqual([...lines].sort());
    }
  });
});
