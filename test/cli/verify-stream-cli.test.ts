/**
 * `witness verify stream.jsonl --keys trusted.json`: a stream recorded to a file by the
 * real recorder, as a client records it while events arrive, recognised by the type its
 * first line declares; exit 0 for the honest stream, 1 with the problem's code and chunk
 * for an edited one, a partial verdict only when asked for, and 2 for an option that
 * does not apply.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import {
  addKey,
  createStreamSigner,
  emptyDirectory,
  newSigningKey,
  publicJwk,
  recordStreamToFile,
  writeDirectoryFile,
} from '../../src/attest/index.js';
import { STREAM } from '../attest/stream-helpers.js';
import { runCli } from '../support/cli.js';

const ROOT = join(import.meta.dirname, '..', '..');
const validate = new Ajv2020({ allErrors: true, strict: false }).compile(
  JSON.parse(readFileSync(join(ROOT, 'docs', 'schemas', 'verify-report.schema.json'), 'utf8')) as object,
);

const cwd = mkdtempSync(join(tmpdir(), 'witness-stream-cli-'));
const key = newSigningKey('org-child');
const day = 86_400_000;
writeDirectoryFile(
  join(cwd, 'trusted.json'),
  addKey(emptyDirectory(), publicJwk(key), { notBefore: Date.now() - day, notAfter: Date.now() + day }),
);
const signer = createStreamSigner({
  key,
  instance: 'writer-1',
  stream: STREAM,
  policy: 'tokens:4',
  checkpointEvery: { chunks: 10 },
});
const recorder = recordStreamToFile(join(cwd, 'stream.jsonl'), STREAM);
for (let i = 0; i < 50; i++) {
  const bytes = Buffer.from(`token ${i} `);
  const signed = signer.chunk(bytes);
  recorder.chunk(bytes, signed.receipt, signed.checkpoint);
}
recorder.final(await signer.finish());
recorder.close();
const lines = readFileSync(join(cwd, 'stream.jsonl'), 'utf8').split('\n').slice(0, -1);

/** `witness verify FILE … --json`: exit code and the report, checked against the documented schema. */
async function verify(file: string, ...args: string[]) {
  const r = await runCli(['verify', file, '--keys', 'trusted.json', ...args, '--json'], cwd);
  const report = JSON.parse(r.out) as Record<string, unknown>;
  expect(validate(report) ? [] : validate.errors).toEqual([]);
  return { code: r.code, report };
}
function write(name: string, edited: string[]): string {
  writeFileSync(join(cwd, name), edited.map((l) => `${l}\n`).join(''));
  return name;
}

describe('witness verify stream.jsonl', () => {
  it('says valid, exit 0, for the stream as recorded', async () => {
    const r = await runCli(['verify', 'stream.jsonl', '--keys', 'trusted.json'], cwd);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(
      /^valid: stream of artifact report, task task-42, session ctx-7f3a: 50 chunks, \d+ bytes, policy tokens:4, released by org-child\/writer-1 with key ed25519:[0-9a-f]{16}; 5 checkpoints verified\.\n$/,
    );
    expect(await verify('stream.jsonl')).toMatchObject({
      code: 0,
      report: { ok: true, type: 'witness/stream', problems: [], details: { size: 50, proven: 50, checkpoints: 5 } },
    });
  });
  it('says invalid, exit 1, with the code and the chunk, for a flipped byte', async () => {
    const edited = [...lines];
    const chunk = JSON.parse(edited[6] as string);
    chunk.bytes = Buffer.from('tokeN 5 ').toString('base64');
    edited[6] = JSON.stringify(chunk);
    expect(await verify(write('flipped.jsonl', edited))).toMatchObject({
      code: 1,
      report: { ok: false, problems: [{ code: 'CHUNK_MISMATCH', at: 'chunk 5' }] },
    });
    const text = await runCli(['verify', 'flipped.jsonl', '--keys', 'trusted.json'], cwd);
    expect(text.out).toMatch(/^invalid: .*\n {2}CHUNK_MISMATCH +\[chunk 5\] Chunk 5 has 8 bytes/);
  });
  it('says invalid, exit 1, STREAM_CUT, for a stream cut before its final receipt', async () => {
    expect(await verify(write('cut.jsonl', lines.slice(0, -1)))).toMatchObject({
      code: 1,
      report: { ok: false, problems: [{ code: 'STREAM_CUT' }], details: { verdict: 'invalid', proven: 50 } },
    });
  });
  it('with --allow-partial, says partial (never valid), exit 0, with the cut as a warning', async () => {
    const r = await verify('cut.jsonl', '--allow-partial');
    expect(r).toMatchObject({ code: 0, report: { ok: true, problems: [], details: { verdict: 'partial' } } });
    expect(r.report.summary).toMatch(
      /^partial: .*cut after 50 chunks, before its final receipt; a checkpoint signed by org-child with key ed25519:[0-9a-f]{16} proves the first 50 \(\d+ bytes\)\.$/,
    );
    expect(r.report.warnings).toEqual([expect.stringMatching(/^STREAM_CUT: /)]);
  });
  it('reads a recording of its first line alone (nothing received) as a cut stream', async () => {
    expect(await verify(write('empty.jsonl', lines.slice(0, 1)))).toMatchObject({
      code: 1,
      report: { type: 'witness/stream', problems: [{ code: 'STREAM_CUT' }] },
    });
  });
  it('refuses --output (a recording carries its chunks) and needs --keys: exit 2', async () => {
    const output = await runCli(['verify', 'stream.jsonl', '--keys', 'trusted.json', '--output', 'x'], cwd);
    expect(output.code).toBe(2);
    expect(output.err).toMatch(
      /--output does not apply to a recorded stream \(a recorded stream carries its own chunks\)/,
    );
    const keys = await runCli(['verify', 'stream.jsonl'], cwd);
    expect(keys.code).toBe(2);
    expect(keys.err).toMatch(/needs --keys <file> for a recorded stream/);
  });
});
