/**
 * Bench: what a chunk receipt costs per chunk (attest/stream), against hashing the
 * chunk's bytes alone, measured in the same run (and beside signing every chunk with
 * Ed25519, the design chunk receipts avoid): the signer's side (`chunk()` — the
 * receipt, its digest, the tree, a checkpoint every 64 chunks — and `finish()`), the
 * client's recorder (one JSON line per chunk), and `verifyStream` of the recording
 * (reading the lines, the receipts, the chain from both ends, the tree, the checkpoints,
 * the final receipt). Rounds alternate the four so a loaded machine slows each alike.
 * Times are this process's CPU time (user + system), which other processes on a shared
 * machine do not inflate as they do wall time (printed beside it); each row is the
 * median over rounds, the ratio the median of per-round ratios.
 *
 * Run: npx tsx bench/stream.ts [--chunks 20000] [--rounds 7]
 */
import { createStreamSigner, StreamRecorder, verifyStream } from '../src/attest/index.js';
import { addKey, emptyDirectory, KeyDirectory } from '../src/attest/key-directory.js';
import { newSigningKey, publicJwk } from '../src/attest/keys.js';
import { ed25519Signer } from '../src/attest/signature.js';
import { sha256Hex } from '../src/core/hash.js';
import { numberArg } from './support/alternating.js';

const CHUNKS = numberArg('--chunks', 20_000);
const ROUNDS = numberArg('--rounds', 7);
const key = newSigningKey('bench');
const day = 86_400_000;
const directory = new KeyDirectory(
  addKey(emptyDirectory(), publicJwk(key), { notBefore: Date.now() - day, notAfter: Date.now() + day }),
);
const signEach = ed25519Signer(key, 'bench');
const stream = { session: 'ctx-bench', task: 'task-bench', artifact: 'answer' };

/** One honest stream, signed, recorded and verified: the CPU and wall time each part took (ms). */
async function once(pieces: Buffer[]): Promise<{ cpu: Record<Side, number>; wall: Record<Side, number> }> {
  const cpu = {} as Record<Side, number>;
  const wall = {} as Record<Side, number>;
  const time = async <T>(side: Side, run: () => T | Promise<T>): Promise<T> => {
    const c = process.cpuUsage();
    const w = performance.now();
    const out = await run();
    const used = process.cpuUsage(c);
    cpu[side] = (used.user + used.system) / 1000;
    wall[side] = performance.now() - w;
    return out;
  };
  const sink = await time('hash', () => pieces.reduce((n, p) => n + sha256Hex(p).length, 0));
  await time('ed25519', () => pieces.reduce((n, p) => n + signEach.sign(p).length, 0));
  const { signed, final } = await time('sign', async () => {
    const signer = createStreamSigner({
      key,
      instance: 'bench',
      stream,
      policy: 'chunk',
      checkpointEvery: { chunks: 64 },
    });
    const signed = pieces.map((p) => signer.chunk(p));
    return { signed, final: await signer.finish() };
  });
  const text = await time('record', () => {
    const recorder = new StreamRecorder(stream);
    for (const [i, p] of pieces.entries()) recorder.chunk(p, signed[i]?.receipt, signed[i]?.checkpoint);
    recorder.final(final);
    return recorder.text();
  });
  const result = await time('verify', () => verifyStream(text, { directory }));
  if (!result.ok || sink === 0) throw new Error(`the bench stream did not verify: ${JSON.stringify(result.problems)}`);
  return { cpu, wall };
}

type Side = 'hash' | 'ed25519' | 'sign' | 'record' | 'verify';
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;

console.log(`chunks per stream: ${CHUNKS}; rounds: ${ROUNDS}; a checkpoint every 64 chunks; CPU time per chunk`);
console.log(
  'chunk bytes  side                    CPU µs/chunk  × hashing the bytes alone (median [range])  wall µs/chunk',
);
for (const size of [16, 1024]) {
  const pieces = Array.from({ length: CHUNKS }, (_, i) => Buffer.alloc(size, i % 251));
  await once(pieces.slice(0, 2000)); // warm-up
  const rounds: Awaited<ReturnType<typeof once>>[] = [];
  for (let r = 0; r < ROUNDS; r++) rounds.push(await once(pieces));
  const perChunk = (side: Side, of: 'cpu' | 'wall') => (median(rounds.map((r) => r[of][side])) * 1000) / CHUNKS;
  const row = (label: string, side: Side, ratio: string) =>
    console.log(
      `${(side === 'hash' ? String(size) : '').padStart(11)}  ${label.padEnd(24)} ${perChunk(side, 'cpu').toFixed(2).padStart(11)}  ${ratio.padEnd(41)} ${perChunk(side, 'wall').toFixed(2).padStart(13)}`,
    );
  row('hash the bytes alone', 'hash', '1');
  for (const [side, label] of [
    ['ed25519', '(an Ed25519 sig. each)'],
    ['sign', 'signer: chunk()+finish'],
    ['record', 'client: recorder'],
    ['verify', 'verifyStream'],
  ] as const) {
    const ratios = rounds.map((r) => r.cpu[side] / r.cpu.hash);
    row(
      label,
      side,
      `${median(ratios).toFixed(1)} [${Math.min(...ratios).toFixed(1)}–${Math.max(...ratios).toFixed(1)}]`,
    );
  }
}
