/**
 * @module
 * A worker thread of a parallel rule-based sweep (pool.ts). It gets the experiment once,
 * when it starts, builds the plan itself and says it is ready; each request names the
 * runs of a chunk by `seq`, with their ids and seeds (the main thread hashed them
 * already).
 * It plays them with `playRun` and sends back what the main thread writes and counts,
 * not the records: each run's results line (the `JSON.stringify` the file would hold)
 * and its tally (run-tally.ts). Rebuilding a record on the main thread costs about a
 * third of playing its game, and that thread is shared by every worker.
 * Only the default agents (rule-based) run here; agent factories cannot cross threads.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { lazyPlan, type PlannedRun, type Shard } from './plan.js';
import { playRun } from './play.js';
import { encodeTally, TALLY_WIDTH } from './run-tally.js';
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
 * A played chunk. Run k's tally is `TALLY_WIDTH` numbers from k × `TALLY_WIDTH` of
 * `tallies`; its line (with `lines`) is `bytes` from `ends[k - 1]` (0 for the first) to
 * `ends[k]`, UTF-8 with its newline. The arrays' memory is moved to the main thread, not
 * copied.
 */
export interface ChunkReply {
  id: number;
  tallies?: Float64Array;
  bytes?: Uint8Array;
  ends?: Uint32Array;
  error?: string;
}

if (parentPort) {
  const port = parentPort;
  const { experiment, shard, lines } = workerData as WorkerSetup;
  const plan = lazyPlan(experiment, shard);
  // Chunks come once this is loaded: until then the main thread plays them itself.
  port.postMessage({ ready: true });
  port.on('message', async ({ id, seqs, ids, seeds }: ChunkRequest) => {
    try {
      const tallies = new Float64Array(seqs.length * TALLY_WIDTH);
      const out = lines ? new _Lines(seqs.length) : undefined;
      for (let k = 0; k < seqs.length; k++) {
        const run = plan.at(seqs[k]!, { id: ids[k]!, seed: seeds[k]! }) as PlannedRun;
        const record = await playRun(run, experiment);
        encodeTally(record, tallies, k);
        out?.add(JSON.stringify(record), k);
      }
      const reply: ChunkReply = { id, tallies, ...(out ? { bytes: out.bytes(), ends: out.ends } : {}) };
      const moved = [tallies.buffer, ...(out ? [out.ends.buffer, out.buffer] : [])] as ArrayBuffer[];
      port.postMessage(reply, moved);
    } catch (error) {
      port.postMessage({ id, error: (error as Error)?.stack ?? String(error) } satisfies ChunkReply);
    }
  });
}

/** A chunk's lines encoded into one buffer of its own (not Buffer's shared pool: it is moved to another thread). */
class _Lines {
  readonly ends: Uint32Array;
  #bytes = Buffer.allocUnsafeSlow(64 * 1024);
  #at = 0;
  constructor(count: number) {
    this.ends = new Uint32Array(count);
  }

  add(line: string, k: number): void {
    // UTF-8 takes at most 3 bytes per UTF-16 code unit; a write never cuts a line short.
    const need = this.#at + 3 * line.length + 1;
    if (need > this.#bytes.length) {
      const bigger = Buffer.allocUnsafeSlow(2 * need);
      this.#bytes.copy(bigger, 0, 0, this.#at);
      this.#bytes = bigger;
    }
    this.#at += this.#bytes.write(line, this.#at, 'utf8');
    this.#bytes[this.#at++] = 0x0a;
    this.ends[k] = this.#at;
  }

  get buffer(): ArrayBuffer {
    return this.#bytes.buffer as ArrayBuffer;
  }

  bytes(): Uint8Array {
    return this.#bytes.subarray(0, this.#at);
  }
}
