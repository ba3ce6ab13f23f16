/**
 * @module
 * A worker thread of a parallel rule-based sweep (pool.ts). It gets the experiment once,
 * when it starts, builds the plan itself and says it is ready; each request names the
 * runs of a chunk by `seq`, with their ids and seeds (the main thread hashed them
 * already). It plays them (chunk.ts) and moves the chunk's lines and tallies back.
 * Only the default agents (rule-based) run here; agent factories cannot cross threads.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { WitnessError, type WitnessErrorCode } from '../../core/errors.js';
import { buffersOf, type ChunkData, playChunk } from './chunk.js';
import { lazyPlan, type PlannedRun, type Shard } from './plan.js';
import type { Experiment } from './schema.js';

/** What a worker is started with (`workerData`). */
export interface WorkerSetup {
  experiment: Experiment;
  shard: Shard | undefined;
  /** Send each run's results line: false when the sweep writes no file and keeps no record. */
  lines: boolean;
}

/** A chunk of runs to play: run k is at `seqs[k]`, with the id and seed the main thread's plan gave it. */
export interface ChunkRequest {
  id: number;
  seqs: number[];
  ids: string[];
  seeds: number[];
}

/**
 * A played chunk (its data moved, not copied), or why it could not be played: a
 * WitnessError's code, message and data, so the sweep fails as in one thread, or
 * another error's stack (a bug).
 */
export type ChunkReply =
  | { id: number; error?: undefined; data: ChunkData }
  | { id: number; error: string; code?: WitnessErrorCode; data?: Record<string, unknown> };

if (parentPort) {
  const port = parentPort;
  const { experiment, shard, lines } = workerData as WorkerSetup;
  const plan = lazyPlan(experiment, shard);
  // Chunks come once this is loaded: until then the main thread plays them itself.
  port.postMessage({ ready: true });
  port.on('message', async ({ id, seqs, ids, seeds }: ChunkRequest) => {
    try {
      const runs = seqs.map((seq, k) => plan.at(seq, { id: ids[k]!, seed: seeds[k]! }) as PlannedRun);
      const data = await playChunk(runs, experiment, lines);
      port.postMessage({ id, data } satisfies ChunkReply, buffersOf(data));
    } catch (error) {
      const reply: ChunkReply =
        error instanceof WitnessError
          ? { id, error: error.message, code: error.code, ...(error.data ? { data: error.data } : {}) }
          : { id, error: (error as Error)?.stack ?? String(error) };
      port.postMessage(reply);
    }
  });
}
