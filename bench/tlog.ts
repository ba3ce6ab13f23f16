/**
 * Checking a 2M-line log against a checkpoint (attest/tlog/check.ts), streamed: the
 * ratio of its time to hashing the same lines alone (the leaf hashes a reader computes
 * anyway), and the heap growth while it runs, which stays O(log n) — the frontier keeps
 * one hash per perfect subtree, not one per line. Sync and async iteration both.
 *
 *   npx tsx bench/tlog.ts [--n 2000000]
 */
import { newSigningKey } from '../src/attest/keys.js';
import { checkLogAgainstCheckpoint } from '../src/attest/tlog/check.js';
import { checkpointFor, parseCheckpoint } from '../src/attest/tlog/checkpoint.js';
import { noteVerifierKey } from '../src/attest/tlog/note.js';
import { leafHash, MerkleFrontier } from '../src/core/tlog/merkle.js';

const i = process.argv.indexOf('--n');
const N = i > 0 ? Number(process.argv[i + 1]) : 2_000_000;
const line = (k: number) => Buffer.from(`{"seq":${k},"tool":"send_message","ok":true}\n`);

// The heap is sampled inside the stream (a synchronous check never lets a timer run).
let peak = 0;
function* hashes(): Generator<Buffer> {
  for (let k = 0; k < N; k++) {
    if (k % 50_000 === 0) peak = Math.max(peak, process.memoryUsage().heapUsed);
    yield leafHash(line(k));
  }
}
async function* hashesAsync(): AsyncGenerator<Buffer> {
  yield* hashes();
}

const frontier = new MerkleFrontier();
for (const h of hashes()) frontier.appendLeafHash(h);
const key = newSigningKey('bench');
const cp = parseCheckpoint(checkpointFor('bench.example/log', N, frontier.root(), key), [
  noteVerifierKey('bench.example/log', Buffer.from(key.publicKey, 'base64url')),
]);

function time<T>(f: () => T): [T, number] {
  const t = process.hrtime.bigint();
  const out = f();
  return [out, Number(process.hrtime.bigint() - t) / 1e6];
}
async function timeAsync<T>(f: () => Promise<T>): Promise<[T, number, number]> {
  const heap = process.memoryUsage().heapUsed;
  peak = heap;
  const t = process.hrtime.bigint();
  const out = await f();
  return [out, Number(process.hrtime.bigint() - t) / 1e6, peak - heap];
}

const [, base] = time(() => {
  let n = 0;
  for (const _ of hashes()) n++;
  return n;
});
const [sync, syncMs, syncHeap] = await timeAsync(() => checkLogAgainstCheckpoint(hashes(), cp));
const [async_, asyncMs, asyncHeap] = await timeAsync(() => checkLogAgainstCheckpoint(hashesAsync(), cp));
if (!sync.ok || !async_.ok) throw new Error('the bench log did not verify');
const mb = (b: number) => `${(b / 1e6).toFixed(1)} MB`;
console.log(`lines: ${N}; hashing alone ${base.toFixed(0)} ms`);
console.log(
  `check (sync iterable):  ${syncMs.toFixed(0)} ms, ratio ${(syncMs / base).toFixed(2)}, heap growth ≤ ${mb(syncHeap)} (garbage included)`,
);
console.log(
  `check (async iterable): ${asyncMs.toFixed(0)} ms, ratio ${(asyncMs / base).toFixed(2)}, heap growth ≤ ${mb(asyncHeap)} (garbage included)`,
);
