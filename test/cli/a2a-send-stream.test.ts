/**
 * `witness a2a send --stream` as a user runs it, against real `witness a2a serve`,
 * `witness a2a tool` and `witness a2a cosigner` processes: the child streams its answer
 * as chunk events with chunk receipts, the parent records them as they arrive
 * (`--stream-out`), checks the recording and the completed task, and `witness verify`
 * re-checks both the recording and the delegation record that embeds it. Then children
 * that misbehave, on the real @a2a-js/sdk server with the child's own release code
 * (scripted-agent.ts): one that drops a chunk, one that moves one, one that splices in a
 * chunk of another task's stream, and one cut before its final receipt — each refused
 * with its stream's reason code, exit 1.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  streamingScript,
  type StreamedChunk,
  serveScriptedAgent,
  streamedChunks,
  type Turn,
} from '../a2a/scripted-agent.js';
import { a2aCliFixture } from './a2a-fixture.js';

const fixture = a2aCliFixture('witness-a2a-stream-');
const { dir, childKey, servers, scripted, cli } = fixture;
let agent: string;
let wordy: string;
let cosigner: string;

beforeAll(async () => {
  const tool = await servers.start(['a2a', 'tool']);
  cosigner = await servers.start(['a2a', 'cosigner', '--key', 'parent.key.json', '--admin-token-file', 'grants.token']);
  const serve = (...more: string[]) => fixture.serveChild(tool, cosigner, '--task-store', ':memory:', ...more);
  [agent, wordy] = await Promise.all([serve(), serve('--stream-policy', 'tokens:4', '--checkpoint-every', '2')]);
}, 120_000);

afterAll(() => fixture.close());

const send = (to: string, task: string, ...options: string[]) =>
  cli('a2a', 'send', to, task, '--keys', 'trusted.json', '--stream', ...options);
const BY_CONSTRUCTION: Record<string, string[]> = {
  none: [],
  chain: ['--key', 'parent.key.json'],
  dag: ['--key', 'parent.key.json', '--cosigner', '', '--admin-token-file', 'grants.token'],
};
const options = (construction: string) =>
  (BY_CONSTRUCTION[construction] as string[]).map((o) => (o === '' ? cosigner : o));

/** The lines of a recording file, as values. */
function lines(file: string): Array<Record<string, unknown>> {
  return readFileSync(join(dir, file), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

describe('witness a2a send --stream to a running witness a2a serve', () => {
  it.each(Object.keys(BY_CONSTRUCTION))(
    'under %s prints the chunks, verifies the stream and the task, and witness verify accepts the recording and the record',
    async (construction) => {
      const [stream, out] = [`${construction}.stream.jsonl`, `${construction}.delegation.json`];
      const r = await send(agent, 'Inspect lot 7.', ...options(construction), '--stream-out', stream, '--out', out);
      expect([r.code, r.err], r.out).toEqual([
        0,
        `stream: the answer as it arrives, unverified until the verdict line after it\nrecord: ${out} (check it with: witness verify ${out} --keys …)\nstream: ${stream} (check it with: witness verify ${stream} --keys …)\n`,
      ]);
      expect(r.out).toMatch(
        new RegExp(
          `^Task [0-9a-f]{16}[\\s\\S]* tolerance\\nvalid: the answer of org-child \\(task \\S+, 1 attested artifact\\(s\\), \\d+ bytes of text, streamed in 4 chunk\\(s\\) with \\d+ checkpoint\\(s\\)\\) verified under ${construction}: .*${construction === 'dag' ? 'co-signed by org-parent' : ''}`,
        ),
      );
      const recorded = await cli('verify', stream, '--keys', 'trusted.json');
      expect([recorded.code, recorded.out]).toEqual([
        0,
        expect.stringMatching(
          /^valid: stream of artifact \S+, task \S+, session \S+: 4 chunks, \d+ bytes, policy chunk, released by org-child\/policy/,
        ),
      ]);
      const record = await cli('verify', out, '--keys', 'trusted.json');
      expect([record.code, record.out]).toEqual([0, expect.stringMatching(/^valid: .*streamed in 4 chunk\(s\)/)]);
      // The record embeds the same recording the file holds.
      const embedded = JSON.parse(readFileSync(join(dir, out), 'utf8'));
      expect(embedded.streams).toEqual([lines(stream)]);
      // Recorded twice, its chunks would count twice: refused.
      embedded.streams.push(embedded.streams[0]);
      writeFileSync(join(dir, `twice.${out}`), JSON.stringify(embedded));
      const twice = await cli('verify', `twice.${out}`, '--keys', 'trusted.json');
      expect([twice.code, twice.out]).toEqual([
        1,
        expect.stringMatching(
          /MALFORMED +\[streams\[1\]\] streams\[1\] is a second recording of the stream of artifact/,
        ),
      ]);
    },
  );

  it('under dag, the stream’s final receipt and the artifact’s are both edges the parent co-signed', async () => {
    const r = await send(agent, 'Inspect lot 8.', ...options('dag'), '--stream-out', 'dag2.jsonl', '--json');
    expect(r.code).toBe(0);
    const report = JSON.parse(r.out) as { paths: Array<Array<{ type: string; cosigners: string[] }>> };
    expect(report.paths[0]?.at(-1)).toMatchObject({ type: 'edge', cosigners: ['org-parent'] });
    const final = lines('dag2.jsonl').find((l) => l.type === 'final') as {
      evidence: { path: Array<{ type: string }> };
    };
    expect(final.evidence.path.map((p) => p.type)).toEqual(['output', 'edge']);
  });

  it('names the policy serve was given in every chunk receipt, with a checkpoint every --checkpoint-every chunks', async () => {
    const r = await send(wordy, 'Inspect lot 9.', '--stream-out', 'wordy.jsonl');
    expect(r.code, r.out).toBe(0);
    const recording = lines('wordy.jsonl');
    const chunks = recording.filter((l) => l.type === 'chunk') as Array<{ receipt: { policy: string } }>;
    expect(new Set(chunks.map((c) => c.receipt.policy))).toEqual(new Set(['tokens:4']));
    expect(recording.filter((l) => l.type === 'checkpoint')).toHaveLength(Math.floor(chunks.length / 2));
    const checked = await cli('verify', 'wordy.jsonl', '--keys', 'trusted.json', '--json');
    expect(JSON.parse(checked.out)).toMatchObject({ ok: true, details: { policy: 'tokens:4' } });
  });

  it('refuses a record whose embedded stream was edited after the answer', async () => {
    await send(agent, 'Inspect lot 10.', '--out', 'edited.json');
    const record = JSON.parse(readFileSync(join(dir, 'edited.json'), 'utf8'));
    const chunk = (record.streams[0] as Array<{ type: string; bytes: string }>).find((l) => l.type === 'chunk');
    (chunk as { bytes: string }).bytes = Buffer.from('[{"text":"edited"}]\n').toString('base64');
    writeFileSync(join(dir, 'edited.json'), JSON.stringify(record));
    const r = await cli('verify', 'edited.json', '--keys', 'trusted.json');
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/\n {2}CHUNK_MISMATCH +\[stream of artifact \S+, chunk 0\]/);
    expect(r.out).toMatch(/VERDICT_NOT_REPRODUCED/);
  });

  it('refuses --stream-out without --stream, and a policy a child cannot keep, with exit 2', async () => {
    const noStream = await cli(
      'a2a',
      'send',
      agent,
      'Inspect lot 11.',
      '--keys',
      'trusted.json',
      '--stream-out',
      'x.jsonl',
    );
    expect([noStream.code, noStream.err]).toEqual([
      2,
      expect.stringMatching(/--stream-out records a stream: add --stream/),
    ]);
    const policy = await cli(
      'a2a',
      'serve',
      '--key',
      'child.key.json',
      '--tool',
      'http://127.0.0.1:1/mcp',
      '--stream-policy',
      'tool-call',
    );
    expect([policy.code, policy.err]).toEqual([2, expect.stringMatching(/tool-call does not apply/)]);
  });
});

/** A streaming child whose chunk events `alter` rearranges before they go out; the task then completes. */
async function misbehaving(alter: (chunks: StreamedChunk[], turn: Turn) => Promise<StreamedChunk[]>): Promise<string> {
  const child = await serveScriptedAgent(
    childKey,
    streamingScript(childKey, 'Lot 12: three of three findings within tolerance.', { alter }),
    { streaming: true },
  );
  scripted.push(child);
  return child.url;
}

describe('witness a2a send --stream to a child that alters its stream', () => {
  const chain = () => options('chain');

  it('an honest scripted child verifies (the doubles below differ from it only in what they alter)', async () => {
    const r = await send(await misbehaving(async (c) => c), 'Inspect lot 12.', ...chain());
    expect(r.code, r.out).toBe(0);
  });

  it('a dropped chunk: exit 1 with CHUNK_MISSING, and the recording it wrote says so too', async () => {
    const url = await misbehaving(async (c) => c.filter((_, i) => i !== 2));
    const r = await send(url, 'Inspect lot 12.', ...chain(), '--stream-out', 'dropped.jsonl');
    expect(r.code).toBe(1);
    expect(r.out).toMatch(
      /\ninvalid: the answer of org-child [^\n]* did not verify under chain:\n {2}CHUNK_MISSING +\[stream of artifact \S+, chunk 2\]/,
    );
    const again = await cli('verify', 'dropped.jsonl', '--keys', 'trusted.json');
    expect([again.code, again.out]).toEqual([1, expect.stringMatching(/CHUNK_MISSING/)]);
  });

  it('a chunk moved: exit 1 with CHUNK_REORDERED', async () => {
    const url = await misbehaving(async ([a, b, c, ...rest]) => [a, c, b, ...rest] as StreamedChunk[]);
    const r = await send(url, 'Inspect lot 12.', ...chain());
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/ {2}CHUNK_REORDERED +\[stream of artifact \S+, chunk [12]\]/);
  });

  it("a chunk spliced in from another task's stream: exit 1 with CHUNK_FOREIGN", async () => {
    const url = await misbehaving(async (chunks, turn) => {
      const other = await streamedChunks(
        childKey,
        { ...turn, ctx: { ...turn.ctx, taskId: randomUUID() } as Turn['ctx'] },
        'Lot 12: three of three findings within tolerance.',
      );
      // Same place, same artifact id, the other task's receipt: the bytes even match.
      const spliced = other[1] as StreamedChunk;
      return chunks.map((c, i) =>
        i === 1 ? { ...spliced, artifact: { ...spliced.artifact, artifactId: c.artifact.artifactId } } : c,
      );
    });
    const r = await send(url, 'Inspect lot 12.', ...chain());
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/ {2}CHUNK_FOREIGN +\[stream of artifact \S+, chunk 1\]/);
  });

  it('a stream cut before its final receipt: exit 1 with STREAM_CUT', async () => {
    const url = await misbehaving(async (c) => c.slice(0, -1));
    const r = await send(url, 'Inspect lot 12.', ...chain(), '--stream-out', 'cut.jsonl');
    expect(r.code).toBe(1);
    expect(r.out).toMatch(
      / {2}STREAM_CUT +\[stream of artifact \S+, line \d+\] The recording ends after \d+ chunks without the stream's final receipt/,
    );
    const partial = await cli('verify', 'cut.jsonl', '--keys', 'trusted.json', '--allow-partial');
    expect([partial.code, partial.out]).toEqual([0, expect.stringMatching(/^partial: /)]);
  });
});
