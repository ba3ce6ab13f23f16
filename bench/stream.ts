/**
 * Bench: what a chunk receipt costs per chunk (attest/stream), against hashing the
 * chunk's bytes alone, measured in the same run: the signer's side (`chunk()` — the
 * receipt, its digest, the tree, a checkpoint every 64 chunks — and `finish()`), the
 * client's recorder (one JSON line per chunk), and `verifyStream` of the recording
 * (reading the lines, the receipts, the chain from both ends, the tree, the checkpoints,
 * the final receipt). Rounds alternate the four so a loaded machine slows each alike;
 * each row is the median over rounds, the ratio the median of per-round ratios.
 *
 * Run: npx tsx bench/stream.ts [--chunks 20000] [--rounds 7]
 */
import { createStreamSigner, StreamRecorder, verifyStream } from '../src/attest/index.js';
import { addKey, emptyDirectory, KeyDirectory } from '../src/attest/key-directory.js';
import { newSigningKey, publicJwk } from '../src/attest/keys.js';
import { sha256Hex } from '../src/core/hash.js';
import { numberArg } from './support/alternating.js';

const CHUNKS = numberArg('--chunks', 20_000);
const ROUNDS = numberArg('--rounds', 7);
const key = newSigningKey('bench');
const day = 86_400_000;
const directory = new KeyDirectory(
  addKey(emptyDirectory(), publicJwk(key), { notBefore: Date.now() - day, notAfter: Date.now() + day }),
);
const stream = { session: 'ctx-bench', task: 'task-bench', artifact: 'answer' };

/** The recording of one honest stream, and the time its parts took (ms). */
async function once(pieces: Buffer[]): Promise<Record<string, number>> {
  const t0 = performance.now();
  let sink = 0;
  for (const p of pieces) sink += sha256Hex(p).length;
  const t1 = performance.now();
  const signer = createStreamSigner({
    key,
    instance: 'bench',
    stream,
    policy: 'chunk',
    checkpointEvery: { chunks: 64 },
  });
  const signed = pieces.map((p) => signer.chunk(p));
  const final = await signer.finish();
  const t2 = performance.now();
  const recorder = new StreamRecorder(stream);
  for (const [i, p] of pieces.entries()) recorder.chunk(p, signed[i]?.receipt, signed[i]?.checkpoint);
  recorder.final(final);
  const text = recorder.text();
  const t3 = performance.now();
  const result = await verifyStream(text, { directory });
  const t4 = performance.now();
  if (!result.ok || sink === 0) throw new Error(`the bench stream did not verify: ${JSON.stringify(result.problems)}`);
  return { hash: t1 - t0, sign: t2 - t1, record: t3 - t2, verify: t4 - t3 };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;

console.log(`chunks per stream: ${CHUNKS}; rounds: ${ROUNDS}; a checkpoint every 64 chunks; times per chunk`);
console.log('chunk bytes  side                  µs/chunk  × hashing the bytes alone (median [range])');
for (const size of [16, 1024]) {
  const pieces = Array.from({ length: CHUNKS }, (_, i) => Buffer.alloc(size, i % 251));
  await once(pieces.slice(0, 2000)); // warm-up
  const rounds: Record<string, number>[] = [];
  for (let r = 0; r < ROUNDS; r++) rounds.push(await once(pieces));
  const hash = median(rounds.map((r) => r.hash as number));
  console.log(
    `${String(size).padStart(11)}  hash the bytes alone   ${((hash * 1000) / CHUNKS).toFixed(2).padStart(7)}  1`,
  );
  for (const [side, label] of [
    ['sign', 'signer: chunk()+finish'],
    ['record', 'client: recorder'],
    ['verify', 'verifyStream'],
  ] as const) {
    const ratios = rounds.map((r) => (r[side] as number) / (r.hash as number));
    const us = (median(rounds.map((r) => r[side] as number)) * 1000) / CHUNKS;
    const range = `[${Math.min(...ratios).toFixed(1)}–${Math.max(...ratios).toFixed(1)}]`;
    console.log(
      `${' '.repeat(11)}  ${label.padEnd(22)} ${us.toFixed(2).padStart(7)}  ${median(ratios).toFixed(1)} ${range}`,
    );
  }
}
