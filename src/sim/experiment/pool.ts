/**
 * @module
 * Playing rule-based runs on several cores. `threads` threads play: this one and
 * `threads - 1` worker threads (worker.ts), each taking chunks of consecutive runs
 * in plan order and playing it into lines and tallies (chunk.ts); this thread answers
 * the workers between two chunks of its own. Chunks are handed on in plan order.
 *
 * Why this thread plays too: on two cores, two workers and a main thread that only
 * writes are three busy threads, and a worker (its start-up, its own JIT warm-up,
 * the hand-over of every run) costs more CPU than a run played here. A worker gets
 * chunks only once it has loaded, so this thread never waits for one to start, and
 * holds up to `IN_FLIGHT` of them, so it never waits for this thread to finish a chunk.
 */
import type { Worker } from 'node:worker_threads';
import { WitnessError } from '../../core/errors.js';
import { startModuleWorker } from '../../core/module-worker.js';
import { PlayedChunk, playChunk } from './chunk.js';
import type { PlannedRun, RunQueue, Shard } from './plan.js';
import type { Experiment } from './schema.js';
import type { ChunkReply, ChunkRequest, WorkerSetup } from './worker.js';

export interface PoolOptions {
  /** Threads that play, this one included (2 or more). */
  threads: number;
  shard?: Shard;
  /** Keep each run's results line (chunk.ts), not only its tally. */
  lines: boolean;
  /** Runs per chunk (default 64). */
  chunk?: number;
  /** Only the workers play (default false): this thread hands their chunks on. */
  workersOnly?: boolean;
  signal?: AbortSignal;
}

/** Chunks a worker holds at once: one it plays, the others waiting, so it never waits for this thread. */
const IN_FLIGHT = 3;

/**
 * Plays the runs of `todo` here and on worker threads; `onChunk` gets the played
 * chunks in plan order. Resolves when every run was handed on, or once the signal
 * aborts (the runs in flight replay on resume).
 */
export async function playInPool(
  todo: RunQueue,
  experiment: Experiment,
  options: PoolOptions,
  onChunk: (chunk: PlayedChunk) => void,
): Promise<void> {
  const chunk = Math.max(1, options.chunk ?? 64);
  // A sweep this thread plays in about one chunk per thread is over before a worker has loaded.
  const count = options.workersOnly || todo.length > chunk * options.threads ? options.threads - 1 : 0;
  const setup: WorkerSetup = { experiment, shard: options.shard, lines: options.lines };
  const workers = Array.from({ length: count }, () => _spawn(setup));
  try {
    const here = !options.workersOnly;
    await new _Pool(workers, todo, { chunk, here, lines: options.lines }, experiment, options.signal, onChunk).run();
  } finally {
    await Promise.all(workers.map((w) => w.terminate()));
  }
}

interface _Sent {
  runs: PlannedRun[];
  played?: PlayedChunk;
}

class _Pool {
  /** Chunks taken and not yet handed on, by id; ids are consecutive in plan order. */
  readonly #sent = new Map<number, _Sent>();
  #nextId = 0;
  #nextOut = 0;
  /** Every run was taken. */
  #drained = false;
  #failure: unknown;
  #wake: (() => void) | undefined;

  constructor(
    private readonly workers: Worker[],
    private readonly todo: RunQueue,
    private readonly how: { chunk: number; here: boolean; lines: boolean },
    private readonly experiment: Experiment,
    private readonly signal: AbortSignal | undefined,
    private readonly onChunk: (chunk: PlayedChunk) => void,
  ) {}

  async run(): Promise<void> {
    const onAbort = () => this.#wakeUp();
    this.signal?.addEventListener('abort', onAbort, { once: true });
    for (const worker of this.workers) this.#listen(worker);
    // Past this many chunks waiting for an earlier one, this thread waits instead of
    // playing more: what a kill can lose stays a few chunks per thread.
    const backlog = (IN_FLIGHT + 1) * (this.workers.length + 1);
    try {
      while (this.#going()) {
        if (this.#sent.size >= backlog) {
          await this.#event();
          continue;
        }
        const id = this.how.here ? this.#take() : undefined;
        if (id === undefined) {
          if (this.#drained && this.#sent.size === 0) break;
          await this.#event();
          continue;
        }
        const entry = this.#sent.get(id)!;
        entry.played = new PlayedChunk(entry.runs, await playChunk(entry.runs, this.experiment, this.how.lines));
        this.#handOn();
        // Lets the workers' replies (and a SIGINT handler) in between two chunks of this thread.
        await yieldToEventLoop();
      }
    } catch (error) {
      this.#failure ??= error;
    } finally {
      this.signal?.removeEventListener('abort', onAbort);
      for (const worker of this.workers)
        worker.removeAllListeners('message').removeAllListeners('error').removeAllListeners('exit');
    }
    if (this.#failure !== undefined) throw this.#failure;
  }

  #going(): boolean {
    return this.#failure === undefined && !this.signal?.aborted;
  }

  /** Takes the next chunk of runs; its id, or undefined when no run is left. */
  #take(): number | undefined {
    const runs: PlannedRun[] = [];
    while (runs.length < this.how.chunk) {
      const run = this.todo.take();
      if (!run) break;
      runs.push(run);
    }
    if (runs.length === 0) {
      this.#drained = true;
      return undefined;
    }
    const id = this.#nextId++;
    this.#sent.set(id, { runs });
    return id;
  }

  #send(worker: Worker): void {
    const id = this.#take();
    if (id === undefined) return;
    const { runs } = this.#sent.get(id)!;
    const request: ChunkRequest = {
      id,
      seqs: runs.map((r) => r.seq),
      ids: runs.map((r) => r.id),
      seeds: runs.map((r) => r.seed),
    };
    worker.postMessage(request);
  }

  #listen(worker: Worker): void {
    worker.on('message', (reply: ChunkReply | { ready: true }) => {
      try {
        if (!this.#going()) return;
        if ('ready' in reply) {
          for (let k = 0; k < IN_FLIGHT; k++) this.#send(worker);
          return;
        }
        if (reply.error !== undefined) throw _failure(reply);
        const entry = this.#sent.get(reply.id);
        if (!entry) throw new WitnessError('INTERNAL', `A simulation worker answered chunk ${reply.id}, never sent.`);
        entry.played = new PlayedChunk(entry.runs, reply.data);
        this.#send(worker);
        this.#handOn();
      } catch (error) {
        this.#failure ??= error;
      } finally {
        this.#wakeUp();
      }
    });
    worker.on('error', (error) => {
      this.#failure ??= error;
      this.#wakeUp();
    });
    worker.on('exit', (code) => {
      this.#failure ??= new WitnessError(
        'INTERNAL',
        `A simulation worker stopped (exit code ${code}) before the sweep ended.`,
      );
      this.#wakeUp();
    });
  }

  /** Hands on every played chunk whose earlier chunks were handed on. */
  #handOn(): void {
    for (let next = this.#sent.get(this.#nextOut); next?.played; next = this.#sent.get(this.#nextOut)) {
      this.#sent.delete(this.#nextOut++);
      this.onChunk(next.played);
    }
  }

  /** Settles at the next reply, worker failure or abort. */
  #event(): Promise<void> {
    return new Promise((resolve) => {
      this.#wake = resolve;
    });
  }

  #wakeUp(): void {
    const wake = this.#wake;
    this.#wake = undefined;
    wake?.();
  }
}

/** What a worker's failed chunk throws here: its WitnessError again, or a bug with the worker's stack. */
function _failure(reply: Extract<ChunkReply, { error: string }>): WitnessError {
  if (reply.code === undefined) return new WitnessError('INTERNAL', `A simulation worker failed: ${reply.error}`);
  return new WitnessError(reply.code, reply.error, reply.data ? { data: reply.data } : {});
}

/** Lets pending I/O, messages, timers and signal handlers run (a macrotask turn, not a microtask). */
export function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

function _spawn(setup: WorkerSetup): Worker {
  return startModuleWorker(import.meta.url, './worker', setup);
}
