/**
 * The library example in docs/examples/llm-sweep.ts, shown in docs/llm.md, runs as a
 * user would run it (its own process, imports of `agent-witness/*` pointed at src/)
 * against the scripted OpenAI-compatible server.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { addKey, emptyDirectory, writeDirectoryFile } from '../../src/attest/key-directory.js';
import { newSigningKey, publicJwk, writeKeyFile } from '../../src/attest/keys.js';
import { type ScriptedServer, startScriptedServer } from '../llm/scripted-server.js';

const root = join(import.meta.dirname, '..', '..');
const example = readFileSync(join(root, 'docs/examples/llm-sweep.ts'), 'utf8');
const servers: ScriptedServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

/** Runs the example in a fresh folder; imports of the package go to the source. */
async function runExample(endpoint: string): Promise<{ code: number | null; out: string; err: string; dir: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'witness-example-'));
  // The key the example signs with, and the directory that trusts it (witness keys new / keys add).
  const key = newSigningKey('lab');
  writeKeyFile(join(dir, 'lab.key.json'), key);
  writeDirectoryFile(
    join(dir, 'trusted.json'),
    addKey(emptyDirectory(), publicJwk(key), { notBefore: Date.now() - 60_000, notAfter: Date.now() + 86_400_000 }),
  );
  const source = example.replace(/'agent-witness\/(\w+)'/g, (_, part: string) =>
    JSON.stringify(join(root, 'src', part, 'index.ts')),
  );
  writeFileSync(join(dir, 'example.mts'), source);
  // tsx from this repository: the example's folder has no node_modules.
  const tsx = pathToFileURL(join(root, 'node_modules/tsx/dist/loader.mjs')).href;
  const child = spawn(process.execPath, ['--import', tsx, 'example.mts'], {
    cwd: dir,
    env: { ...process.env, WITNESS_ENDPOINT: endpoint },
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (err += d));
  const [code] = await once(child, 'exit');
  return { code, out, err, dir };
}

describe('docs/examples/llm-sweep.ts', () => {
  it('is the example docs/llm.md shows, line for line', () => {
    const docs = readFileSync(join(root, 'docs/llm.md'), 'utf8');
    // Everything after the file's header comment.
    const lines = example.split('\n');
    const body = lines
      .slice(lines.findIndex((l) => !l.startsWith('//')))
      .join('\n')
      .trim();
    expect(docs).toContain(body);
  });

  it('records a signed LLM sweep, replays it with the same content line for line, and both verify with the cassette', async () => {
    const server = await startScriptedServer();
    servers.push(server);
    const r = await runExample(server.url);
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    expect(r.out).toContain('4 runs played, 0 already in qwen-small.jsonl');
    const recorded = readFileSync(join(r.dir, 'qwen-small.jsonl'), 'utf8');
    expect(recorded.split('\n').filter(Boolean)).toHaveLength(4);
    expect(recorded).toContain('"model":"Qwen/Qwen3-14B"');
    // Signed with no times in the lines: the replay is byte-identical, receipts included.
    expect(readFileSync(join(r.dir, 'qwen-small.replay.jsonl'), 'utf8')).toBe(recorded);
    expect(r.out).toContain('qwen-small.jsonl: valid');
    expect(r.out).toContain('qwen-small.replay.jsonl: valid');
    const cassettes = ['qwen-small.jsonl', 'qwen-small.replay.jsonl'].map(
      (f) => JSON.parse(readFileSync(join(r.dir, `${f}.checkpoint.json`), 'utf8')).checkpoints[0].cassette,
    );
    expect(cassettes.map((c) => c.role)).toEqual(['recorded', 'replayed']);
    expect(cassettes[1].sha256).toBe(cassettes[0].sha256);
    expect(server.requests.length).toBeGreaterThan(0);
  });
});
