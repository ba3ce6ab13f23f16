/**
 * The child agent's streamed answers (stream-release.ts, handler.ts, task-store.ts):
 * over both bindings the SDK's own client receives chunk events whose recording
 * verifies; the stored task keeps the artifact with its evidence and none of the stream's
 * keys, and verifies as any other; under dag the stream's final receipt and the
 * artifact's are both co-signed, and a grant of one edge fails the task closed (the
 * stream is cut, the task FAILED); a context id the stream origin cannot carry is
 * refused before a task starts. And the way the child cuts an answer, as a property.
 */
import { randomUUID } from 'node:crypto';
import { Task, TaskState } from '@a2a-js/sdk';
import { type Client, ClientFactory, ClientFactoryOptions } from '@a2a-js/sdk/client';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyTaskArtifacts } from '../../src/a2a/answer.js';
import { EVIDENCE_KEY } from '../../src/a2a/metadata.js';
import { delegationRequest } from '../../src/a2a/parent.js';
import { sendTask } from '../../src/a2a/send.js';
import { checkStreams, receiveStream } from '../../src/a2a/stream-answer.js';
import { cutAnswer } from '../../src/a2a/stream-release.js';
import { expectation, startWorld, userMessage, type World } from './helpers.js';

let world: World;
let jsonRpc: Client;
let httpJson: Client;
beforeAll(async () => {
  world = await startWorld();
  jsonRpc = await new ClientFactory().createFromUrl(world.agent.url);
  httpJson = await new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, { preferredTransports: ['HTTP+JSON'] }),
  ).createFromUrl(world.agent.url);
});
afterAll(() => world?.close());

describe('an answer the child streams', () => {
  it.each([
    ['JSON-RPC', () => jsonRpc],
    ['HTTP+JSON', () => httpJson],
  ])('arrives over %s as chunk events whose recording verifies, bound to the completed task', async (_, client) => {
    const received = await receiveStream(client(), delegationRequest('Inspect lot 50.', _noDelegation()), {});
    const answer = { task: Task.toJSON(received.answer as Task) };
    expect(received.recordings).toHaveLength(1);
    const streams = await checkStreams(received.recordings, answer, expectation(world), { directory: world.directory });
    expect(streams.problems).toEqual([]);
    expect(streams.results.map((r) => [r.verdict, r.received, r.policy])).toEqual([['valid', 4, 'chunk']]);
  });

  it('is stored as one artifact holding every chunk’s part and only its evidence, which verifies with GetTask', async () => {
    const received = await receiveStream(jsonRpc, delegationRequest('Inspect lot 51.', _noDelegation()), {});
    const streamed = received.answer as Task;
    const stored = await jsonRpc.getTask({ tenant: '', id: streamed.id, historyLength: 0 });
    const [artifact] = stored.artifacts;
    expect(Object.keys(artifact?.metadata ?? {})).toEqual([EVIDENCE_KEY]);
    expect(artifact?.parts).toEqual(streamed.artifacts[0]?.parts);
    const check = await verifyTaskArtifacts(Task.toJSON(stored), expectation(world), { directory: world.directory });
    expect(check.problems).toEqual([]);
  });

  it('under dag carries a final receipt and an artifact receipt that are both edges co-signed by the parent', async () => {
    const result = await sendTask(world.agent.url, 'Inspect lot 52.', {
      directory: world.directory,
      construction: 'dag',
      key: world.parent,
      grant: (g) => world.service.grant(g),
      stream: true,
    });
    expect(result.check.problems).toEqual([]);
    const leaves = [result.check.paths[0]?.at(-1), result.streams[0]?.path?.at(-1)];
    expect(leaves.map((r) => [r?.type, r?.signatures.length, r?.cosigners])).toEqual([
      ['edge', 2, ['org-parent']],
      ['edge', 2, ['org-parent']],
    ]);
  });

  it('under dag with a grant of one edge fails closed: the stream ends without its final receipt and the task FAILED', async () => {
    const result = await sendTask(world.agent.url, 'Inspect lot 53.', {
      directory: world.directory,
      construction: 'dag',
      key: world.parent,
      grant: (g) => world.service.grant({ ...g, edges: 1 }), // a parent that did not grant the stream's second edge
      stream: true,
    });
    expect(result.ok).toBe(false);
    expect(result.check.problems.map((p) => p.code)).toEqual(['STREAM_CUT', 'TASK_FAILED']);
    expect(result.check.problems[1]?.message).toMatch(/REFUSED: .*refused/);
    expect(result.check.task?.state).toBe('TASK_STATE_FAILED');
  });

  it.each([
    ['JSON-RPC', () => jsonRpc],
    ['HTTP+JSON', () => httpJson],
  ])(
    'is refused over %s before a task starts when its context id cannot name a stream (not 1–128 of A-Za-z0-9._:-)',
    async (_, client) => {
      const request = delegationRequest('Inspect lot 54.', _noDelegation());
      const contextId = `a/${randomUUID()}`; // one of its own: the other binding's run leaves a task in its context
      request.message = { ...userMessage('Inspect lot 54.'), contextId };
      await expect(receiveStream(client(), request, {})).rejects.toThrow(
        /contextId "a\/[0-9a-f-]{36}" must be 1–128 letters/,
      );
      const listed = await jsonRpc.listTasks({
        tenant: '',
        contextId,
        status: TaskState.TASK_STATE_UNSPECIFIED,
        pageToken: '',
        statusTimestampAfter: undefined,
      });
      expect(listed.tasks).toEqual([]);
      // Not streamed, the same message is answered as always: only a stream's origin names the context.
      const answered = (await client().sendMessage(request)) as Task;
      expect([answered.contextId, answered.status?.state]).toEqual([contextId, TaskState.TASK_STATE_COMPLETED]);
    },
  );
});

describe('how the child cuts an answer (cutAnswer)', () => {
  it('gives back the answer exactly when its pieces are joined, under every policy, never with no piece', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: fc.constantFrom('a', 'b', ' ', '\n', 'é', '\t') }),
        fc.constantFrom('chunk', 'turn', 'tokens:1', 'tokens:3'),
        (text, policy) => {
          const pieces = cutAnswer(text, policy);
          expect(pieces.join('')).toBe(text);
          expect(pieces.length).toBeGreaterThanOrEqual(1);
          if (policy === 'chunk') expect(pieces.slice(0, -1).every((p) => p.endsWith('\n'))).toBe(true);
          if (policy === 'tokens:3') expect(pieces.every((p) => (p.match(/\S+/g) ?? []).length <= 3)).toBe(true);
        },
      ),
    );
  });
});

/** A request without delegation metadata is answered as construction none. */
function _noDelegation() {
  return { task_id: 'unused', construction: 'none' as const, evidence: null };
}
