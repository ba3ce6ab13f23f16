/**
 * A recorded stream of 1,000 chunks, signed by a real key through the stream signer:
 * the honest recording verifies, and each way a client can be shown something else —
 * a chunk dropped, moved, spliced from another task, a byte flipped, the stream cut
 * before its final receipt — is reported with its own code and the chunk's number.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  chunkReceiptDigest,
  createStreamSigner,
  newSigningKey,
  type StreamProblem,
  verifyStream,
} from '../../src/attest/index.js';
import { NOW, trust } from './helpers.js';
import { lineOfChunk, recordedStream, STREAM, text } from './stream-helpers.js';

const key = newSigningKey('org-child');
const { directory } = trust([key]);
const options = { directory, now: NOW };
const N = 1000;
const honest = await recordedStream(key, N);

const found = (problems: StreamProblem[]) => problems.map((p) => [p.code, p.seq]);
const codes = (problems: StreamProblem[]) => problems.map((p) => p.code);
const edited = (edit: (lines: unknown[]) => void): unknown[] => {
  const lines = structuredClone(honest);
  edit(lines);
  return lines;
};
const chunkLine = (lines: unknown[], seq: number) =>
  lines[lineOfChunk(lines, seq)] as { receipt: Record<string, unknown>; bytes: string };

describe('an honest stream', () => {
  it('verifies, and gives back every chunk in order, all of them proven by the final receipt', async () => {
    const r = await verifyStream(text(honest), options);
    expect(r.problems).toEqual([]);
    expect(r).toMatchObject({ ok: true, verdict: 'valid', size: N, proven: N, received: N, policy: 'tokens:8' });
    const expected = Array.from({ length: N }, (_, i) => `chunk ${i} of task-42: ${'x'.repeat(i % 7)}\n`).join('');
    expect(r.bytes.toString('utf8')).toBe(expected);
  });
  it('carried a signed checkpoint every 64 chunks, each consistent with the final tree', async () => {
    const r = await verifyStream(honest, options);
    expect(r.checkpoints).toBe(Math.floor(N / 64));
    expect(honest.filter((l) => (l as { type: string }).type === 'checkpoint')).toHaveLength(15);
  });
  it('checkpoints when the time bound passes, whatever the chunk count', async () => {
    let now = NOW;
    const signer = createStreamSigner({
      key,
      instance: 'w',
      stream: STREAM,
      policy: 'chunk',
      checkpointEvery: { chunks: 1000, ms: 500 },
      clock: () => now,
    });
    const due = [0, 100, 499, 500, 900, 1000, 1001].map((t) => {
      now = NOW + t;
      return signer.chunk(Buffer.from('x')).checkpoint !== undefined;
    });
    expect(due).toEqual([false, false, false, true, false, true, false]);
  });
});

describe('what a client can be shown instead, each with its code and chunk', () => {
  it('a dropped chunk is CHUNK_MISSING, naming it', async () => {
    const lines = edited((l) => l.splice(lineOfChunk(l, 500), 1));
    const r = await verifyStream(lines, options);
    expect(found(r.problems)).toEqual([['CHUNK_MISSING', 500]]);
    expect(r.verdict).toBe('invalid');
  });
  it('the last chunks dropped are CHUNK_MISSING too: the final receipt signs how many there were', async () => {
    const lines = edited((l) => l.splice(lineOfChunk(l, 997), 3));
    expect(found((await verifyStream(lines, options)).problems)).toEqual([['CHUNK_MISSING', 997]]);
  });
  it('two chunks swapped is CHUNK_REORDERED for the one that moved, and the bytes still come back in order', async () => {
    const lines = edited((l) => {
      const a = lineOfChunk(l, 300);
      [l[a], l[a + 1]] = [l[a + 1], l[a]];
    });
    const r = await verifyStream(lines, options);
    expect(codes(r.problems)).toEqual(['CHUNK_REORDERED']);
    expect([300, 301]).toContain(r.problems[0]?.seq);
    expect(r.bytes).toEqual((await verifyStream(honest, options)).bytes);
  });
  it('one chunk moved far is one CHUNK_REORDERED, not one per chunk it passed', async () => {
    const lines = edited((l) => l.splice(lineOfChunk(l, 2), 0, ...l.splice(lineOfChunk(l, 900), 1)));
    expect(found((await verifyStream(lines, options)).problems)).toEqual([['CHUNK_REORDERED', 900]]);
  });
  it("a chunk spliced in from another task's stream is CHUNK_FOREIGN, and the chunk it replaced CHUNK_MISSING", async () => {
    const other = await recordedStream(key, 1000, { stream: { ...STREAM, task: 'task-43' } });
    const lines = edited((l) => {
      l[lineOfChunk(l, 700)] = other[lineOfChunk(other, 700)];
    });
    expect(found((await verifyStream(lines, options)).problems)).toEqual([
      ['CHUNK_FOREIGN', 700],
      ['CHUNK_MISSING', 700],
    ]);
  });
  it('a chunk spliced from another run of the same stream (same ids, other bytes) is CHUNK_FOREIGN by the signed chain', async () => {
    const rerun = await recordedStream(key, 1000, { chunk: (i) => Buffer.from(`rerun ${i}\n`) });
    const lines = edited((l) => {
      l[lineOfChunk(l, 42)] = rerun[lineOfChunk(rerun, 42)];
    });
    expect(found((await verifyStream(lines, options)).problems)).toEqual([
      ['CHUNK_FOREIGN', 42],
      ['CHUNK_MISSING', 42],
    ]);
  });
  it('a stream cut before its final receipt is STREAM_CUT, never valid', async () => {
    const lines = edited((l) => l.splice(lineOfChunk(l, 980)));
    const r = await verifyStream(lines, options);
    expect(codes(r.problems)).toEqual(['STREAM_CUT']);
    expect(r).toMatchObject({ ok: false, verdict: 'invalid', size: null });
  });
  it('a cut stream verified as partial on request says "partial" and vouches only for what a checkpoint proves', async () => {
    const lines = edited((l) => l.splice(lineOfChunk(l, 980)));
    const r = await verifyStream(lines, { ...options, partial: true });
    expect(r).toMatchObject({ ok: false, verdict: 'partial', proven: 960, received: 980 });
    expect(r.bytes).toEqual((await verifyStream(honest, options)).bytes.subarray(0, r.bytes.length));
    expect(r.bytes.toString('utf8').split('\n')).toHaveLength(961);
  });
  it('a final receipt recorded before chunks is CHUNK_REORDERED: the client was shown them after the end', async () => {
    const lines = edited((l) => {
      const final = l.pop();
      l.splice(lineOfChunk(l, N - 3), 0, final);
    });
    const r = await verifyStream(lines, options);
    expect(r).toMatchObject({ ok: false, verdict: 'invalid' });
    expect(found(r.problems)).toEqual([['CHUNK_REORDERED', N - 3]]);
    expect(r.problems[0]?.message).toMatch(/Chunk 997 on line \d+ and 2 more chunks come after the final receipt/);
    const one = await verifyStream(
      edited((l) => {
        const final = l.pop();
        l.splice(lineOfChunk(l, N - 1), 0, final);
      }),
      options,
    );
    expect(one.problems[0]?.message).toMatch(/Chunk 999 on line \d+ comes after the final receipt .*shown it after/);
  });
  it('a partial verdict is refused when no checkpoint proves any chunk: nothing in it is signed', async () => {
    const lines = edited((l) => l.splice(lineOfChunk(l, 40))); // before the first checkpoint (every 64)
    const r = await verifyStream(lines, { ...options, partial: true });
    expect(r).toMatchObject({ ok: false, verdict: 'invalid', proven: 0, received: 40 });
    expect(r.problems[0]?.message).toMatch(/No checkpoint proves any chunk either: nothing in the recording is signed/);
  });
  it('a partial verdict is refused when anything besides the cut is wrong', async () => {
    const lines = edited((l) => {
      l.splice(lineOfChunk(l, 980));
      l.splice(lineOfChunk(l, 10), 1);
    });
    expect((await verifyStream(lines, { ...options, partial: true })).verdict).toBe('invalid');
  });
  it('one flipped byte is CHUNK_MISMATCH, naming the chunk', async () => {
    const lines = edited((l) => {
      const line = chunkLine(l, 123);
      const bytes = Buffer.from(line.bytes, 'base64');
      bytes[3] = (bytes[3] as number) ^ 0x01;
      line.bytes = bytes.toString('base64');
    });
    expect(found((await verifyStream(lines, options)).problems)).toEqual([['CHUNK_MISMATCH', 123]]);
  });
  it("edited bytes with the chunk's receipt edited to match are CHUNK_FOREIGN: the signed chain names the old receipt", async () => {
    const lines = edited((l) => {
      const line = chunkLine(l, 123);
      const bytes = Buffer.from('chunk 123, rewritten\n');
      line.bytes = bytes.toString('base64');
      line.receipt.chunk_len = bytes.length;
      line.receipt.chunk_sha256 = createHash('sha256').update(bytes).digest('hex');
    });
    const { problems } = await verifyStream(lines, options);
    expect(found(problems)).toEqual([
      ['CHUNK_FOREIGN', 123],
      ['CHUNK_MISSING', 123],
    ]);
    // Received, so not "dropped": the stream's own chunk is what is missing.
    expect(problems[1]?.message).toBe(
      "The stream's chunk 123 was not received: a chunk that is not the stream's came in its place (CHUNK_FOREIGN).",
    );
  });
  it('an edit to an early chunk with every later prev re-chained is blamed where the signed chain breaks, saying an earlier edit can be why', async () => {
    const small = await recordedStream(key, 5, { checkpointEvery: 1000 });
    const lines = structuredClone(small) as Array<{ type: string; bytes?: string; receipt?: Record<string, unknown> }>;
    const chunks = lines.filter((l) => l.type === 'chunk');
    const evil = Buffer.from('EVIL\n');
    chunks[0]!.bytes = evil.toString('base64');
    Object.assign(chunks[0]!.receipt!, {
      chunk_len: evil.length,
      chunk_sha256: createHash('sha256').update(evil).digest('hex'),
    });
    for (let i = 1; i < chunks.length; i++)
      chunks[i]!.receipt!.prev = chunkReceiptDigest(chunks[i - 1]!.receipt as never).toString('hex');
    const { problems, ok } = await verifyStream(lines, options);
    expect(ok).toBe(false);
    expect(found(problems)).toEqual([
      ['CHUNK_FOREIGN', 4],
      ['CHUNK_MISSING', 4],
    ]);
    expect(problems[0]?.message).toMatch(
      /the final receipt names \S+, .*also by an edit to a chunk before it, with the receipts after that re-chained without the key: none of chunks 0–4 is proven/,
    );
  });
  it('a first line edited to name another stream is one STREAM_MISMATCH at line 1, not a cut or a page of foreign chunks', async () => {
    const lines = edited((l) => {
      l[0] = { ...(l[0] as object), artifact: 'other' };
    });
    const { problems, ok } = await verifyStream(lines, options);
    expect(ok).toBe(false);
    expect(problems.map((p) => [p.code, p.line])).toEqual([['STREAM_MISMATCH', 1]]);
    expect(problems[0]?.message).toMatch(/the first line, which nothing signs, was changed/);
  });
  it('a chunk received twice is CHUNK_REPEATED', async () => {
    const lines = edited((l) => l.splice(lineOfChunk(l, 11), 0, l[lineOfChunk(l, 10)]));
    expect(found((await verifyStream(lines, options)).problems)).toEqual([['CHUNK_REPEATED', 10]]);
  });
});
