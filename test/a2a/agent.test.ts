import { randomUUID } from 'node:crypto';
import { AgentCard, Task, type Task as TaskType } from '@a2a-js/sdk';
import { ClientFactory, JsonRpcTransportFactory } from '@a2a-js/sdk/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyTaskArtifacts } from '../../src/a2a/answer.js';
import { artifactBytes } from '../../src/a2a/artifact.js';
import { JSONRPC_PATH } from '../../src/a2a/card.js';
import { DELEGATION_KEY, ERROR_KEY, EVIDENCE_KEY, TIMINGS_KEY } from '../../src/a2a/metadata.js';
import { delegate } from '../../src/a2a/parent.js';
import { MemoryNonceStore } from '../../src/attest/index.js';
import { sha256Hex } from '../../src/core/hash.js';
import { dagDelegation as delegationFor, expectation, startWorld, trust, userMessage, type World } from './helpers.js';
import type { Delegation } from '../../src/a2a/metadata.js';

let world: World;
beforeAll(async () => {
  world = await startWorld();
});
afterAll(() => world.close());

const dagDelegation = (task: string) => delegationFor(world, task);

async function rpc(method: string, params: unknown, version?: string) {
  const headers: Record<string, string> = { 'Content-Type': 'application/json' };
  if (version) headers['A2A-Version'] = version;
  const response = await fetch(`${world.agent.url}${JSONRPC_PATH}`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ jsonrpc: '2.0', id: 7, method, params }),
  });
  return (await response.json()) as { result?: Record<string, unknown>; error?: { code: number; message: string } };
}

/** The one check of a task answering `delegation`: rooted at its task receipt, released by the world's child. */
const verifyDag = (task: unknown, delegation: Delegation) =>
  verifyTaskArtifacts(task, expectation(world, delegation), { directory: world.directory });

describe('the child A2A agent', () => {
  it('answers SendMessage from the @a2a-js/sdk client with a dag result that verifies', async () => {
    const client = await new ClientFactory().createFromUrl(world.agent.url);
    const delegation = await dagDelegation('Inspect lot 7.');
    const result = (await client.sendMessage({
      tenant: '',
      message: userMessage('Inspect lot 7.', { [DELEGATION_KEY]: delegation }),
      configuration: undefined,
      metadata: undefined,
    })) as TaskType;
    const check = await verifyDag(Task.toJSON(result), delegation);
    expect(check.problems).toEqual([]);
    expect(check.output).toMatch(/^Task [0-9a-f]{16} \(14 bytes\)/);
    expect(check.paths[0]?.at(-1)?.signatures).toHaveLength(2);
    expect(Object.keys(result.metadata?.[TIMINGS_KEY] as object).sort()).toEqual([
      'cosign_ms',
      'cpu_ms',
      'model_ms',
      'sign_ms',
      'tool_ms',
    ]);
  });

  it('answers the @a2a-js/sdk client speaking A2A 0.3 (message/send on the wire) with a dag result that verifies', async () => {
    const methods: string[] = [];
    const recordingFetch: typeof fetch = (input, init) => {
      methods.push(String(JSON.parse(String(init?.body ?? '{}')).method));
      return fetch(input, init);
    };
    const factory = new ClientFactory({
      transports: [new JsonRpcTransportFactory({ legacyCompat: { enabled: true }, fetchImpl: recordingFetch })],
    });
    // The client's view of the card: only the v0.3 interface, so the SDK picks its legacy transport.
    const legacyOnly = AgentCard.fromJSON({
      ...world.agent.card,
      supportedInterfaces: [
        { url: `${world.agent.url}${JSONRPC_PATH}`, protocolBinding: 'JSONRPC', protocolVersion: '0.3' },
      ],
    });
    const client = await factory.createFromAgentCard(legacyOnly);
    const delegation = await dagDelegation('Inspect lot 6.');
    const result = (await client.sendMessage({
      tenant: '',
      message: userMessage('Inspect lot 6.', { [DELEGATION_KEY]: delegation }),
      configuration: undefined,
      metadata: undefined,
    })) as TaskType;
    expect(methods).toEqual(['message/send']);
    expect((await verifyDag(Task.toJSON(result), delegation)).problems).toEqual([]);
  });

  it('answers raw JSON-RPC SendMessage (A2A-Version 1.0) with a completed task whose artifact carries the evidence', async () => {
    const delegation = await dagDelegation('Inspect lot 8.');
    const body = await rpc(
      'SendMessage',
      {
        message: {
          messageId: randomUUID(),
          role: 'ROLE_USER',
          parts: [{ text: 'Inspect lot 8.' }],
          metadata: { [DELEGATION_KEY]: delegation },
        },
      },
      '1.0',
    );
    const task = body.result?.task as {
      status: { state: string };
      artifacts: Array<{ parts: Array<{ text: string }>; metadata: Record<string, unknown> }>;
    };
    expect(task.status.state).toBe('TASK_STATE_COMPLETED');
    expect(task.artifacts).toHaveLength(1);
    expect(task.artifacts[0]?.metadata[EVIDENCE_KEY]).toBeDefined();
    expect((await verifyDag(task, delegation)).ok).toBe(true);
  });

  it('answers raw JSON-RPC message/send (A2A 0.3, no version header) through the SDK compat layer with a task', async () => {
    const delegation = await dagDelegation('Inspect lot 9.');
    const body = await rpc('message/send', {
      message: {
        kind: 'message',
        messageId: randomUUID(),
        role: 'user',
        parts: [{ kind: 'text', text: 'Inspect lot 9.' }],
        metadata: { [DELEGATION_KEY]: delegation },
      },
      configuration: { blocking: true },
    });
    const task = body.result as { kind: string; status: { state: string }; artifacts: Array<{ parts: unknown[] }> };
    expect(task.kind).toBe('task');
    expect(task.status.state).toBe('completed');
    expect(task.artifacts[0]?.parts).toEqual([expect.objectContaining({ kind: 'text' })]);
  });

  it('answers message/send with an explicit A2A-Version 0.3 header too', async () => {
    const body = await rpc(
      'message/send',
      {
        message: {
          kind: 'message',
          messageId: randomUUID(),
          role: 'user',
          parts: [{ kind: 'text', text: 'Plain task.' }],
        },
        configuration: { blocking: true },
      },
      '0.3',
    );
    expect((body.result as { status: { state: string } }).status.state).toBe('completed');
  });

  it('does not know message/send under A2A-Version 1.0 (method not found)', async () => {
    const body = await rpc(
      'message/send',
      { message: { kind: 'message', messageId: randomUUID(), role: 'user', parts: [{ kind: 'text', text: 'x' }] } },
      '1.0',
    );
    expect(body.error?.code).toBe(-32601);
  });

  it('answers a body that is not JSON with a JSON-RPC parse error', async () => {
    const response = await fetch(`${world.agent.url}${JSONRPC_PATH}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'A2A-Version': '1.0' },
      body: '{"jsonrpc": "2.0", ',
    });
    expect(((await response.json()) as { error: { code: number } }).error.code).toBe(-32700);
  });

  it('answers a SendMessage without a message with a JSON-RPC error', async () => {
    const body = await rpc('SendMessage', { metadata: {} }, '1.0');
    expect(body.error?.code).toBeLessThan(0);
    expect(body.error?.message.length).toBeGreaterThan(5);
  });

  it('fails the task, releasing nothing, when the delegation metadata is malformed', async () => {
    const body = await rpc(
      'SendMessage',
      {
        message: {
          messageId: randomUUID(),
          role: 'ROLE_USER',
          parts: [{ text: 'x' }],
          metadata: { [DELEGATION_KEY]: { task_id: 'a', construction: 'dag' } },
        },
      },
      '1.0',
    );
    const task = body.result?.task as {
      status: { state: string };
      metadata: Record<string, { code: string; message: string }>;
    };
    expect(task.status.state).toBe('TASK_STATE_FAILED');
    expect(task.metadata[ERROR_KEY]?.code).toBe('INVALID_INPUT');
    expect(task.metadata[ERROR_KEY]?.message).toMatch(/evidence/);
  });

  it('fails the task when the parent task evidence is not a receipt', async () => {
    const body = await rpc(
      'SendMessage',
      {
        message: {
          messageId: randomUUID(),
          role: 'ROLE_USER',
          parts: [{ text: 'x' }],
          metadata: { [DELEGATION_KEY]: { task_id: 'b', construction: 'chain', evidence: { path: [{ v: 1 }] } } },
        },
      },
      '1.0',
    );
    const task = body.result?.task as { status: { state: string }; metadata: Record<string, { message: string }> };
    expect(task.status.state).toBe('TASK_STATE_FAILED');
    expect(task.metadata[ERROR_KEY]?.message).toMatch(/MALFORMED/);
  });
});

describe('a parent delegation', () => {
  it.each(['none', 'chain', 'dag'] as const)(
    'under %s returns a result whose evidence the parent verified',
    async (condition) => {
      const result = await delegate(world.agent.url, 'Inspect lot 10.', condition, {
        key: world.parent,
        directory: world.directory,
        nonceStore: new MemoryNonceStore(),
        cosigner: world.service,
      });
      expect(result.verdict).toEqual({ ok: true, reasons: [] });
      expect(result.evidence.path).toHaveLength(condition === 'none' ? 1 : 2);
      // The one artifact, as recorded, is what the leaf receipt covers.
      const [artifact] = result.artifacts;
      expect(result.artifacts).toHaveLength(1);
      const bytes = artifactBytes(
        { taskId: artifact!.task_id, contextId: artifact!.context_id },
        { artifactId: artifact!.artifact_id, parts: artifact!.parts },
      );
      expect(sha256Hex(bytes)).toBe(result.evidence.path.at(-1)?.output_sha256);
      expect(result.output_text).toMatch(/^Task [0-9a-f]{16} \(15 bytes\)/);
    },
  );

  it('refuses a child whose card is not signed by a key the parent trusts', async () => {
    const { directory } = trust([world.parent]);
    await expect(delegate(world.agent.url, 'x', 'none', { key: world.parent, directory })).rejects.toThrow(
      /CARD_UNKNOWN_KEY/,
    );
  });
});
