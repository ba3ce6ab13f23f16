/**
 * A sweep on worker threads hands on what one thread would: the same bytes in plain and
 * signed results files, the same records when it keeps them, and tallies equal to the
 * records' (outcome, validity, convergence round), whether the workers play every run
 * or this thread plays beside them.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { newSigningKey } from '../../src/attest/keys.js';
import { WitnessError } from '../../src/core/errors.js';
import type { RunRecord } from '../../src/sim/experiment/record.js';
import { readResults, runExperiment } from '../../src/sim/experiment/run.js';
import type { RunTally } from '../../src/sim/experiment/run-tally.js';
import { type Experiment, parseExperiment } from '../../src/sim/experiment/schema.js';
import { CellSummaries, convergenceRound, summarizeCells } from '../../src/sim/stats.js';

const tempDir = () => mkdtempSync(join(tmpdir(), 'witness-workers-'));
/** Stubborn honest agents and Byzantine ones that abstain, split and draw at random: several outcomes, and null validity occur. */
const experiment = () =>
  parseExperiment({
    name: 'workers',
    seed: 11,
    runs: 12,
    grid: {
      honest: [3, 4],
      byzantine: [0, 2],
      honestPolicy: ['plurality', 'stubborn'],
      byzantineStrategy: ['abstain', 'split', 'random'],
      rounds: 6,
    },
  });
const WORKERS_ONLY = { workersOnly: true, chunk: 5 };

/** What a tally says, read into a plain object (a record's tally computes its fields on read). */
const fieldsOf = (t: RunTally) => ({
  seq: t.seq,
  cell: t.cell,
  index: t.index,
  seed: t.seed,
  config: t.config,
  honest: t.honest,
  byzantine: t.byzantine,
  outcome: t.outcome,
  rounds: t.rounds,
  decisions: t.decisions,
  strict_valid: t.strict_valid,
  range_valid: t.range_valid,
  converged: t.converged,
});

describe('a sweep on worker threads', () => {
  it('writes the same signed results file as one thread', async () => {
    const dir = tempDir();
    const sign = { key: newSigningKey('lab') };
    await runExperiment({ experiment: experiment(), out: join(dir, 'one.jsonl'), sign });
    await runExperiment({ experiment: experiment(), out: join(dir, 'w.jsonl'), sign, workers: 3, pool: WORKERS_ONLY });
    const one = readFileSync(join(dir, 'one.jsonl'));
    expect(one.length).toBeGreaterThan(0);
    expect(readFileSync(join(dir, 'w.jsonl')).equals(one)).toBe(true);
  });

  it("keeps records equal to one thread's, rebuilt from the workers' lines", async () => {
    const one = await runExperiment({ experiment: experiment() });
    const workers = await runExperiment({ experiment: experiment(), workers: 2, pool: WORKERS_ONLY });
    expect(workers.records).toHaveLength(one.records.length);
    expect(workers.records).toEqual(one.records);
  });

  it("hands on tallies equal to one thread's, with each record's convergence round", async () => {
    const records: RunRecord[] = [];
    const here: RunTally[] = [];
    await runExperiment({ experiment: experiment(), onRecord: (r) => records.push(r), onTally: (t) => here.push(t) });
    const workers: RunTally[] = [];
    await runExperiment({
      experiment: experiment(),
      keepRecords: false,
      onTally: (t) => workers.push(t),
      workers: 3,
      pool: WORKERS_ONLY,
    });
    expect(workers.map(fieldsOf)).toEqual(here.map(fieldsOf));
    expect(here.map((t) => t.converged)).toEqual(records.map((r) => convergenceRound(r)));
    // The grid reaches more than one outcome and both kinds of validity, so the encoding is exercised.
    expect(new Set(workers.map((t) => t.outcome)).size).toBeGreaterThan(1);
    expect(new Set(workers.map((t) => t.strict_valid))).toEqual(new Set([true, false, null]));
    expect(workers.some((t) => t.converged === null) && workers.some((t) => t.converged !== null)).toBe(true);
  });

  it('tallies the table witness sim prints as a read of its file gives it', async () => {
    const out = join(tempDir(), 'r.jsonl');
    const table = new CellSummaries();
    await runExperiment({
      experiment: experiment(),
      out,
      keepRecords: false,
      onFileTally: (t) => table.add(t),
      workers: 3,
      pool: WORKERS_ONLY,
    });
    const readBack = summarizeCells(readResults(out).records);
    expect(readBack.length).toBeGreaterThan(1);
    expect(table.cells()).toEqual(readBack);
  });

  it('writes the same plain file when this thread plays beside the workers', async () => {
    const dir = tempDir();
    const bigger = parseExperiment({ ...experiment(), runs: 200 });
    await runExperiment({ experiment: bigger, out: join(dir, 'one.jsonl'), keepRecords: false });
    await runExperiment({ experiment: bigger, out: join(dir, 'mixed.jsonl'), keepRecords: false, workers: 2 });
    expect(readFileSync(join(dir, 'mixed.jsonl')).equals(readFileSync(join(dir, 'one.jsonl')))).toBe(true);
  });
});

describe('a sweep whose runs fail on worker threads', () => {
  it('fails with the error one thread raises, not a worker bug', async () => {
    // An experiment object built by hand (not parsed) can name a policy that does not exist.
    const unknownPolicy = (): Experiment => {
      const e = experiment();
      return { ...e, grid: { ...e.grid, honestPolicy: 'no-such-policy' } };
    };
    const one = await runExperiment({ experiment: unknownPolicy() }).catch((error: unknown) => error);
    const workers = await runExperiment({ experiment: unknownPolicy(), workers: 2, pool: WORKERS_ONLY }).catch(
      (error: unknown) => error,
    );
    expect(one).toBeInstanceOf(WitnessError);
    expect(workers).toBeInstanceOf(WitnessError);
    expect((workers as WitnessError).code).toBe((one as WitnessError).code);
    expect((workers as WitnessError).code).toBe('NOT_FOUND');
    expect((workers as WitnessError).message).toBe((one as WitnessError).message);
  });
});
