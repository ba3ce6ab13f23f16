/**
 * @module
 * Playing rule-based runs on several cores: worker threads take chunks of consecutive
 * runs, in plan order, and hand back their records. Chunks are small, so the records
 * waiting for an earlier chunk (the most a kill can lose) stay few.
 */
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { WitnessError } from '../../core/errors.js';
import type { PlannedRun, RunQueue } from './plan.js';
import type { RunRecord } from './record.js';
import type { Experiment } from './schema.js';
import type { ChunkRequest } from './worker.js';

export interface PoolOptions {
  workers: number;
  /** Runs per chunk (default 64). */
  chunk?: number;
  signal?: AbortSignal;
}

/** Plays the runs of `todo` on worker threads; `onRecord` gets each record with its position in `todo`. */
export async function playInWorkers(
  todo: RunQueue,
  experiment: Experiment,
  options: PoolOptions,
  onRecord: (position: number, record: RunRecord) => void,
): Promise<void> {
  const chunk = Math.max(1, options.chunk ?? 64);
  const threads = Array.from({ length: Math.min(options.workers, Math.ceil(todo.length / chunk)) }, _spawn);
  let next = 0;
  let failure: unknown;
  const drive = async (worker: Worker) => {
    while (next < todo.length && failure === undefined && !options.signal?.aborted) {
      const start = next;
      // Taken from the queue as a chunk is sent: only the chunks in flight are held.
      const runs = _take(todo, chunk);
      next += runs.length;
      if (runs.length === 0) return;
      try {
        const records = await _request(worker, { id: start, experiment, runs }, options.signal);
        if (records === null) return;
        for (let i = 0; i < records.length; i++) onRecord(start + i, records[i]!);
      } catch (error) {
        failure ??= error;
      }
    }
  };
  try {
    await Promise.all(threads.map(drive));
  } finally {
    await Promise.all(threads.map((t) => t.terminate()));
  }
  if (failure !== undefined) throw failure;
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

function _spawn(): Worker {
  if (!import.meta.url.endsWith('.ts')) return new Worker(new URL('./worker.js', import.meta.url));
  // Running from source (tests, tsx): register tsx's loader in the worker, then load the .ts file.
  const entry = new URL('./worker.ts', import.meta.url).href;
  const tsxPackage = createRequire(import.meta.url).resolve('tsx/package.json');
  const api = pathToFileURL(join(dirname(tsxPackage), 'dist/esm/api/index.mjs')).href;
  const code = `import(${JSON.stringify(api)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(entry)}); });`;
  return new Worker(code, { eval: true });
}

/**
 * One chunk's records, or null once the signal aborts: the sweep stops waiting for
 * chunks in flight (their runs replay on resume) and the threads are terminated, so
 * SIGINT ends a sweep at once, not after a chunk. Not a race with one promise that
 * settles on abort: each race left a reaction on it holding the chunk's records until
 * the sweep ended — 3 KB a run, out of memory after 1.5 million runs.
 */
function _request(worker: Worker, request: ChunkRequest, signal?: AbortSignal): Promise<RunRecord[] | null> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return resolve(null);
    const onAbort = () => {
      cleanup();
      resolve(null);
    };
    const onMessage = (reply: { id: number; records?: RunRecord[]; error?: string }) => {
      if (reply.id !== request.id) return;
      cleanup();
      if (reply.error !== undefined) reject(new WitnessError('INTERNAL', `A simulation worker failed: ${reply.error}`));
      else resolve(reply.records ?? []);
    };
    const onError = (error: Error) => {
      cleanup();
      reject(error);
    };
    const cleanup = () => {
      worker.off('message', onMessage);
      worker.off('error', onError);
      signal?.removeEventListener('abort', onAbort);
    };
    worker.on('message', onMessage);
    worker.on('error', onError);
    signal?.addEventListener('abort', onAbort, { once: true });
    worker.postMessage(request);
  });
}
