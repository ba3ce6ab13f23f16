/**
 * `witness sim --workers 2` against one thread, for bench/sim.ts: the same paper-benign
 * sweep written to a results file and tallied for the outcome table (CellSummaries,
 * PairedRuns), as the CLI does, at growing sizes. Two figures per size:
 * - wall time, what a user waits, which other work on a shared machine disturbs;
 * - the speedup on two free cores, from CPU time alone. A sweep on two cores cannot
 *   finish sooner than the larger of its busiest thread's CPU and half the CPU of all
 *   its threads (the playing threads and V8's helpers: compiling, collecting garbage);
 *   it waits for nothing else (the main thread plays whenever it has no worker reply
 *   to hand on), so that bound is its wall time when nothing else runs. The speedup is
 *   the ratio of the two sweeps' bounds (one thread's helpers use the other core too).
 * Per-thread CPU is read from /proc/self/task/<tid>/schedstat (Linux).
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PairedRuns as PairedRunsType } from '../../src/sim/paired.js';
import type { CellSummaries as CellSummariesType } from '../../src/sim/stats.js';
import type { runExperiment as RunExperiment } from '../../src/sim/experiment/run.js';
import type { parseExperiment } from '../../src/sim/experiment/schema.js';

type Experiment = ReturnType<typeof parseExperiment>;

export interface SweepCode {
  runExperiment: typeof RunExperiment;
  CellSummaries: new () => CellSummariesType;
  PairedRuns: new () => PairedRunsType;
}

interface _Measure {
  wallMs: number;
  /** CPU of every thread of the process over the sweep. */
  cpuMs: number;
  /** CPU of the busiest thread (this one or a worker). */
  busiestMs: number;
}

/** CPU time of each thread of this process, ms, by thread id. */
function _threads(): Map<string, number> {
  const out = new Map<string, number>();
  if (!existsSync('/proc/self/task')) return out;
  for (const tid of readdirSync('/proc/self/task')) {
    try {
      out.set(tid, Number(readFileSync(`/proc/self/task/${tid}/schedstat`, 'utf8').split(' ')[0]) / 1e6);
    } catch {
      // The thread ended between the listing and the read.
    }
  }
  return out;
}

/** One sweep into a fresh results file, tallied as the CLI tallies it. */
async function _sweep(code: SweepCode, experiment: Experiment, workers: number, games: number): Promise<_Measure> {
  const dir = mkdtempSync(join(tmpdir(), 'witness-bench-workers-'));
  const cells = new code.CellSummaries();
  const paired = new code.PairedRuns();
  const before = _threads();
  // Read at the last run, before the workers end (their threads, and CPU, are gone after).
  let after = before;
  let seen = 0;
  const cpu = process.cpuUsage();
  const start = process.hrtime.bigint();
  try {
    await code.runExperiment({
      experiment,
      out: join(dir, 'r.jsonl'),
      workers,
      keepRecords: false,
      onFileTally: (t) => {
        cells.add(t);
        paired.add(t);
        if (++seen === games) after = _threads();
      },
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const wallMs = Number(process.hrtime.bigint() - start) / 1e6;
  const used = process.cpuUsage(cpu);
  let busiestMs = 0;
  for (const [tid, ms] of after) busiestMs = Math.max(busiestMs, ms - (before.get(tid) ?? 0));
  return { wallMs, cpuMs: (used.user + used.system) / 1000, busiestMs };
}

const _best = (ms: _Measure[]): _Measure => ({
  wallMs: Math.min(...ms.map((m) => m.wallMs)),
  cpuMs: Math.min(...ms.map((m) => m.cpuMs)),
  busiestMs: Math.min(...ms.map((m) => m.busiestMs)),
});

/** Prints the table, the sizes from which two threads pay off, and the figure at the goal's size. */
export async function workersSection(
  code: SweepCode,
  experimentOf: (runs: number) => Experiment,
  options: { cells: number; runs: readonly number[]; reps: number; goalGames: number },
): Promise<void> {
  const { cells } = options;
  const [load1] = loadavg();
  console.log(
    `\nWorkers: paper-benign (plurality) written to a results file and tallied for the table, as \`witness sim\` does; one thread against --workers 2 (this thread and one worker thread); best of ${options.reps}; load average ${load1!.toFixed(1)} at the start.`,
  );
  console.log(
    'games   | 1 thread: wall ms | CPU ms | 2 threads: wall ms | CPU ms, all threads | busiest thread | speedup, wall | speedup on 2 free cores (CPU)',
  );
  // Warm this thread's code, as a long sweep has; a worker starts cold in every sweep, as it does in `witness sim`.
  for (const w of [1, 2]) await _sweep(code, experimentOf(50), w, 50 * cells);
  const rows: { games: number; wall: number; free: number }[] = [];
  for (const runs of options.runs) {
    const games = runs * cells;
    const one: _Measure[] = [];
    const two: _Measure[] = [];
    for (let rep = 0; rep < options.reps; rep++) {
      one.push(await _sweep(code, experimentOf(runs), 1, games));
      two.push(await _sweep(code, experimentOf(runs), 2, games));
    }
    const a = _best(one);
    const b = _best(two);
    const wall = a.wallMs / b.wallMs;
    const free = Math.max(a.busiestMs, a.cpuMs / 2) / Math.max(b.busiestMs, b.cpuMs / 2);
    rows.push({ games, wall, free });
    const n = (x: number) => Math.round(x).toLocaleString('en-US');
    console.log(
      `${n(games).padStart(7)} | ${n(a.wallMs).padStart(17)} | ${n(a.cpuMs).padStart(6)} | ${n(b.wallMs).padStart(18)} | ${n(b.cpuMs).padStart(19)} | ${n(b.busiestMs).padStart(14)} | ${wall.toFixed(2).padStart(13)} | ${free.toFixed(2).padStart(29)}`,
    );
  }
  // The smallest size from which the speedup exceeds `at` at every larger size measured.
  const from = (key: 'wall' | 'free', at: number) => {
    let k = rows.length;
    while (k > 0 && rows[k - 1]![key] > at) k--;
    return k < rows.length ? `${rows[k]!.games.toLocaleString('en-US')} games` : 'no size measured';
  };
  console.log(
    `Crossover (two threads faster at this size and every larger one measured): ${from('free', 1)} on 2 free cores; ${from('wall', 1)} by wall time on this machine (load average ${loadavg()[0]!.toFixed(1)} at the end).`,
  );
  const goal = rows.filter((r) => r.games >= options.goalGames);
  const met = goal.length > 0 && goal.every((r) => r.free >= 1.8);
  console.log(
    `Goal ≥ 1.8 on sweeps of ≥ ${options.goalGames.toLocaleString('en-US')} games: ${met ? 'met' : 'not met'} on 2 free cores (≥ 1.8 from ${from('free', 1.8)}); by wall time here from ${from('wall', 1.8)}.`,
  );
}
