// The child's task lifecycle (executor.ts, handler.ts): SUBMITTED → WORKING → COMPLETED
// with one attested artifact; returnImmediately; SendStreamingMessage (the artifact chunk by
// chunk, with chunk receipts) and SubscribeToTask;
// CancelTask of a running task (no artifact released after it); one message per task;
// the parent following a running task (follow.ts).
// Real servers on loopback, the real @a2a-js/sdk client and raw JSON-RPC; the backend
// that answers is held open by the test, so a task is running exactly while it waits.
import { randomUUID } from 'node:crypto';
import { AgentCard, Task, TaskArtifactUpdateEvent, TaskState } from '@a2a-js/sdk';
import { type Client, ClientFactory, JsonRpcTransportFactory } from '@a2a-js/sdk/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AgentBackend, type ChildAgent, policyBackend, serveChildAgent } from '../../src/a2a/agent.js';
import { verifyTaskArtifacts } from '../../src/a2a/answer.js';
import { JSONRPC_PATH } from '../../src/a2a/card.js';
import { followAnswer } from '../../src/a2a/follow.js';
import { DELEGATION_KEY, ERROR_KEY } from '../../src/a2a/metadata.js';
import { type ArtifactUpdateJson, CHUNK_KEY, readArtifactUpdate, recordArtifactUpdate } from '../../src/a2a/stream.js';
import { StreamRecorder, verifyStream } from '../../src/attest/stream/index.js';
import { dagDelegation, expectation, startWorld, userMessage, type World } from './helpers.js';

/** A backend whose every answer waits until the test lets it go. */
function heldBackend() {
  const calls: Array<{ task: string; release: () => void }> = [];
  const waiting: Array<(call: { task: string; release: () => void }) => void> = [];
  const backend: AgentBackend = {
    name: 'held',
    answer: (task, evidence) =>
      new Promise<string>((resolve) => {
        const call = { task, release: () => resolve(policyBackend.answer(task, evidence) as string) };
        calls.push(call);
        waiting.shift()?.(call);
      }),
  };
  /** The next call the backend receives (one already received and not yet taken counts). */
  let taken = 0;
  const next = () =>
    new Promise<{ task: string; release: () => void }>((resolve) => {
      const call = calls[taken];
      taken++;
      if (call) resolve(call);
      else waiting.push(resolve);
    });
  return { backend, next };
}

let world: World;
let held: ReturnType<typeof heldBackend>;
let agent: ChildAgent;
let client: Client;
beforeAll(async () => {
  world = await startWorld();
  held = heldBackend();
  agent = await serveChildAgent({
    key: world.child,
    toolUrl: world.tool.url,
    cosigners: { [world.parent.deployer]: world.cosigner.url },
    backend: held.backend,
  });
  client = await new ClientFactory().createFromUrl(agent.url);
});
afterAll(async () => {
  await agent?.close();
  await world?.close();
});

const send = (text: string, returnImmediately: boolean, metadata: Record<string, unknown> = {}) =>
  client.sendMessage({
    tenant: '',
    message: userMessage(text, metadata),
    configuration: {
      acceptedOutputModes: [],
      taskPushNotificationConfig: undefined,
      historyLength: undefined,
      returnImmediately,
    },
    metadata: undefined,
  }) as Promise<Task>;

async function rpc(method: string, params: unknown) {
  const response = await fetch(`${agent.url}${JSONRPC_PATH}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'A2A-Version': '1.0' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  return (await response.json()) as { result?: Record<string, unknown>; error?: { code: number; message: string } };
}

describe('a task of the child agent', () => {
  it('with returnImmediately is answered SUBMITTED, then followed to COMPLETED with an artifact that verifies', async () => {
    const answered = await send('Inspect lot 20.', true);
    expect(answered.status?.state).toBe(TaskState.TASK_STATE_SUBMITTED);
    (await held.next()).release();
    const final = (await followAnswer({ client, card: agent.card }, answered)) as Task;
    expect(final.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    const check = await verifyTaskArtifacts(Task.toJSON(final), expectation(world), { directory: world.directory });
    expect(check.problems).toEqual([]);
    expect(check.output).toMatch(/^Task [0-9a-f]{16} \(15 bytes\)/);
  });

  it('is followed while it runs with SubscribeToTask, then read whole with GetTask (follow.ts)', async () => {
    const methods: string[] = [];
    let subscribed: () => void = () => {};
    const subscribing = new Promise<void>((resolve) => {
      subscribed = resolve;
    });
    const watching: typeof fetch = async (input, init) => {
      const method = String(JSON.parse(String(init?.body ?? '{}')).method);
      methods.push(method);
      const response = await fetch(input, init);
      // The stream's headers come with its first event: the agent holds the subscription now.
      if (method === 'SubscribeToTask') subscribed();
      return response;
    };
    const watched = await new ClientFactory({
      transports: [new JsonRpcTransportFactory({ fetchImpl: watching })],
    }).createFromAgentCard(AgentCard.fromJSON(agent.card));
    const answered = await send('Inspect lot 29.', true);
    const call = await held.next();
    const following = followAnswer({ client: watched, card: agent.card }, answered);
    await subscribing; // still running: the backend is held until now
    call.release();
    const final = (await following) as Task;
    expect(final.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(final.artifacts).toHaveLength(1);
    expect(methods).toEqual(['GetTask', 'SubscribeToTask', 'GetTask']);
  });

  it('streams SUBMITTED, WORKING, the artifact chunk by chunk — each with its receipt, the last lastChunk — and COMPLETED (SendStreamingMessage)', async () => {
    const seen: string[] = [];
    const stream = client.sendMessageStream({
      tenant: '',
      message: userMessage('Inspect lot 21.'),
      configuration: undefined,
      metadata: undefined,
    });
    const released = held.next().then((call) => call.release());
    for await (const event of stream) {
      const p = event.payload;
      if (p?.$case === 'task') seen.push(`task ${TaskState[p.value.status?.state ?? 0]}`);
      if (p?.$case === 'statusUpdate') seen.push(`status ${TaskState[p.value.status?.state ?? 0]}`);
      if (p?.$case === 'artifactUpdate')
        seen.push(
          `artifact append=${p.value.append} lastChunk=${p.value.lastChunk}${CHUNK_KEY in (p.value.artifact?.metadata ?? {}) ? ' +receipt' : ''}`,
        );
    }
    await released;
    // The policy answer is four lines: one chunk each (--stream-policy chunk, the default).
    expect(seen).toEqual([
      'task TASK_STATE_SUBMITTED',
      'status TASK_STATE_WORKING',
      'artifact append=false lastChunk=false +receipt',
      'artifact append=true lastChunk=false +receipt',
      'artifact append=true lastChunk=false +receipt',
      'artifact append=true lastChunk=true +receipt',
      'status TASK_STATE_COMPLETED',
    ]);
  });

  it('streamed, can be joined with SubscribeToTask before its answer is out: the subscriber records a stream that verifies', async () => {
    const started = client.sendMessageStream({
      tenant: '',
      message: userMessage('Inspect lot 23.'),
      configuration: undefined,
      metadata: undefined,
    });
    const first = await started.next(); // the task, SUBMITTED: the backend is held
    const id = first.value?.payload?.$case === 'task' ? first.value.payload.value.id : '';
    const draining = (async () => {
      for await (const _ of started);
    })();
    const subscription = client.resubscribeTask({ tenant: '', id });
    const snapshot = await subscription.next(); // the task as it is now: nothing released yet
    expect(snapshot.value?.payload?.$case).toBe('task');
    (await held.next()).release();
    let recorder: StreamRecorder | undefined;
    for await (const event of subscription)
      if (event.payload?.$case === 'artifactUpdate') {
        const update = TaskArtifactUpdateEvent.toJSON(event.payload.value) as ArtifactUpdateJson;
        recorder ??= new StreamRecorder(readArtifactUpdate(update).stream);
        recordArtifactUpdate(recorder, update);
      }
    await draining;
    const result = await verifyStream(recorder?.text() ?? '', { directory: world.directory });
    expect(result.problems).toEqual([]);
    expect(result).toMatchObject({ verdict: 'valid', size: 4, stream: { task: id } });
  });

  it('can be followed with SubscribeToTask while it works, to its completion', async () => {
    const answered = await send('Inspect lot 22.', true);
    const call = await held.next();
    const states: string[] = [];
    let subscribed: () => void = () => {};
    const first = new Promise<void>((resolve) => {
      subscribed = resolve;
    });
    const subscription = (async () => {
      for await (const event of client.resubscribeTask({ tenant: '', id: answered.id })) {
        const p = event.payload;
        if (p?.$case === 'task') states.push(`task ${TaskState[p.value.status?.state ?? 0]}`);
        if (p?.$case === 'statusUpdate') states.push(TaskState[p.value.status?.state ?? 0] as string);
        subscribed();
      }
    })();
    // The subscription's first event is the task as it is now; only then let the answer go.
    await first;
    call.release();
    await subscription;
    expect(states).toEqual(['task TASK_STATE_WORKING', 'TASK_STATE_COMPLETED']);
  });

  it('cancelled while it works ends CANCELED, and nothing is released for it afterwards', async () => {
    const answered = await send('Inspect lot 23.', true, {
      [DELEGATION_KEY]: await dagDelegation(world, 'Inspect lot 23.'),
    });
    const call = await held.next();
    const cancelled = await client.cancelTask({ tenant: '', id: answered.id, metadata: undefined });
    expect(cancelled.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    call.release();
    // A later task runs to completion, so the cancelled one's answer has come and gone by then.
    const later = send('Inspect lot 24.', false);
    (await held.next()).release();
    expect((await later).status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    const stored = await client.getTask({ tenant: '', id: answered.id, historyLength: undefined });
    expect(stored.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    expect(stored.artifacts).toEqual([]);
  });

  it('under dag with a co-signer that refuses ends FAILED with ERROR_KEY and no artifact, in GetTask too', async () => {
    const delegation = await dagDelegation(world, 'Inspect lot 28.');
    delegation.cosign_token = 'A'.repeat(43); // not the grant's credential: the co-signer refuses
    const sent = send('Inspect lot 28.', false, { [DELEGATION_KEY]: delegation });
    (await held.next()).release();
    const failed = await sent;
    expect(failed.status?.state).toBe(TaskState.TASK_STATE_FAILED);
    expect(failed.artifacts).toEqual([]);
    expect(failed.metadata?.[ERROR_KEY]).toMatchObject({ code: 'REFUSED' });
    expect(failed.status?.message?.metadata?.[ERROR_KEY]).toMatchObject({ code: 'REFUSED' });
    const stored = await client.getTask({ tenant: '', id: failed.id, historyLength: undefined });
    expect([stored.status?.state, stored.artifacts]).toEqual([TaskState.TASK_STATE_FAILED, []]);
  });

  it('once completed cannot be cancelled (TaskNotCancelableError, -32002)', async () => {
    const sent = send('Inspect lot 25.', false);
    (await held.next()).release();
    const done = await sent;
    expect((await rpc('CancelTask', { id: done.id })).error?.code).toBe(-32002);
  });

  it('takes no second message while it works (UnsupportedOperationError, -32004), and goes on to complete', async () => {
    const answered = await send('Inspect lot 26.', true);
    const call = await held.next();
    const second = await rpc('SendMessage', {
      message: { messageId: randomUUID(), taskId: answered.id, role: 'ROLE_USER', parts: [{ text: 'and this too' }] },
    });
    expect(second.error?.code).toBe(-32004);
    expect(second.error?.message).toMatch(/one message per task/);
    call.release();
    const final = (await followAnswer({ client, card: agent.card }, answered)) as Task;
    expect(final.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(final.artifacts).toHaveLength(1);
  });

  it('takes no message once completed (UnsupportedOperationError), and an unknown task is not found (-32001)', async () => {
    const sent = send('Inspect lot 27.', false);
    (await held.next()).release();
    const done = await sent;
    const again = await rpc('SendMessage', {
      message: { messageId: randomUUID(), taskId: done.id, role: 'ROLE_USER', parts: [{ text: 'more' }] },
    });
    expect(again.error?.code).toBe(-32004);
    const unknown = await rpc('SendMessage', {
      message: { messageId: randomUUID(), taskId: randomUUID(), role: 'ROLE_USER', parts: [{ text: 'more' }] },
    });
    expect(unknown.error?.code).toBe(-32001);
  });
});
