/**
 * The signed parts of a recorded stream — the final release receipt and the checkpoints
 * — are checked as any Witness evidence is: against the verifier's own key directory,
 * with the receipt codes of attest.md §3, the nonce consumed once; and a recording
 * that is not one (empty, damaged lines) is MALFORMED or NON_CANONICAL, never valid.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  createStreamSigner,
  MemoryNonceStore,
  newSigningKey,
  recordStreamToFile,
  type StreamProblem,
  StreamRecorder,
  verifyStream,
} from '../../src/attest/index.js';
import { HOUR, NOW, signerAt, trust } from './helpers.js';
import { lineOfChunk, recordedStream, STREAM, text } from './stream-helpers.js';

const key = newSigningKey('org-child');
const parentKey = newSigningKey('org-parent');
const stranger = newSigningKey('org-stranger');
const { directory } = trust([key, parentKey]);
const options = { directory, now: NOW };
const honest = await recordedStream(key, 40, { checkpointEvery: 8 });

const codes = (problems: StreamProblem[]) => problems.map((p) => p.code);
const edited = (edit: (lines: unknown[]) => void): unknown[] => {
  const lines = structuredClone(honest);
  edit(lines);
  return lines;
};
const indexOf = (lines: unknown[], type: string, nth = 0) =>
  lines.map((l, i) => [(l as { type: string }).type, i] as const).filter(([t]) => t === type)[nth]?.[1] as number;
type FinalLine = { statement: Record<string, unknown>; evidence: Record<string, unknown> };

describe('the final receipt', () => {
  it('signed by a key outside the verifier directory is UNKNOWN_KEY', async () => {
    const foreign = await recordedStream(stranger, 40, { checkpointEvery: 8 });
    const r = await verifyStream(foreign, options);
    expect(codes(r.problems)).toContain('UNKNOWN_KEY');
    expect(r.verdict).toBe('invalid');
  });
  it('whose statement was edited (the size, say) is OUTPUT_MISMATCH: the receipt signs the statement', async () => {
    const lines = edited((l) => {
      (l[indexOf(l, 'final')] as FinalLine).statement.size = 39;
    });
    expect(codes((await verifyStream(lines, options)).problems)).toContain('OUTPUT_MISMATCH');
  });
  it('with its signature flipped is BAD_SIGNATURE', async () => {
    const lines = edited((l) => {
      const sig = ((l[indexOf(l, 'final')] as FinalLine).evidence.signatures as { sig: string }[])[0] as {
        sig: string;
      };
      sig.sig = `${sig.sig[0] === 'A' ? 'B' : 'A'}${sig.sig.slice(1)}`;
    });
    expect(codes((await verifyStream(lines, options)).problems)).toEqual(['BAD_SIGNATURE']);
  });
  it("of another stream is STREAM_MISMATCH, and this stream's own end never came: STREAM_CUT", async () => {
    const other = await recordedStream(key, 40, { stream: { ...STREAM, artifact: 'summary' } });
    const lines = edited((l) => {
      l[indexOf(l, 'final')] = other[indexOf(other, 'final')];
    });
    expect(codes((await verifyStream(lines, options)).problems)).toEqual(['STREAM_MISMATCH', 'STREAM_CUT']);
  });
  it('verified after it expired is EXPIRED', async () => {
    expect(codes((await verifyStream(honest, { directory, now: NOW + 2 * HOUR })).problems)).toEqual(['EXPIRED']);
  });
  it('is consumed once: a second verifier sharing the nonce store says REPLAY', async () => {
    const nonceStore = new MemoryNonceStore();
    expect((await verifyStream(honest, { ...options, nonceStore })).ok).toBe(true);
    const again = await verifyStream(honest, { ...options, nonceStore });
    expect(codes(again.problems)).toEqual(['REPLAY']);
  });
  it('does not consume its nonce when the stream is otherwise invalid', async () => {
    const nonceStore = new MemoryNonceStore();
    const dropped = edited((l) => l.splice(lineOfChunk(l, 3), 1));
    expect((await verifyStream(dropped, { ...options, nonceStore })).ok).toBe(false);
    expect((await verifyStream(honest, { ...options, nonceStore })).ok).toBe(true);
  });
  it('carries a delegation path: the stream answers a parent task, checked under the construction pinned', async () => {
    const task = await signerAt(parentKey, NOW).releaseOutput(Buffer.from('summarise the report'));
    const lines = await recordedStream(key, 5, { ancestors: [task] });
    const r = await verifyStream(lines, { ...options, construction: 'chain' });
    expect(r).toMatchObject({ ok: true, verdict: 'valid' });
    expect(r.path?.map((p) => p.deployer)).toEqual(['org-parent', 'org-child']);
    expect(codes((await verifyStream(lines, { ...options, construction: 'dag' })).problems)).toContain(
      'CONSTRUCTION_MISMATCH',
    );
  });
});

describe('checkpoints', () => {
  it('with an edited note is BAD_SIGNATURE', async () => {
    const lines = edited((l) => {
      const cp = l[indexOf(l, 'checkpoint', 1)] as { note: string };
      cp.note = cp.note.replace(/\n16\n/, '\n17\n');
    });
    expect(codes((await verifyStream(lines, options)).problems)).toEqual(['BAD_SIGNATURE']);
  });
  it("of another stream is STREAM_MISMATCH: the origin names the stream's session, task and artifact", async () => {
    const other = await recordedStream(key, 40, { stream: { ...STREAM, session: 'ctx-other' }, checkpointEvery: 8 });
    const lines = edited((l) => {
      l[indexOf(l, 'checkpoint')] = other[indexOf(other, 'checkpoint')];
    });
    expect(codes((await verifyStream(lines, options)).problems)).toEqual(['STREAM_MISMATCH']);
  });
  it('signed by a key outside the directory is UNKNOWN_KEY', async () => {
    const lines = edited((l) => {
      (l[indexOf(l, 'checkpoint')] as { key_id: string }).key_id = stranger.kid;
    });
    expect(codes((await verifyStream(lines, options)).problems)).toEqual(['UNKNOWN_KEY']);
  });
  it('that the final tree does not extend (the runtime showed other chunks, then signed these) is INCONSISTENT', async () => {
    // The same runtime, key and stream: a first version of 16 chunks was shown and checkpointed, then replaced.
    const shown = await recordedStream(key, 16, { checkpointEvery: 8, chunk: (i) => Buffer.from(`draft ${i}\n`) });
    const lines = edited((l) => l.splice(indexOf(l, 'checkpoint', 1) + 1, 0, shown[indexOf(shown, 'checkpoint', 1)]));
    expect(codes((await verifyStream(lines, options)).problems)).toEqual(['INCONSISTENT']);
  });
  it('signing more chunks than the stream ended with is TRUNCATED: chunks were rolled back', async () => {
    const longer = await recordedStream(key, 48, { checkpointEvery: 8 });
    const lines = edited((l) => l.splice(indexOf(l, 'final'), 0, longer[indexOf(longer, 'checkpoint', 5)]));
    expect(codes((await verifyStream(lines, options)).problems)).toEqual(['TRUNCATED']);
  });
  it("signed by another trusted deployer's key are WRONG_DEPLOYER: one runtime releases a stream", async () => {
    // The same chunks signed by the parent's runtime: chunk receipts name no key, so its checkpoints have the same roots.
    const parents = await recordedStream(parentKey, 40, { checkpointEvery: 8 });
    const withFinal = edited((l) => l.splice(indexOf(l, 'final'), 0, parents[indexOf(parents, 'checkpoint', 2)]));
    expect(codes((await verifyStream(withFinal, options)).problems)).toEqual(['WRONG_DEPLOYER']);
    const cut = edited((l) => {
      l.splice(indexOf(l, 'final'));
      l.push(parents[indexOf(parents, 'checkpoint', 4)]);
    });
    expect(codes((await verifyStream(cut, { ...options, partial: true })).problems)).toEqual([
      'WRONG_DEPLOYER',
      'STREAM_CUT',
    ]);
  });
  it('of a cut stream, verified as partial, say who proves the chunks', async () => {
    const cut = edited((l) => l.splice(indexOf(l, 'final')));
    expect(await verifyStream(cut, { ...options, partial: true })).toMatchObject({
      verdict: 'partial',
      proven: 40,
      provenBy: { deployer: 'org-child', key_id: key.kid },
    });
  });
  it('name the chunks a cut stream is missing after the last one received', async () => {
    const lines = edited((l) => {
      l.splice(indexOf(l, 'final'));
      l.splice(lineOfChunk(l, 37), 3); // chunks 37–39 gone; the checkpoint at 40 came after them and stays
    });
    const r = await verifyStream(lines, options);
    expect(r.problems.map((p) => [p.code, p.seq])).toEqual([
      ['CHUNK_MISSING', 37],
      ['STREAM_CUT', undefined],
    ]);
  });
});

describe('an empty stream', () => {
  it('verifies with its final receipt alone, and a chunk added to it lies beyond its end', async () => {
    const empty = await recordedStream(key, 0);
    expect(await verifyStream(empty, options)).toMatchObject({ ok: true, size: 0, bytes: Buffer.alloc(0) });
    const added = [...empty.slice(0, 1), honest[lineOfChunk(honest, 0)], ...empty.slice(1)];
    expect(codes((await verifyStream(added, options)).problems)).toEqual(['CHUNK_FOREIGN']);
  });
});

describe('the policy the stream promised', () => {
  it('is reported, and a verifier requiring another says POLICY_MISMATCH', async () => {
    expect((await verifyStream(honest, options)).policy).toBe('tokens:8');
    expect(codes((await verifyStream(honest, { ...options, policy: 'turn' })).problems)).toEqual(['POLICY_MISMATCH']);
  });
  it('a chunk promising another policy than its stream is POLICY_MISMATCH (and, its receipt changed, foreign)', async () => {
    const lines = edited((l) => {
      (l[lineOfChunk(l, 5)] as { receipt: { policy: string } }).receipt.policy = 'tokens:9';
    });
    expect(codes((await verifyStream(lines, options)).problems)).toEqual([
      'POLICY_MISMATCH',
      'CHUNK_FOREIGN',
      'CHUNK_MISSING',
    ]);
  });
  it('a signer refuses a policy that is none of chunk, tokens:N, tool-call or turn, and ids with a "/"', () => {
    const make = (policy: string, artifact = 'a') =>
      createStreamSigner({ key, instance: 'w', stream: { ...STREAM, artifact }, policy });
    expect(() => make('tokens:0')).toThrow(/policy "tokens:0" is none of/);
    expect(() => make('chunk', 'a/b')).toThrow(/stream.artifact/);
    expect(make('tool-call').origin).toBe('agent-witness.dev/stream/ctx-7f3a/task-42/a');
  });
});

describe('a recording that is not one', () => {
  it('empty is MALFORMED', async () => {
    expect(codes((await verifyStream('', options)).problems)).toEqual(['MALFORMED']);
  });
  it('with a line holding a duplicate key is NON_CANONICAL at that line, and the chunk counts as not received', async () => {
    const lines = text(honest).split('\n');
    const at = lineOfChunk(honest, 7);
    lines[at] = (lines[at] as string).replace('{"type":"chunk",', '{"type":"chunk","type":"chunk",');
    const r = await verifyStream(lines.join('\n'), options);
    expect(r.problems.map((p) => [p.code, p.line])).toEqual([
      ['NON_CANONICAL', at + 1],
      ['CHUNK_MISSING', undefined],
    ]);
  });
  it('cut in the middle of a line is MALFORMED at that line, and STREAM_CUT', async () => {
    const t = text(honest);
    const r = await verifyStream(t.slice(0, t.length - 30), options);
    expect(codes(r.problems)).toEqual(['MALFORMED', 'STREAM_CUT']);
  });
  it('a chunk line with an unknown member is MALFORMED, naming it', async () => {
    const lines = edited((l) => {
      (l[lineOfChunk(l, 2)] as Record<string, unknown>).extra = 1;
    });
    const r = await verifyStream(lines, options);
    expect(r.problems[0]?.message).toMatch(/^Line \d+ is not a chunk, checkpoint or final line: .*extra/);
  });
  it('an event the recorder cannot lay out as a line (not an object) is kept whole, and read as MALFORMED', async () => {
    const recorder = new StreamRecorder(STREAM);
    recorder.checkpoint('a checkpoint that is a string');
    recorder.final({ type: 'final', statement: {} });
    expect(recorder.lines.slice(1).map((l) => JSON.parse(l))).toEqual([
      { type: 'checkpoint', value: 'a checkpoint that is a string' },
      { type: 'final', value: { type: 'final', statement: {} } },
    ]);
    expect(codes((await verifyStream(recorder.text(), options)).problems)).toEqual([
      'MALFORMED',
      'MALFORMED',
      'STREAM_CUT',
    ]);
  });
  it('the file recorder refuses a file that already holds a recording, and a folder', () => {
    const dir = mkdtempSync(join(tmpdir(), 'witness-stream-'));
    const file = join(dir, 'stream.jsonl');
    recordStreamToFile(file, STREAM).close();
    expect(() => recordStreamToFile(file, STREAM)).toThrow(/already holds a recording/);
    expect(() => recordStreamToFile(dir, STREAM)).toThrow(/is a directory, not a regular file/);
    expect(readFileSync(file, 'utf8').split('\n')).toHaveLength(2);
  });
  it('the recorder writes one line per event, in arrival order, that the verifier reads back', async () => {
    const signer = createStreamSigner({ key, instance: 'w', stream: STREAM, policy: 'turn', clock: () => NOW });
    const recorder = new StreamRecorder(STREAM);
    for (const piece of ['one ', 'two']) recorder.chunk(Buffer.from(piece), signer.chunk(Buffer.from(piece)).receipt);
    recorder.checkpoint(signer.checkpoint());
    recorder.final(await signer.finish());
    expect(recorder.lines.map((l) => JSON.parse(l).type)).toEqual([
      'witness/stream',
      'chunk',
      'chunk',
      'checkpoint',
      'final',
    ]);
    const r = await verifyStream(recorder.text(), options);
    expect(r).toMatchObject({ ok: true, checkpoints: 1, proven: 2 });
    expect(r.bytes.toString()).toBe('one two');
  });
});
