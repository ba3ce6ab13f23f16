/**
 * @module
 * Running an experiment: plan the runs, skip those already in the results file
 * (resume), play the rest with up to `concurrency` games in flight, and append one
 * line per finished run in `seq` order. A run is written the moment it and every
 * run before it have finished, and no more than `concurrency` runs are ever in
 * flight or waiting, so a killed sweep loses at most those.
 */
import { WitnessError } from '../../core/errors.js';
import { lockFile } from '../../core/file-lock.js';
import type { PastCheckpointReport } from '../transcript/past-checkpoint.js';
import type { SignResultsOptions } from '../transcript/writer.js';
import type { Outcome } from '../types.js';
import { lazyPlan, type Plan, type PlannedRun, type RunQueue, runQueue, type Shard } from './plan.js';
import { type AgentFactory, playRun } from './play.js';
import type { PlayedChunk } from './chunk.js';
import { playInPool, yieldToEventLoop } from './pool.js';
import type { RunRecord } from './record.js';
import { type RunTally, tallyOfRecord } from './run-tally.js';
import type { FinishedRuns } from './finished.js';
import { emptyScan, recordsOf } from './results-stream.js';
import { openResultsSink } from './sink.js';
import { TimeLeft } from './time-left.js';
import type { Experiment } from './schema.js';

export interface ExperimentProgress {
  /** Runs finished in this session plus those skipped as already done. */
  done: number;
  total: number;
  skipped: number;
  /** Outcomes of the `done` runs, the skipped ones included (they are in the final table too). */
  outcomes: Record<Outcome, number>;
  elapsedMs: number;
  /** Estimated time left, ms (time-left.ts); absent until a run of this session finished. */
  etaMs?: number;
}

export interface RunExperimentOptions {
  experiment: Experiment;
  /** Results file (JSONL) to append to and resume from; omit to keep results in memory only. */
  out?: string;
  shard?: Shard;
  /** Games in flight at once per thread (default 1). LLM agents want many. */
  concurrency?: number;
  /**
   * Threads that play rule-based runs (default 1: this thread alone); from 2, this
   * thread plays beside `workers - 1` worker threads. Ignored with an agent factory,
   * whose agents cannot cross threads.
   */
  workers?: number;
  /**
   * With `workers`: runs per chunk a thread takes at a time (default 64), and
   * `workersOnly` to have the worker threads play every run (a check of their lines).
   */
  pool?: { chunk?: number; workersOnly?: boolean };
  signal?: AbortSignal;
  onProgress?: (progress: ExperimentProgress) => void;
  /**
   * Who plays: builds each run's agents and adds to its record (model-backed agents
   * from `openModelAgents`, docs/llm.md, or your own). Default: the cell's rule-based
   * policy and strategy. Runs with a factory play in this thread.
   */
  agents?: AgentFactory;
  /**
   * Keep every new record in the returned summary (default true). A long sweep that
   * writes to `out` should say false: holding millions of records costs memory and
   * garbage-collector time (and, with `workers`, the main thread rebuilds each record
   * from its line).
   */
  keepRecords?: boolean;
  /**
   * The caller holds `out`'s lock already (`lockFile(out, …)`, core/file-lock.ts): taken
   * before it opened anything else the sweep writes, such as a cassette being recorded,
   * so a second sweep is refused before it touches those. Default: the sweep takes it.
   */
  outLocked?: boolean;
  /**
   * Called with each new record, in `seq` order, as it is written. With `workers` the
   * main thread rebuilds each record from its line for this: a sweep that only counts
   * should take `onTally`.
   */
  onRecord?: (record: RunRecord) => void;
  /** Called with each new run's tally (run-tally.ts), in `seq` order, as it is written. */
  onTally?: (tally: RunTally) => void;
  /**
   * Called with the tally of every run of this plan the results file holds once the
   * sweep ends, in file order: the valid records already there (as the resume reads the
   * file), then each new run as it is written (without `out`: the new ones). A summary
   * tallied from these equals one read back from the file, without the second read.
   */
  onFileTally?: (tally: RunTally) => void;
  /**
   * Sign the results file (needs `out`): every line carries a hash-linked receipt and
   * a signed checkpoint sits beside the file (docs/results-format.md, "Signed results").
   */
  sign?: SignResultsOptions;
}

export interface ExperimentRunSummary {
  /** Records of the runs played in this call, in `seq` order (empty with `keepRecords: false`). */
  records: RunRecord[];
  /** Runs played in this call. */
  ran: number;
  planned: number;
  skipped: number;
  /** True when the signal stopped the sweep before every run finished. */
  aborted: boolean;
  /** Bytes of a torn last line cut from the results file before appending. */
  repairedBytes: number;
  /**
   * A signed resume: the lines the killed sweep wrote after its last checkpoint, which
   * it cut and played again (kept, forged, re-run; past-checkpoint.ts). Absent when
   * there were none.
   */
  pastCheckpoint?: PastCheckpointReport;
  /** Whether a record is a run of this plan (of this shard): its id is the plan's at its seq. No need to plan again. */
  inPlan(record: { id: string; seq: number }): boolean;
}

export async function runExperiment(options: RunExperimentOptions): Promise<ExperimentRunSummary> {
  const { experiment } = options;
  // Lazy: the runs are computed from their seq, so a sweep holds its cells and the runs in flight, not every run.
  const plan = lazyPlan(experiment, options.shard);
  if (options.sign && !options.out)
    throw new WitnessError('USAGE', 'Signing needs a results file: give `out` (--out FILE).');
  // One writer per file: two sweeps appending to one file would each play and write every run.
  const lock = options.out && !options.outLocked ? lockFile(options.out, 'results file') : undefined;
  try {
    return await _run(options, plan);
  } finally {
    lock?.release();
  }
}

async function _run(options: RunExperimentOptions, plan: Plan): Promise<ExperimentRunSummary> {
  const { experiment } = options;
  const opened = options.out
    ? openResultsSink(options.out, {
        experiment,
        shard: options.shard,
        plan,
        sign: options.sign,
        provenance: options.agents?.provenance,
        onExisting: options.onFileTally && ((record) => options.onFileTally!(tallyOfRecord(record))),
      })
    : undefined;
  const sink = opened?.sink;
  if (opened) _refuseMixing(options.out!, opened.finished, experiment, plan.end, () => sink!.close());
  // Walked as the runs start: a fresh sweep holds the runs in flight, not every run left.
  const todo = runQueue(plan, opened?.finished);
  const progress = _progressTracker(
    plan.length,
    plan.length - todo.length,
    options.onProgress,
    opened?.finished.outcomes,
    options.onProgress && new TimeLeft(plan, opened?.finished),
  );
  const records: RunRecord[] = [];
  const keep = options.keepRecords ?? true;
  const wantsRecords = keep || options.onRecord !== undefined;
  const wantsTally = options.onTally !== undefined || options.onFileTally !== undefined;
  let ran = 0;
  const handOn = (record: RunRecord | undefined, tally: RunTally | undefined, outcome: Outcome, agents: number) => {
    if (record && keep) records.push(record);
    ran++;
    if (record) options.onRecord?.(record);
    if (tally) {
      options.onTally?.(tally);
      options.onFileTally?.(tally);
    }
    progress.add(outcome, agents);
  };
  try {
    const aborted = await _play(todo, options, {
      record(record) {
        sink?.write(record);
        handOn(
          record,
          wantsTally ? tallyOfRecord(record) : undefined,
          record.outcome,
          record.honest + record.byzantine,
        );
      },
      chunk(played) {
        sink?.writeChunk(played);
        for (let k = 0; k < played.runs.length; k++) {
          const tally = played.tally(k);
          const record = wantsRecords ? (JSON.parse(played.line(k)) as RunRecord) : undefined;
          handOn(record, tally, tally.outcome, tally.honest + tally.byzantine);
        }
      },
    });
    const inPlan = (record: { id: string; seq: number }) => plan.at(record.seq)?.id === record.id;
    const past = sink?.pastCheckpoint?.();
    return {
      records,
      ran,
      planned: plan.length,
      skipped: plan.length - todo.length,
      aborted,
      repairedBytes: sink?.repairedBytes ?? 0,
      inPlan,
      ...(past && past.lines > 0 ? { pastCheckpoint: past } : {}),
    };
  } finally {
    sink?.close();
  }
}

/**
 * A results file holds one experiment: lines of another (or of this one with fewer
 * runs, or seeded by an older version) are refused, never appended to, with or without
 * --out. Another shard's runs are this experiment's: a file may hold every shard.
 */
function _refuseMixing(
  path: string,
  finished: FinishedRuns,
  experiment: Experiment,
  end: number,
  close: () => void,
): void {
  const refuse = (message: string) => {
    close();
    throw new WitnessError('USAGE', message);
  };
  if (finished.foreign > 0) {
    refuse(
      `${path} holds ${finished.foreign} runs of another experiment (a different grid, --seed or budget than this one, or a file written by a version of witness that ordered runs by cell); a results file holds one experiment: write this one elsewhere with --out FILE (or remove the old file).`,
    );
  }
  if (finished.staleSeed > 0) {
    refuse(
      `${path} holds ${finished.staleSeed} runs of this experiment played with other seeds (written by a version of witness before paired cells shared their games, or with another \`paired\` list); mixing them with new runs would compare different games: write this sweep elsewhere with --out FILE.`,
    );
  }
  if (finished.beyond > 0) {
    const cells = end / experiment.runs;
    const runs = Math.floor(finished.lastBeyond / cells) + 1;
    refuse(
      `${path} holds runs of this experiment up to --runs ${runs}, more than the --runs ${experiment.runs} asked for; lowering --runs on an existing file is refused (its table would hide runs the file holds): give --runs ${runs} or more, or write elsewhere with --out FILE.`,
    );
  }
}

/** Where played runs go, in `seq` order: records played in this thread, chunks from workers. */
interface _Emit {
  record(record: RunRecord): void;
  chunk(played: PlayedChunk): void;
}

/** Plays runs and hands them to `emit` in `seq` order; true when stopped early. */
async function _play(todo: RunQueue, options: RunExperimentOptions, emit: _Emit): Promise<boolean> {
  let written = 0;
  if ((options.workers ?? 1) > 1 && !options.agents) {
    const lines = options.out !== undefined || (options.keepRecords ?? true) || options.onRecord !== undefined;
    const pool = { ...options.pool, threads: options.workers!, shard: options.shard, signal: options.signal, lines };
    await playInPool(todo, options.experiment, pool, (played) => {
      emit.chunk(played);
      written += played.runs.length;
    });
    return written < todo.length;
  }
  const done = new Map<number, RunRecord>();
  const onRecord = (position: number, record: RunRecord) => {
    done.set(position, record);
    while (done.has(written)) {
      emit.record(done.get(written)!);
      done.delete(written++);
    }
  };
  await _playHere(todo, options, onRecord, () => written);
  return written < todo.length;
}

/**
 * Plays runs in this thread with up to `concurrency` in flight. A run starts only
 * within 2 × `concurrency` of the first unwritten one: one slow game then does not
 * starve the others (LLM games differ in length), and finished runs waiting for an
 * earlier one stay few — a kill loses at most those and the runs in flight.
 */
async function _playHere(
  todo: RunQueue,
  options: RunExperimentOptions,
  onRecord: (position: number, record: RunRecord) => void,
  written: () => number,
): Promise<void> {
  const window = Math.max(1, options.concurrency ?? 1);
  let next = 0;
  let failure: unknown;
  let lastYield = Date.now();
  const lane = async () => {
    while (next < todo.length && next < written() + 2 * window && failure === undefined && !options.signal?.aborted) {
      // A rule-based game resolves only microtasks, so without this the loop never lets
      // the event loop run a SIGINT handler (or a timer): yield every 20 ms of play.
      if (Date.now() - lastYield >= YIELD_EVERY_MS) {
        await yieldToEventLoop();
        lastYield = Date.now();
        // Other lanes ran meanwhile: they may have taken the last runs, or the signal come.
        continue;
      }
      const position = next++;
      // Taken with its position, in the same synchronous step: positions follow plan order.
      const run = todo.take() as PlannedRun; // one of `length`: the loop's condition
      try {
        onRecord(position, await playRun(run, options.experiment, options.agents));
      } catch (error) {
        // A run cut short by the signal (its LLM requests cancelled) is not a failure: it replays on resume.
        if (!options.signal?.aborted) failure ??= error;
      }
    }
  };
  while (next < todo.length && failure === undefined && !options.signal?.aborted) {
    await Promise.all(Array.from({ length: Math.min(window, todo.length - next) }, lane));
  }
  if (failure !== undefined) throw failure;
}

/** The longest stretch, in ms, a sweep plays without letting signals and timers run. */
export const YIELD_EVERY_MS = 20;

/** `already`: the outcomes of the runs skipped as done, so the tally counts what the final table shows. */
function _progressTracker(
  total: number,
  skipped: number,
  onProgress: RunExperimentOptions['onProgress'],
  already?: Record<Outcome, number>,
  left?: TimeLeft,
) {
  const started = Date.now();
  const outcomes: Record<Outcome, number> = { valid: 0, invalid: 0, none: 0, timeout: 0, escalated: 0, ...already };
  let done = skipped;
  const emit = () => {
    const etaMs = left?.estimateMs();
    onProgress?.({
      done,
      total,
      skipped,
      outcomes: { ...outcomes },
      elapsedMs: Date.now() - started,
      ...(etaMs !== undefined ? { etaMs } : {}),
    });
  };
  emit();
  return {
    add(outcome: Outcome, agents: number) {
      outcomes[outcome]++;
      done++;
      left?.played(agents);
      emit();
    },
  };
}

/**
 * Reads a results file into memory: valid records, and problems with line numbers for
 * the rest (the first 100). Prefer `recordsOf` (results-stream.ts) where an iterable
 * will do: this holds every record.
 */
export function readResults(path: string): {
  records: RunRecord[];
  problems: { line: number; message: string }[];
  tornTail: boolean;
} {
  const scan = emptyScan();
  const records = [...recordsOf(path, scan)];
  return { records, problems: scan.problems, tornTail: scan.tornTail };
}
