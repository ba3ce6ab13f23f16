// The child agent's JSON-RPC under A2A v1.0 as JSON-RPC 2.0 and the spec say, where
// @a2a-js/sdk 1.3.0's handler alone answers otherwise (jsonrpc-front.ts, jsonrpc-check.ts):
// invalid requests are -32600, notifications get no answer and do not run, the version
// may be a query parameter, messages need a role and parts, bodies have a JSON 413.
// Real servers on loopback, raw HTTP as a client would send it.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ChildAgent, policyBackend, serveChildAgent } from '../../src/a2a/agent.js';
import { JSONRPC_PATH } from '../../src/a2a/card.js';
import { verifyTaskArtifacts } from '../../src/a2a/answer.js';
import { DELEGATION_KEY } from '../../src/a2a/metadata.js';
import { createReleaseSigner, receiptDigest } from '../../src/attest/index.js';
import { expectation, startWorld, type World } from './helpers.js';

let world: World;
let counted: ChildAgent;
let answered = 0;
beforeAll(async () => {
  world = await startWorld({ cosignTimeoutMs: 500 });
  const counting = {
    name: 'counting',
    answer: (task: string, evidence: Parameters<typeof policyBackend.answer>[1]) => {
      answered++;
      return policyBackend.answer(task, evidence);
    },
  };
  counted = await serveChildAgent({ key: world.child, toolUrl: world.tool.url, backend: counting });
});
afterAll(async () => {
  await counted?.close();
  await world?.close();
});

interface Reply {
  status: number;
  type: string | null;
  text: string;
  json: { id?: unknown; result?: Record<string, unknown>; error?: { code: number; message: string } };
}

async function post(
  body: unknown,
  options: { url?: string; version?: string | null; raw?: boolean } = {},
): Promise<Reply> {
  const headers: Record<string, string> = { 'Content-Type': 'application/json' };
  if (options.version !== null) headers['A2A-Version'] = options.version ?? '1.0';
  const response = await fetch(options.url ?? `${world.agent.url}${JSONRPC_PATH}`, {
    method: 'POST',
    headers,
    body: options.raw ? (body as string) : JSON.stringify(body),
  });
  const text = await response.text();
  return {
    status: response.status,
    type: response.headers.get('content-type'),
    text,
    json: text ? JSON.parse(text) : {},
  };
}

const message = (text: string, extra: Record<string, unknown> = {}) => ({
  messageId: randomUUID(),
  role: 'ROLE_USER',
  parts: [{ text }],
  ...extra,
});
const send = (params: unknown, id: unknown = 1) => ({ jsonrpc: '2.0', id, method: 'SendMessage', params });

describe('invalid JSON-RPC requests under A2A-Version 1.0', () => {
  const cases: Array<[string, unknown, unknown]> = [
    ['a jsonrpc other than "2.0"', { jsonrpc: 'aaa', method: 'SendMessage', params: {} }, null],
    ['a jsonrpc of "1.0" with an id', { jsonrpc: '1.0', id: 5, method: 'SendMessage', params: {} }, 5],
    ['no method', { jsonrpc: '2.0', id: 6, params: {} }, 6],
    ['an object as id', { jsonrpc: '2.0', id: { bad: 'type' }, method: 'SendMessage', params: {} }, null],
    ['an empty batch', [], null],
    ['a batch of one valid request', [send({ message: message('x') })], null],
    ['a string as params', { jsonrpc: '2.0', id: 7, method: 'GetTask', params: 'x' }, 7],
  ];
  for (const [what, body, id] of cases) {
    it(`answers ${what} with -32600 Invalid Request (HTTP 200, JSON)`, async () => {
      const reply = await post(body);
      expect([reply.status, reply.type]).toEqual([200, 'application/json']);
      expect(reply.json).toMatchObject({ jsonrpc: '2.0', id, error: { code: -32600 } });
    });
  }

  it('answers a body that is not JSON with -32700 and does not echo the body', async () => {
    const reply = await post('{"jsonrpc": "2.0", "method": "SendMessage", "params": {"secret-looking": true', {
      raw: true,
    });
    expect(reply.json).toMatchObject({ id: null, error: { code: -32700 } });
    expect(reply.text).not.toContain('secret-looking');
  });
});

describe('notifications', () => {
  it('answers a request without id with 204 and no body, and does not run it', async () => {
    const before = answered;
    const reply = await post(
      { jsonrpc: '2.0', method: 'SendMessage', params: { message: message('Run me?') } },
      { url: `${counted.url}${JSONRPC_PATH}` },
    );
    expect([reply.status, reply.text]).toEqual([204, '']);
    const ran = await post(send({ message: message('Run me.') }), { url: `${counted.url}${JSONRPC_PATH}` });
    expect(ran.json.result?.task).toMatchObject({ status: { state: 'TASK_STATE_COMPLETED' } });
    expect(answered).toBe(before + 1); // only the request with an id ran
  });
});

describe('the A2A-Version query parameter', () => {
  it('selects v1.0 when sent as ?A2A-Version=1.0 without the header: GetTask is known (task not found, -32001)', async () => {
    const reply = await post(
      { jsonrpc: '2.0', id: 3, method: 'GetTask', params: { id: 'no-such-task' } },
      { url: `${world.agent.url}${JSONRPC_PATH}?A2A-Version=1.0`, version: null },
    );
    expect(reply.json).toMatchObject({ id: 3, error: { code: -32001 } });
  });

  it('without header or parameter means 0.3, where GetTask is unknown (-32601)', async () => {
    const reply = await post(
      { jsonrpc: '2.0', id: 4, method: 'GetTask', params: { id: 'no-such-task' } },
      { version: null },
    );
    expect(reply.json).toMatchObject({ id: 4, error: { code: -32601 } });
  });
});

describe('message validation', () => {
  it('refuses a message with empty parts (-32602)', async () => {
    const reply = await post(send({ message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [] } }, 8));
    expect(reply.json).toMatchObject({
      id: 8,
      error: { code: -32602, message: expect.stringMatching(/message\.parts/) },
    });
  });

  it('refuses a message without a role (-32602)', async () => {
    const reply = await post(send({ message: { messageId: randomUUID(), parts: [{ text: 'x' }] } }, 9));
    expect(reply.json).toMatchObject({
      id: 9,
      error: { code: -32602, message: expect.stringMatching(/message\.role/) },
    });
  });

  it('refuses a v0.3 message/send without parts too (-32602)', async () => {
    const reply = await post(
      {
        jsonrpc: '2.0',
        id: 10,
        method: 'message/send',
        params: { message: { kind: 'message', messageId: randomUUID(), role: 'user', parts: [] } },
      },
      { version: '0.3' },
    );
    expect(reply.json).toMatchObject({ id: 10, error: { code: -32602 } });
  });
});

describe('ListTasks and GetTask parameters', () => {
  it('refuses a negative historyLength (-32602)', async () => {
    expect(
      (await post({ jsonrpc: '2.0', id: 11, method: 'ListTasks', params: { historyLength: -1 } })).json.error?.code,
    ).toBe(-32602);
    expect(
      (await post({ jsonrpc: '2.0', id: 12, method: 'GetTask', params: { id: 'x', historyLength: -1 } })).json.error
        ?.code,
    ).toBe(-32602);
  });

  it('refuses a statusTimestampAfter that is not a timestamp (-32602)', async () => {
    expect(
      (await post({ jsonrpc: '2.0', id: 13, method: 'ListTasks', params: { statusTimestampAfter: '-1' } })).json.error
        ?.code,
    ).toBe(-32602);
  });

  it('gives an empty page a pageSize of 0', async () => {
    const reply = await post({
      jsonrpc: '2.0',
      id: 14,
      method: 'ListTasks',
      params: { contextId: `empty-${randomUUID()}` },
    });
    expect(reply.json.result).toMatchObject({ tasks: [], totalSize: 0, pageSize: 0, nextPageToken: '' });
  });
});

describe('bodies and limits', () => {
  it('releases an attested answer to a 200 KB task with the default limits', async () => {
    const task = 'Inspect this lot. '.repeat(11_500); // ~207 KB
    const reply = await post(send({ message: message(task) }, 15));
    const check = await verifyTaskArtifacts(reply.json.result?.task, expectation(world), {
      directory: world.directory,
    });
    expect(check.problems).toEqual([]);
    expect(check.output).toMatch(/\(207000 bytes\)/);
  });

  it('refuses a body over --max-request-bytes with a JSON 413 naming the limit', async () => {
    const small = await serveChildAgent({ key: world.child, toolUrl: world.tool.url, maxRequestBytes: 4096 });
    try {
      const reply = await post(send({ message: message('x'.repeat(5000)) }), { url: `${small.url}${JSONRPC_PATH}` });
      expect([reply.status, reply.type]).toEqual([413, 'application/json']);
      expect(reply.json.error?.message).toMatch(/the limit is 4096 bytes.*--max-request-bytes/);
    } finally {
      await small.close();
    }
  });

  it('answers other routes and methods with JSON, never an HTML page', async () => {
    const other = await fetch(`${world.agent.url}/nowhere`);
    expect([other.status, other.headers.get('content-type')]).toEqual([404, 'application/json']);
    const get = await fetch(`${world.agent.url}${JSONRPC_PATH}`);
    expect([get.status, get.headers.get('allow'), get.headers.get('content-type')]).toEqual([
      405,
      'POST',
      'application/json',
    ]);
  });
});

describe('stored tasks', () => {
  it('never keep the grant credential a failed dag delegation carried', async () => {
    const task = 'Inspect lot 11.';
    const root = await createReleaseSigner({ key: world.parent, instance: 'parent' }).releaseOutput(Buffer.from(task), {
      construction: 'dag',
    });
    const taskId = randomUUID();
    const token = world.service.grant({
      taskId,
      childDeployer: 'some-other-child',
      parentDigest: receiptDigest(root),
      expiresAt: Date.now() + 60_000,
    });
    const failed = await post(
      send(
        {
          message: message(task, {
            metadata: {
              [DELEGATION_KEY]: {
                task_id: taskId,
                construction: 'dag',
                evidence: { path: [root] },
                cosign_token: token,
              },
            },
          }),
        },
        16,
      ),
    );
    const failedTask = failed.json.result?.task as { id: string; status: { state: string } } | undefined;
    expect(failedTask?.status.state).toBe('TASK_STATE_FAILED');
    const id = failedTask?.id;
    const stored = await post({ jsonrpc: '2.0', id: 17, method: 'GetTask', params: { id } });
    expect(stored.json.result?.id).toBe(id);
    const listed = await post({ jsonrpc: '2.0', id: 18, method: 'ListTasks', params: {} });
    expect(`${stored.text}${listed.text}`).not.toContain(token);
    expect(stored.text).toContain(taskId); // the rest of the delegation is kept
  });
});
