/**
 * Chunk receipts across the real A2A SDK: an agent served by @a2a-js/sdk's
 * DefaultRequestHandler streams its answer as artifact-update events, each carrying its
 * receipt (and checkpoints, and on the last chunk the final receipt) in the artifact's
 * metadata; the SDK's own client receives them over JSON-RPC streaming, the recorder
 * records them in arrival order, and the stream verifies with exactly the text the
 * agent sent. A client shown a dropped event, or one from another task, is told so.
 */
import type { AddressInfo } from 'node:net';
import { AgentCard, Part, TaskArtifactUpdateEvent, TaskState } from '@a2a-js/sdk';
import { ClientFactory } from '@a2a-js/sdk/client';
import {
  AgentEvent,
  type AgentExecutor,
  DefaultRequestHandler,
  InMemoryTaskStore,
  type RequestContext,
} from '@a2a-js/sdk/server';
import { jsonRpcHandler, UserBuilder } from '@a2a-js/sdk/server/express';
import express from 'express';
import { afterAll, describe, expect, it } from 'vitest';
import {
  type ArtifactUpdateJson,
  chunkBytes,
  chunkMetadata,
  readArtifactUpdate,
  recordArtifactUpdate,
  STREAM_FINAL_KEY,
  streamedText,
} from '../../src/a2a/stream.js';
import { createStreamSigner, newSigningKey, StreamRecorder, verifyStream } from '../../src/attest/index.js';
import { textPart, trust, userMessageRequest } from './helpers.js';

const key = newSigningKey('org-child');
const { directory } = trust([key]);
const PIECES = ['The ', 'quarterly ', 'figures ', 'were ', 'restated ', 'twice.'];

/** Streams PIECES as artifact-update events on artifact "answer", through the stream signer. */
const executor: AgentExecutor = {
  async execute(ctx: RequestContext, bus) {
    const stream = { session: ctx.contextId, task: ctx.taskId, artifact: 'answer' };
    const signer = createStreamSigner({
      key,
      instance: 'writer',
      stream,
      policy: 'tokens:1',
      checkpointEvery: { chunks: 2 },
    });
    bus.publish(
      AgentEvent.task({
        id: ctx.taskId,
        contextId: ctx.contextId,
        status: { state: TaskState.TASK_STATE_WORKING, message: undefined, timestamp: new Date().toISOString() },
        artifacts: [],
        history: [ctx.userMessage],
        metadata: undefined,
      }),
    );
    for (const [i, piece] of PIECES.entries()) {
      const parts = [textPart(piece)];
      const signed = signer.chunk(chunkBytes(parts.map((p) => Part.toJSON(p))));
      const last = i === PIECES.length - 1;
      const final = last ? await signer.finish() : undefined;
      bus.publish(
        AgentEvent.artifactUpdate({
          taskId: ctx.taskId,
          contextId: ctx.contextId,
          artifact: {
            artifactId: 'answer',
            name: '',
            description: '',
            parts,
            metadata: chunkMetadata(signed, final),
            extensions: [],
          },
          append: i > 0,
          lastChunk: last,
          metadata: undefined,
        }),
      );
    }
    bus.publish(
      AgentEvent.statusUpdate({
        taskId: ctx.taskId,
        contextId: ctx.contextId,
        status: { state: TaskState.TASK_STATE_COMPLETED, message: undefined, timestamp: new Date().toISOString() },
        metadata: undefined,
      }),
    );
    bus.finished();
  },
  async cancelTask() {},
};

const app = express();
const server = app.listen(0, '127.0.0.1');
await new Promise((resolve) => server.once('listening', resolve));
const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/a2a/jsonrpc`;
const card = AgentCard.fromJSON({
  name: 'streaming-writer',
  description: 'streams its answer with chunk receipts',
  supportedInterfaces: [{ url, protocolBinding: 'JSONRPC', protocolVersion: '1.0' }],
  version: '1.0.0',
  capabilities: { streaming: true, extensions: [] },
  defaultInputModes: ['text/plain'],
  defaultOutputModes: ['text/plain'],
  skills: [],
});
app.use(
  '/a2a/jsonrpc',
  jsonRpcHandler({
    requestHandler: new DefaultRequestHandler(card, new InMemoryTaskStore(), executor),
    userBuilder: UserBuilder.noAuthentication,
  }),
);
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

/** The artifact-update events the SDK client received for one task, as wire JSON, in arrival order. */
async function streamOnce(): Promise<ArtifactUpdateJson[]> {
  const client = await new ClientFactory().createFromAgentCard(card);
  const events: ArtifactUpdateJson[] = [];
  for await (const response of client.sendMessageStream(userMessageRequest('what happened?'))) {
    if (response.payload?.$case === 'artifactUpdate')
      events.push(TaskArtifactUpdateEvent.toJSON(response.payload.value) as ArtifactUpdateJson);
  }
  return events;
}

function record(events: ArtifactUpdateJson[]): string {
  const recorder = new StreamRecorder(readArtifactUpdate(events[0] as ArtifactUpdateJson).stream);
  for (const event of events) recordArtifactUpdate(recorder, event);
  return recorder.text();
}

describe('chunk receipts in artifact-update events, through the real A2A SDK', () => {
  it('arrive intact: the recorded stream verifies, and its text is exactly what the agent streamed', async () => {
    const events = await streamOnce();
    expect(events).toHaveLength(PIECES.length);
    expect(Object.keys(events.at(-1)?.artifact?.metadata ?? {})).toContain(STREAM_FINAL_KEY);
    const r = await verifyStream(record(events), { directory });
    expect(r.problems).toEqual([]);
    expect(r).toMatchObject({ verdict: 'valid', size: PIECES.length, checkpoints: 3 });
    expect(streamedText(r.bytes)).toBe(PIECES.join(''));
  });
  it('a dropped event is CHUNK_MISSING, and an event from another task CHUNK_FOREIGN, with its checkpoint STREAM_MISMATCH', async () => {
    const [mine, other] = [await streamOnce(), await streamOnce()];
    const dropped = await verifyStream(record(mine.filter((_, i) => i !== 2)), { directory });
    expect(dropped.problems.map((p) => [p.code, p.seq])).toEqual([['CHUNK_MISSING', 2]]);
    const spliced = [...mine];
    spliced[3] = other[3] as ArtifactUpdateJson;
    const foreign = await verifyStream(record(spliced), { directory });
    // Event 3 also carried the other stream's checkpoint (one every 2 chunks): not this stream's either.
    expect(foreign.problems.map((p) => [p.code, p.seq])).toEqual([
      ['CHUNK_FOREIGN', 3],
      ['CHUNK_MISSING', 3],
      ['STREAM_MISMATCH', undefined],
    ]);
  });
});
