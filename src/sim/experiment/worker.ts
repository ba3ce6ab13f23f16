/**
 * @module
 * A worker thread of a parallel rule-based sweep: it receives chunks of planned runs,
 * plays them with `playRun`, and sends the records back. Only the default agents
 * (rule-based) run here; agent factories cannot cross threads.
 */
import { parentPort } from 'node:worker_threads';
import type { PlannedRun } from './plan.js';
import { playRun } from './play.js';
import type { Experiment } from './schema.js';

export interface ChunkRequest {
  id: number;
  experiment: Experiment;
  runs: PlannedRun[];
}

parentPort?.on('message', async (request: ChunkRequest) => {
  try {
    const records = [];
    for (const run of request.runs) records.push(await playRun(run, request.experiment));
    parentPort?.postMessage({ id: request.id, records });
  } catch (error) {
    parentPort?.postMessage({ id: request.id, error: (error as Error)?.stack ?? String(error) });
  }
});
