import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openCassetteRecorder, ReplayBackend } from '../../src/llm/cassette.js';
import { OpenAiCompatibleBackend } from '../../src/llm/openai-compatible.js';
import type { ChatCallKey, ChatRequest } from '../../src/llm/types.js';
import { type ScriptedServer, startScriptedServer } from './scripted-server.js';

const REQUEST: ChatRequest = {
  messages: [{ role: 'user', content: 'Vote.' }],
  schema: { type: 'object' },
  schemaName: 'vote_honest',
  temperature: 0.3,
  maxTokens: 200,
};
const key = (attempt: number): ChatCallKey => ({ run: 'r-1', agent: 'agent_0', round: 1, kind: 'vote', attempt });

const servers: ScriptedServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function recorded(): Promise<{ path: string; server: ScriptedServer }> {
  const server = await startScriptedServer((r) => ({
    content: `{"decision":"${r.index === 0 ? 'stop' : 'continue'}"}`,
  }));
  servers.push(server);
  const path = join(mkdtempSync(join(tmpdir(), 'witness-cassette-')), 'c.jsonl');
  const recorder = openCassetteRecorder(path, { experiment: { name: 'x' } });
  const backend = recorder.wrap(new OpenAiCompatibleBackend({ endpoints: [server.url], model: 'm' }));
  await backend.complete(REQUEST, { key: key(1) });
  await backend.complete(REQUEST, { key: key(2) });
  await backend.close();
  recorder.close();
  return { path, server };
}

describe('cassettes', () => {
  it('replay each call by its key with the recorded text, usage, latency and endpoint', async () => {
    const { path, server } = await recorded();
    const replay = new ReplayBackend(path);
    const second = await replay.complete(REQUEST, { key: key(2) });
    const first = await replay.complete(REQUEST, { key: key(1) });
    expect([first.content, second.content]).toEqual(['{"decision":"stop"}', '{"decision":"continue"}']);
    const line = JSON.parse(readFileSync(path, 'utf8').split('\n')[1]!);
    expect(first).toEqual(line.reply);
    expect(first.endpoint).toBe(server.url);
    expect(replay.meta).toEqual({ experiment: { name: 'x' } });
  });

  it('name a call the recording lacks', async () => {
    const { path } = await recorded();
    await expect(new ReplayBackend(path).complete(REQUEST, { key: key(3) })).rejects.toThrow(
      /has no reply for call r-1\/agent_0\/r1\/vote\/3/,
    );
  });

  it('refuse a call whose prompt or sampling changed since the recording', async () => {
    const { path } = await recorded();
    const replay = new ReplayBackend(path);
    await expect(
      replay.complete({ ...REQUEST, messages: [{ role: 'user', content: 'Vote!' }] }, { key: key(1) }),
    ).rejects.toThrow(/differs from the recording .*the prompt text/);
    await expect(replay.complete({ ...REQUEST, temperature: 0.9 }, { key: key(1) })).rejects.toThrow(
      /sampling settings/,
    );
  });

  it('refuse a file that is not a cassette', () => {
    const path = join(mkdtempSync(join(tmpdir(), 'witness-cassette-')), 'results.jsonl');
    writeFileSync(path, '{"id":"r-1"}\n');
    expect(() => new ReplayBackend(path)).toThrow(/is not a Witness cassette/);
  });
});

describe('several endpoints', () => {
  it('move retries to a healthy endpoint when one keeps failing', async () => {
    const down = await startScriptedServer(() => ({ status: 503 }));
    const up = await startScriptedServer(() => ({ content: '{"decision":"stop"}' }));
    servers.push(down, up);
    const backend = new OpenAiCompatibleBackend({
      endpoints: [down.url, up.url],
      model: 'm',
      backoffMs: 5,
      maxBackoffMs: 10,
      maxRetries: 3,
    });
    const replies = await Promise.all(
      Array.from({ length: 12 }, (_, i) => backend.complete(REQUEST, { key: key(i + 1) })),
    );
    expect(replies.every((r) => r.endpoint === up.url)).toBe(true);
    expect(down.requests.length).toBeGreaterThan(0);
    expect(replies.some((r) => r.retries > 0)).toBe(true);
  });
});
