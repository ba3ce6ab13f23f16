/**
 * @module
 * Playing rule-based runs on several cores: worker threads take chunks of consecutive
 * runs, in plan order, and send back each run's tally and, when the sweep writes or
 * keeps them, its results line (worker.ts).
 * Chunks are handed on in plan order, so the lines waiting for an earlier chunk (the
 * most a kill can lose) are the chunks in flight. Each worker holds two chunks, so it
 * starts the next as soon as it sends one back instead of waiting for the main thread
 * to answer: with one, workers stood idle a quarter of the time.
 */
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { WitnessError } from '../../core/errors.js';
import type { PlannedRun, RunQueue, Shard } from './plan.js';
import { decodeTally, type RunTally } from './run-tally.js';
import type { Experiment } from './schema.js';
import type { ChunkReply, ChunkRequest, WorkerSetup } from './worker.js';

export interface PoolOptions {
  workers: number;
  shard?: Shard;
  /** Have the workers send each run's results line (see `PlayedChunk`). */
  lines: boolean;
  /** Runs per chunk (default 64). */
  chunk?: number;
  signal?: AbortSignal;
}

/** Chunks each worker holds at once: one it plays, one waiting. */
const IN_FLIGHT = 2;

/** Consecutive runs played by a worker, handed on in plan order. */
export class PlayedChunk {
  constructor(
    readonly runs: readonly PlannedRun[],
    private readonly reply: ChunkReply,
  ) {}

  /** Every run's line, UTF-8, each ending with its newline; undefined unless the pool was asked for lines. */
  get bytes(): Uint8Array | undefined {
    return this.reply.bytes;
  }

  /** Run k's results line, without its newline (the pool was asked for lines). */
  line(k: number): string {
    const { bytes, ends } = this.reply;
    return Buffer.from(bytes!.buffer, bytes!.byteOffset, bytes!.length).toString(
      'utf8',
      k > 0 ? ends![k - 1] : 0,
      ends![k]! - 1,
    );
  }

  tally(k: number): RunTally {
    return decodeTally(this.runs[k]!, this.reply.tallies!, k);
  }
}

/**
 * Plays the runs of `todo` on worker threads; `onChunk` gets the played chunks in plan
 * order. Resolves when every run was handed on, or at once when the signal aborts (the
 * runs in flight replay on resume).
 */
export async function playInWorkers(
  todo: RunQueue,
  experiment: Experiment,
  options: PoolOptions,
  onChunk: (chunk: PlayedChunk) => void,
): Promise<void> {
  const chunk = Math.max(1, options.chunk ?? 64);
  const count = Math.min(options.workers, Math.ceil(todo.length / chunk));
  const setup: WorkerSetup = { experiment, shard: options.shard, lines: options.lines };
  const threads = Array.from({ length: count }, () => _spawn(setup));
  try {
    await _drive(threads, todo, chunk, options.signal, onChunk);
  } finally {
    await Promise.all(threads.map((t) => t.terminate()));
  }
}

interface _Sent {
  runs: PlannedRun[];
  reply?: ChunkReply;
}

/** Keeps every worker busy and hands the chunks on in the order they were sent. */
function _drive(
  threads: Worker[],
  todo: RunQueue,
  chunk: number,
  signal: AbortSignal | undefined,
  onChunk: (chunk: PlayedChunk) => void,
): Promise<void> {
  return new Promise((resolve, reject) => {
    // Chunks sent and not yet handed on, by id; ids are consecutive in plan order.
    const sent = new Map<number, _Sent>();
    let nextId = 0;
    let nextOut = 0;
    let settled = false;
    const finish = (error?: unknown) => {
      if (settled) return;
      settled = true;
      signal?.removeEventListener('abort', onAbort);
      for (const t of threads) t.removeAllListeners('message').removeAllListeners('error');
      if (error === undefined) resolve();
      else reject(error);
    };
    const onAbort = () => finish();
    const send = (worker: Worker) => {
      const runs = _take(todo, chunk);
      if (runs.length === 0) return;
      const request: ChunkRequest = { id: nextId++, seqs: runs.map((r) => r.seq) };
      sent.set(request.id, { runs });
      worker.postMessage(request);
    };
    const handOn = () => {
      for (let next = sent.get(nextOut); next?.reply; next = sent.get(nextOut)) {
        sent.delete(nextOut++);
        onChunk(new PlayedChunk(next.runs, next.reply));
      }
    };
    for (const worker of threads) {
      worker.on('message', (reply: ChunkReply) => {
        if (settled) return;
        if (reply.error !== undefined)
          return finish(new WitnessError('INTERNAL', `A simulation worker failed: ${reply.error}`));
        const entry = sent.get(reply.id);
        if (!entry)
          return finish(new WitnessError('INTERNAL', `A simulation worker answered chunk ${reply.id}, never sent.`));
        entry.reply = reply;
        try {
          send(worker);
          handOn();
        } catch (error) {
          return finish(error);
        }
        if (sent.size === 0) finish();
      });
      worker.on('error', (error) => finish(error));
      worker.on('exit', (code) =>
        finish(new WitnessError('INTERNAL', `A simulation worker stopped (exit code ${code}) with runs left to play.`)),
      );
    }
    if (signal?.aborted) return finish();
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      for (let k = 0; k < IN_FLIGHT; k++) for (const worker of threads) send(worker);
    } catch (error) {
      return finish(error);
    }
    if (sent.size === 0) finish();
  });
}

function _take(todo: RunQueue, n: number): PlannedRun[] {
  const runs: PlannedRun[] = [];
  while (runs.length < n) {
    const run = todo.take();
    if (!run) break;
    runs.push(run);
  }
  return runs;
}

function _spawn(setup: WorkerSetup): Worker {
  if (!import.meta.url.endsWith('.ts'))
    return new Worker(new URL('./worker.js', import.meta.url), { workerData: setup });
  // Running from source (tests, tsx): register tsx's loader in the worker, then load the .ts file.
  const entry = new URL('./worker.ts', import.meta.url).href;
  const tsxPackage = createRequire(import.meta.url).resolve('tsx/package.json');
  const api = pathToFileURL(join(dirname(tsxPackage), 'dist/esm/api/index.mjs')).href;
  const code = `import(${JSON.stringify(api)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(entry)}); });`;
  return new Worker(code, { eval: true, workerData: setup });
}
