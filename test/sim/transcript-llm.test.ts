/**
 * Signed model-backed sweeps: the checkpoint signs the cassette's digest (recorded or
 * replayed), and `verifyResults({cassette})` ties a cassette to the results — the
 * scripted OpenAI-compatible server stands in for the model.
 */
import { appendFileSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { canonicalize } from '../../src/core/canonical-json.js';
import { sha256Hex } from '../../src/core/hash.js';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { addKey, emptyDirectory, KeyDirectory } from '../../src/attest/key-directory.js';
import { newSigningKey, publicJwk } from '../../src/attest/keys.js';
import { openModelAgents } from '../../src/sim/agents/llm/model-agents.js';
import { preset } from '../../src/sim/experiment/presets.js';
import { runExperiment } from '../../src/sim/experiment/run.js';
import { parseExperiment } from '../../src/sim/experiment/schema.js';
import { checkpointPath, receiptDigest, signedLine, splitSignedLine } from '../../src/sim/transcript/format.js';
import { verifyResults } from '../../src/sim/transcript/verify.js';
import { type ScriptedServer, startScriptedServer } from '../llm/scripted-server.js';

const key = newSigningKey('lab');
const directory = new KeyDirectory(
  addKey(emptyDirectory(), publicJwk(key), { notBefore: Date.now() - 60_000, notAfter: Date.now() + 86_400_000 }),
);
const servers: ScriptedServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function recordedSweep(): Promise<{ dir: string; out: string; cassette: string }> {
  const server = await startScriptedServer();
  servers.push(server);
  const dir = mkdtempSync(join(tmpdir(), 'witness-transcript-llm-'));
  const experiment = parseExperiment({
    name: 'llm-signed',
    seed: 3,
    runs: 2,
    grid: { agents: 'llm', model: 'scripted', honest: 3, rounds: 3 },
  });
  const out = join(dir, 'r.jsonl');
  const cassette = join(dir, 'c.jsonl');
  const agents = await openModelAgents(experiment, { endpoints: [server.url], record: cassette });
  try {
    await runExperiment({ experiment, out, agents, sign: { key } });
  } finally {
    await agents.close();
  }
  return { dir, out, cassette };
}

describe('a signed LLM sweep', () => {
  it('signs the prompt pack and the recorded cassette, and verifies with that cassette', async () => {
    const { out, cassette } = await recordedSweep();
    const cp = JSON.parse(readFileSync(checkpointPath(out), 'utf8')).checkpoints[0];
    expect(cp.prompts.hash).toMatch(/^[0-9a-f]{64}$/);
    expect(cp.cassette).toMatchObject({ role: 'recorded', bytes: readFileSync(cassette).length });
    expect(readFileSync(out, 'utf8')).toContain(`"prompts":"${cp.prompts.hash}"`);
    expect(verifyResults(out, { directory, cassette })).toMatchObject({ ok: true, problems: [] });
  });
  it('still verifies with its cassette after later calls were appended to it (the signed bytes are a prefix)', async () => {
    const { out, cassette } = await recordedSweep();
    appendFileSync(cassette, '{"key":"later","request":{},"reply":{}}\n');
    expect(verifyResults(out, { directory, cassette }).ok).toBe(true);
  });
  it('reports a cassette with one recorded reply changed as CASSETTE_MISMATCH', async () => {
    const { dir, out, cassette } = await recordedSweep();
    const other = join(dir, 'other.jsonl');
    writeFileSync(
      other,
      readFileSync(cassette, 'utf8').replace(/"latencyMs":(\d+)/, (_, n) => `"latencyMs":${Number(n) + 1}`),
    );
    const codes = verifyResults(out, { directory, cassette: other }).problems.map((p) => p.code);
    expect(codes).toEqual(['CASSETTE_MISMATCH']);
  });
});

describe('a signed rule-based sweep', () => {
  it('signs no cassette, so a cassette given to verify is CASSETTE_MISMATCH', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'witness-transcript-llm-'));
    const out = join(dir, 'r.jsonl');
    await runExperiment({ experiment: parseExperiment({ ...preset('smoke'), runs: 1 }), out, sign: { key } });
    const result = verifyResults(out, { directory, cassette: out });
    expect(result.problems.map((p) => p.code)).toEqual(['CASSETTE_MISMATCH']);
    expect(result.problems[0]?.message).toMatch(/signs a cassette/);
  });
});

describe('a signed LLM sweep killed before its first checkpoint, with a line forged', () => {
  it('drops the lines no checkpoint signed and plays their runs again: a model is not reproducible', async () => {
    const server = await startScriptedServer();
    servers.push(server);
    const dir = mkdtempSync(join(tmpdir(), 'witness-transcript-llm-'));
    const experiment = parseExperiment({
      name: 'llm-killed',
      seed: 5,
      runs: 3,
      grid: { agents: 'llm', model: 'scripted', honest: 3, rounds: 3 },
    });
    const out = join(dir, 'r.jsonl');
    const sweep = async (onProgress?: () => void) => {
      const agents = await openModelAgents(experiment, { endpoints: [server.url] });
      try {
        return await runExperiment({ experiment, out, agents, sign: { key, checkpointMs: 3_600_000 }, onProgress });
      } finally {
        await agents.close();
      }
    };
    // The checkpoint signed when the file opened (0 lines): what a sweep killed before its next one leaves.
    let opened = '';
    await sweep(() => (opened ||= readFileSync(checkpointPath(out), 'utf8')));
    writeFileSync(checkpointPath(out), opened);
    const lines = readFileSync(out, 'utf8').split('\n').filter(Boolean);
    // Line 2's outcome edited, its digest and every later prev recomputed: no key needed.
    let head: string | null = null;
    const forged = lines.map((raw, i) => {
      const split = splitSignedLine(raw, JSON.parse(raw)) as { content: string; receipt: Record<string, unknown> };
      const content =
        i === 1
          ? split.content.replace(/"outcome":"(\w+)"/, (_, o) => `"outcome":"${o === 'valid' ? 'none' : 'valid'}"`)
          : split.content;
      const receipt = {
        ...split.receipt,
        content_sha256: sha256Hex(content),
        prev: i === 0 ? split.receipt.prev : head,
      };
      head = receiptDigest(canonicalize(receipt));
      return { content, line: signedLine(content, canonicalize(receipt)) };
    });
    expect(forged[1]?.content).not.toBe(splitSignedLine(lines[1]!, JSON.parse(lines[1]!))?.content);
    writeFileSync(out, forged.map((f) => `${f.line}\n`).join(''));
    const before = server.requests.length;
    const summary = await sweep();
    expect(summary).toMatchObject({
      skipped: 0,
      ran: 3,
      pastCheckpoint: { lines: 3, firstLine: 1, kept: 0, forged: 0, rerun: 3, pending: 0 },
    });
    expect(server.requests.length).toBeGreaterThan(before);
    const final = readFileSync(out, 'utf8');
    expect(final).not.toContain(forged[1]!.content.slice(0, -1));
    expect(verifyResults(out, { directory })).toMatchObject({ ok: true, runs: 3, problems: [] });
  });
});
