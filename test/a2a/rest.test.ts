// The child agent's HTTP+JSON binding (A2A v1.0 §11) beside JSON-RPC: the same handler,
// the same tasks, the same attested artifacts; its front's checks in the binding's error
// shape (rest-front.ts). The real @a2a-js/sdk client choosing HTTP+JSON, and raw HTTP.
import { randomUUID } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { Task, type Task as TaskType, TaskState } from '@a2a-js/sdk';
import { ClientFactory, ClientFactoryOptions } from '@a2a-js/sdk/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyTaskArtifacts } from '../../src/a2a/answer.js';
import { JSONRPC_PATH } from '../../src/a2a/card.js';
import { DELEGATION_KEY } from '../../src/a2a/metadata.js';
import { dagDelegation, expectation, startWorld, userMessage, type World } from './helpers.js';

let world: World;
beforeAll(async () => {
  world = await startWorld();
});
afterAll(() => world?.close());

async function rest(path: string, init: RequestInit = {}, version: string | null = '1.0') {
  const headers: Record<string, string> = { 'Content-Type': 'application/json', ...(init.headers as object) };
  if (version) headers['A2A-Version'] = version;
  const response = await fetch(`${world.agent.url}${path}`, { ...init, headers });
  const text = await response.text();
  return { status: response.status, text, json: text ? JSON.parse(text) : undefined };
}

const sendBody = (text: string, metadata: Record<string, unknown> = {}) =>
  JSON.stringify({ message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text }], metadata } });

describe('the HTTP+JSON binding', () => {
  it('is on the signed card beside JSON-RPC', () => {
    expect(world.agent.card.supportedInterfaces).toContainEqual({
      url: world.agent.url,
      protocolBinding: 'HTTP+JSON',
      protocolVersion: '1.0',
    });
  });

  it('answers the @a2a-js/sdk client over HTTP+JSON with a dag task whose artifact verifies', async () => {
    const factory = new ClientFactory(
      ClientFactoryOptions.createFrom(ClientFactoryOptions.default, { preferredTransports: ['HTTP+JSON'] }),
    );
    const client = await factory.createFromUrl(world.agent.url);
    const delegation = await dagDelegation(world, 'Inspect lot 40.');
    const task = (await client.sendMessage({
      tenant: '',
      message: userMessage('Inspect lot 40.', { [DELEGATION_KEY]: delegation }),
      configuration: undefined,
      metadata: undefined,
    })) as TaskType;
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    const check = await verifyTaskArtifacts(Task.toJSON(task), expectation(world, delegation), {
      directory: world.directory,
    });
    expect(check.problems).toEqual([]);
    const again = await client.getTask({ tenant: '', id: task.id, historyLength: 0 });
    expect(again.artifacts).toEqual(task.artifacts);
  });

  it('streams a task over HTTP+JSON (message:stream): the task, WORKING, the artifact chunk by chunk, COMPLETED', async () => {
    const factory = new ClientFactory(
      ClientFactoryOptions.createFrom(ClientFactoryOptions.default, { preferredTransports: ['HTTP+JSON'] }),
    );
    const client = await factory.createFromUrl(world.agent.url);
    const seen: string[] = [];
    for await (const event of client.sendMessageStream({
      tenant: '',
      message: userMessage('Inspect lot 42.', {}),
      configuration: undefined,
      metadata: undefined,
    }))
      seen.push(event.payload?.$case ?? '?');
    // The policy answer is four lines: one chunk each.
    expect(seen).toEqual(['task', 'statusUpdate', ...Array(4).fill('artifactUpdate'), 'statusUpdate']);
  });

  it('shares its tasks with JSON-RPC: a task sent over one is read over the other', async () => {
    const sent = await rest('/message:send', { method: 'POST', body: sendBody('Inspect lot 41.') });
    expect(sent.status).toBe(200);
    const id = sent.json.task.id as string;
    const rpc = await fetch(`${world.agent.url}${JSONRPC_PATH}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'A2A-Version': '1.0' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'GetTask', params: { id } }),
    });
    const viaRpc = ((await rpc.json()) as { result: { artifacts: unknown } }).result;
    expect(viaRpc.artifacts).toEqual(sent.json.task.artifacts);
    const listed = await rest(`/tasks?contextId=${sent.json.task.contextId}&includeArtifacts=true`, { method: 'GET' });
    expect(listed.json.tasks.map((t: { id: string }) => t.id)).toEqual([id]);
    const cancel = await rest(`/tasks/${id}:cancel`, { method: 'POST', body: '{}' });
    expect([cancel.status, cancel.json.error.status]).toEqual([400, 'FAILED_PRECONDITION']);
  });

  it('takes the version as the A2A-Version query parameter when no header is sent', async () => {
    const reply = await rest('/tasks/no-such-task?A2A-Version=1.0', { method: 'GET' }, null);
    expect([reply.status, reply.json.error.status]).toEqual([404, 'NOT_FOUND']);
  });

  const refusals: Array<[string, string, RequestInit, number, RegExp]> = [
    ['a body that is not JSON', '/message:send', { method: 'POST', body: '{"message": ' }, 400, /not valid JSON/],
    [
      'a message without a role',
      '/message:send',
      { method: 'POST', body: JSON.stringify({ message: { messageId: 'm', parts: [{ text: 'x' }] } }) },
      400,
      /message\.role is required/,
    ],
    [
      'a message without parts',
      '/message:send',
      { method: 'POST', body: JSON.stringify({ message: { messageId: 'm', role: 'ROLE_USER', parts: [] } }) },
      400,
      /at least one part/,
    ],
    ['a negative historyLength', '/tasks/x?historyLength=-1', { method: 'GET' }, 400, /historyLength/],
    [
      'a statusTimestampAfter that is not a timestamp',
      '/tasks?statusTimestampAfter=-1',
      { method: 'GET' },
      400,
      /ISO 8601/,
    ],
    ['a route of the binding the SDK does not serve', '/tasks/x/y', { method: 'GET' }, 404, /Not found/],
  ];
  for (const [what, path, init, status, message] of refusals) {
    it(`refuses ${what} with ${status} in the binding's error shape, never quoting the request`, async () => {
      const reply = await rest(path, init);
      expect(reply.status).toBe(status);
      expect(reply.json.error).toMatchObject({ code: status, status: expect.any(String), message });
      expect(reply.text).not.toMatch(/"message": |at .*\.js/);
    });
  }

  it('refuses a body over the limit with a 413 naming it', async () => {
    const reply = await rest('/message:send', { method: 'POST', body: sendBody('x'.repeat(1_100_000)) });
    expect(reply.status).toBe(413);
    expect(reply.json.error.message).toMatch(/the limit is 1048576 bytes.*--max-request-bytes/);
  });

  it('refuses a foreign Host before any route, in the binding shape', async () => {
    const { status, body } = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const url = new URL(`${world.agent.url}/tasks`);
      const req = httpRequest(
        {
          host: url.hostname,
          port: url.port,
          path: url.pathname,
          headers: { Host: 'evil.example', 'A2A-Version': '1.0' },
        },
        (res) => {
          let text = '';
          res.on('data', (d: Buffer) => {
            text += d.toString();
          });
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
        },
      );
      req.on('error', reject);
      req.end();
    });
    expect(status).toBe(403);
    expect(JSON.parse(body)).toMatchObject({ error: { code: 403, status: 'PERMISSION_DENIED' } });
  });
});
