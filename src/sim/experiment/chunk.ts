/**
 * @module
 * A chunk of a parallel rule-based sweep (pool.ts): consecutive runs played by one
 * thread, a worker or the main one, kept as what the sweep writes and counts rather
 * than as records — each run's results line (the `JSON.stringify` the file holds),
 * UTF-8 in one buffer, and its tally (run-tally.ts), six numbers. A worker's buffers
 * move to the main thread without a copy, and rebuilding records there would cost
 * about a third of playing the games. The main thread's own chunks take the same form:
 * while they wait for a worker's earlier chunk, bytes outside the JavaScript heap cost
 * the garbage collector nothing, where waiting records made each collection copy them
 * (main-thread scavenges went from under 1 ms to 5–7 ms).
 */
import type { PlannedRun } from './plan.js';
import { playRun } from './play.js';
import { decodeTally, encodeTally, type RunTally, TALLY_WIDTH } from './run-tally.js';
import type { Experiment } from './schema.js';

/**
 * A played chunk's data. Run k's tally is `TALLY_WIDTH` numbers from k × `TALLY_WIDTH`
 * of `tallies`; its line (when lines were asked for) is `bytes` from `ends[k - 1]` (0
 * for the first) to `ends[k]`, UTF-8 with its newline.
 */
export interface ChunkData {
  tallies: Float64Array;
  bytes?: Uint8Array;
  ends?: Uint32Array;
}

/** Plays `runs` in this thread; `lines`: encode each run's results line too. */
export async function playChunk(
  runs: readonly PlannedRun[],
  experiment: Experiment,
  lines: boolean,
): Promise<ChunkData> {
  const tallies = new Float64Array(runs.length * TALLY_WIDTH);
  const out = lines ? new _Lines(runs.length) : undefined;
  for (let k = 0; k < runs.length; k++) {
    const record = await playRun(runs[k]!, experiment);
    encodeTally(record, tallies, k);
    out?.add(JSON.stringify(record), k);
  }
  return { tallies, ...(out ? { bytes: out.bytes(), ends: out.ends } : {}) };
}

/** The memory a chunk's arrays hold, to move to another thread instead of copying. */
export function buffersOf(data: ChunkData): ArrayBuffer[] {
  return [data.tallies.buffer, data.ends?.buffer, data.bytes?.buffer].filter((b) => b !== undefined) as ArrayBuffer[];
}

/** Consecutive runs played by one thread, handed on in plan order. */
export class PlayedChunk {
  constructor(
    readonly runs: readonly PlannedRun[],
    private readonly data: ChunkData,
  ) {}

  /** Every run's line, UTF-8, each ending with its newline; undefined unless lines were asked for. */
  get bytes(): Uint8Array | undefined {
    return this.data.bytes;
  }

  /** Run k's results line, without its newline (lines were asked for). */
  line(k: number): string {
    const { bytes, ends } = this.data;
    const text = Buffer.from(bytes!.buffer, bytes!.byteOffset, bytes!.length);
    return text.toString('utf8', k > 0 ? ends![k - 1] : 0, ends![k]! - 1);
  }

  tally(k: number): RunTally {
    return decodeTally(this.runs[k]!, this.data.tallies, k);
  }
}

/** A chunk's lines encoded into one buffer of its own (not Buffer's shared pool: it may move to another thread). */
class _Lines {
  readonly ends: Uint32Array;
  // 64 lines of 2 KiB: a chunk of games of up to 16 agents fits without growing.
  #bytes = Buffer.allocUnsafeSlow(128 * 1024);
  #at = 0;
  constructor(count: number) {
    this.ends = new Uint32Array(count);
  }

  add(line: string, k: number): void {
    // UTF-8 takes at most 3 bytes per UTF-16 code unit: a write never cuts a line short.
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

  bytes(): Uint8Array {
    return this.#bytes.subarray(0, this.#at);
  }
}
