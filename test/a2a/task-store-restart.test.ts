// `witness a2a serve` killed mid-task and started again on the same task store, on a
// SQLite file and on PostgreSQL: a real agent process, a real model server (scripted)
// that holds the second task's answer until the agent is gone, SIGKILL, a restart.
// The task that was running is FAILED with ERROR_KEY code INTERRUPTED; the task that
// completed before the kill still verifies, artifact by artifact.
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyTaskArtifacts } from '../../src/a2a/answer.js';
import { JSONRPC_PATH } from '../../src/a2a/card.js';
import { DELEGATION_KEY, type Delegation, ERROR_KEY } from '../../src/a2a/metadata.js';
import { writeKeyFile } from '../../src/attest/keys.js';
import { MemoryNonceStore } from '../../src/attest/nonce-store.js';
import { freshDatabase } from '../attest/postgres.js';
import { type ScriptedServer, startScriptedServer } from '../llm/scripted-server.js';
import { waitFor, witnessCommand } from '../mailbox/helpers.js';
import { dagDelegation, expectation, startWorld, type World } from './helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'witness-task-restart-'));
let world: World;
let model: ScriptedServer;
let database: Awaited<ReturnType<typeof freshDatabase>>;
beforeAll(async () => {
  world = await startWorld();
  writeKeyFile(join(dir, 'child.key.json'), world.child);
  // Every answer whose task says "slow" is held until the server closes: the agent is killed first.
  model = await startScriptedServer((request) =>
    String(request.body.messages?.[1]?.content).includes('slow')
      ? { delayMs: 600_000 }
      : { content: '{"verdict":"ACCEPT","reason":"all findings within tolerance"}' },
  );
  database = await freshDatabase('a2a_restart');
});
afterAll(async () => {
  await model?.close();
  await world?.close();
  await database?.drop();
  rmSync(dir, { recursive: true, force: true });
});

/** Starts `witness a2a serve` on `store`; resolves with the process and its URL once it is ready. */
async function serve(store: string): Promise<{ proc: ChildProcess; url: string }> {
  const [node, ...args] = witnessCommand();
  const proc = spawn(
    node!,
    [
      ...args,
      'a2a',
      'serve',
      '--key',
      join(dir, 'child.key.json'),
      '--tool',
      world.tool.url,
      '--cosigner',
      `${world.parent.deployer}=${world.cosigner.url}`,
      '--agent',
      'llm',
      '--endpoint',
      model.url,
      '--model',
      'scripted',
      '--task-store',
      store,
      '--json',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let err = '';
  proc.stderr?.on('data', (d: Buffer) => {
    err += d.toString();
  });
  const [line] = (await Promise.race([
    once(proc.stdout!, 'data'),
    once(proc, 'exit').then(() => {
      throw new Error(`witness a2a serve exited before it was ready: ${err}`);
    }),
  ])) as [Buffer];
  return { proc, url: (JSON.parse(line.toString().split('\n')[0]!) as { url: string }).url };
}

async function rpc(url: string, method: string, params: unknown) {
  const response = await fetch(`${url}${JSONRPC_PATH}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'A2A-Version': '1.0' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  return (await response.json()) as { result?: Record<string, unknown>; error?: { message: string } };
}

const sendParams = (text: string, metadata: Record<string, unknown>, returnImmediately: boolean) => ({
  message: { messageId: `m-${Math.random()}`, role: 'ROLE_USER', parts: [{ text }], metadata },
  configuration: { returnImmediately },
});

describe.each([
  ['a SQLite file', () => join(dir, 'tasks.sqlite')],
  ['PostgreSQL', () => database.url],
])('witness a2a serve on %s, killed mid-task and started again', (_kind, store) => {
  it('reports the task that was running as FAILED (INTERRUPTED), and the completed one still verifies', async () => {
    const first = await serve(store());
    let done: Record<string, unknown> | undefined;
    let running: { id: string } | undefined;
    let delegation: Delegation | undefined;
    const requestsBefore = model.requests.length;
    try {
      delegation = await dagDelegation(world, 'Inspect lot 30.');
      done = (
        await rpc(first.url, 'SendMessage', sendParams('Inspect lot 30.', { [DELEGATION_KEY]: delegation }, false))
      ).result?.task as Record<string, unknown> | undefined;
      expect(done).toMatchObject({ status: { state: 'TASK_STATE_COMPLETED' } });
      running = (await rpc(first.url, 'SendMessage', sendParams('Inspect the slow lot 31.', {}, true))).result
        ?.task as { id: string };
      await model.received(requestsBefore + 2); // the second task is in its model call
      // Its WORKING state reaches the store beside the model call, not before it: wait for the store to say so.
      const id = running.id;
      const state = async () =>
        ((await rpc(first.url, 'GetTask', { id })).result as { status?: { state?: string } } | undefined)?.status
          ?.state;
      await waitFor(
        async () => (await state()) === 'TASK_STATE_WORKING',
        20_000,
        () => 'the running task in WORKING',
      );
    } finally {
      first.proc.kill('SIGKILL');
      await once(first.proc, 'exit');
    }

    const second = await serve(store());
    try {
      const interrupted = (await rpc(second.url, 'GetTask', { id: running.id })).result as {
        status: { state: string };
        metadata: Record<string, { code: string }>;
        artifacts?: unknown[];
      };
      expect(interrupted.status.state).toBe('TASK_STATE_FAILED');
      expect(interrupted.metadata[ERROR_KEY]?.code).toBe('INTERRUPTED');
      expect(interrupted.artifacts ?? []).toEqual([]);

      const kept = (await rpc(second.url, 'GetTask', { id: done?.id })).result;
      expect(kept).toEqual(expect.objectContaining({ id: done?.id, artifacts: done?.artifacts }));
      const check = await verifyTaskArtifacts(kept, expectation(world, delegation), {
        directory: world.directory,
        nonceStore: new MemoryNonceStore(),
      });
      expect(check.problems).toEqual([]);
      expect(check.output).toMatch(/verdict ACCEPT/);
    } finally {
      second.proc.kill('SIGTERM');
      await once(second.proc, 'exit');
    }
  });
});
