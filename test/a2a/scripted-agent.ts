/**
 * A child A2A agent whose answers a test scripts: the real @a2a-js/sdk server
 * (DefaultRequestHandler, JSON-RPC, its task store), a card signed with a real key,
 * and releases through the real release signer over the bytes the artifact contract
 * defines. It stands for children `witness a2a serve` does not play: one that answers
 * with Tasks and artifacts (blocking, unfinished, streamed), one that fails, and
 * adversaries that hold only their own key, or that drop, move or splice the chunks of a
 * streamed answer (`streamedChunks`, `publishChunks`).
 */
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { AgentCard, Artifact, Role, type Task, TaskState } from '@a2a-js/sdk';
import {
  AgentEvent,
  DefaultRequestHandler,
  type ExecutionEventBus,
  InMemoryTaskStore,
  type RequestContext,
} from '@a2a-js/sdk/server';
import { jsonRpcHandler, UserBuilder } from '@a2a-js/sdk/server/express';
import express from 'express';
import { artifactBytes } from '../../src/a2a/artifact.js';
import { buildAgentCard, CARD_PATH, type CardJson, JSONRPC_PATH, signAgentCard } from '../../src/a2a/card.js';
import { httpCosign } from '../../src/a2a/cosign-client.js';
import { DELEGATION_KEY, type Delegation, EVIDENCE_KEY } from '../../src/a2a/metadata.js';
import type { SigningKey } from '../../src/attest/keys.js';
import type { Receipt } from '../../src/attest/receipt.js';
import { createReleaseSigner } from '../../src/attest/signer.js';
import type { StreamPolicy } from '../../src/attest/stream/index.js';
import type { Answered, ReleaseSetup } from '../../src/a2a/release.js';
import { streamAnswer } from '../../src/a2a/stream-release.js';
import type { EvidenceClient } from '../../src/a2a/tool-server.js';

/** What the script sees of one request. */
export interface Turn {
  ctx: RequestContext;
  bus: ExecutionEventBus;
  text: string;
  delegation: Delegation | undefined;
  /** The parent's task path as sent (empty under none). */
  ancestors: Receipt[];
  store: InMemoryTaskStore;
}

export interface ScriptedAgent {
  url: string;
  card: CardJson;
  close(): Promise<void>;
}

export interface ScriptedAgentOptions {
  /** Declare streaming in the card (SendStreamingMessage); default false. */
  streaming?: boolean;
  /** Serve the card without a signature. */
  unsigned?: boolean;
  /** Runs before the SDK sees each JSON-RPC request (e.g. to finish a task when the parent first polls). */
  beforeRequest?: (method: string, store: InMemoryTaskStore) => Promise<void>;
}

/** Serves an agent whose every request runs `script`; the bus is finished after it. */
export async function serveScriptedAgent(
  key: SigningKey,
  script: (turn: Turn) => Promise<void>,
  options: ScriptedAgentOptions = {},
): Promise<ScriptedAgent> {
  const app = express();
  let card: CardJson | undefined;
  let rpc: express.RequestHandler | undefined;
  app.get(CARD_PATH, (_req, res) => void res.type('application/json').send(JSON.stringify(card)));
  const store = new InMemoryTaskStore();
  app.use(JSONRPC_PATH, express.json(), async (req, res, next) => {
    await options.beforeRequest?.(String((req.body as { method?: unknown })?.method), store);
    rpc?.(req, res, next);
  });
  const server = createServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const built = buildAgentCard({ baseUrl: url, name: 'scripted-child', deployer: key.deployer });
  if (options.streaming) built.capabilities = { ...(built.capabilities as object), streaming: true };
  card = options.unsigned ? built : signAgentCard(built, key);
  const handler = new DefaultRequestHandler(AgentCard.fromJSON(card), store, {
    async execute(ctx, bus) {
      const text = ctx.userMessage.parts.map((p) => (p.content?.$case === 'text' ? p.content.value : '')).join('');
      const delegation = ctx.userMessage.metadata?.[DELEGATION_KEY] as Delegation | undefined;
      const ancestors = (delegation?.evidence?.path ?? []) as Receipt[];
      await script({ ctx, bus, text, delegation, ancestors, store });
      bus.finished();
    },
    async cancelTask() {},
  });
  rpc = jsonRpcHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication });
  return {
    url,
    card,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** An artifact of text parts, as the SDK holds it. */
export function textArtifact(artifactId: string, texts: string[]): Artifact {
  return {
    artifactId,
    name: '',
    description: '',
    parts: texts.map((value) => ({
      content: { $case: 'text', value },
      metadata: undefined,
      filename: '',
      mediaType: '',
    })),
    metadata: undefined,
    extensions: [],
  };
}

/**
 * `artifact` with its evidence: released by `key`'s runtime over `artifactBytes` of the
 * artifact in `turn`'s task, under the delegation's construction; a dag edge is
 * co-signed by the parent's service at `cosignerUrl` with the delegation's credential.
 */
export async function releaseArtifact(
  key: SigningKey,
  turn: Pick<Turn, 'ctx' | 'delegation' | 'ancestors'>,
  artifact: Artifact,
  cosignerUrl?: string,
): Promise<Artifact> {
  const construction = turn.delegation?.construction ?? 'none';
  const signer = createReleaseSigner({
    key,
    instance: 'scripted',
    ...(construction === 'dag' && cosignerUrl
      ? {
          cosign: httpCosign(cosignerUrl, turn.delegation?.task_id ?? '', {
            token: turn.delegation?.cosign_token ?? '',
          }),
        }
      : {}),
  });
  const bytes = artifactBytes(
    { taskId: turn.ctx.taskId, contextId: turn.ctx.contextId },
    Artifact.toJSON(artifact) as { artifactId: string; parts: unknown[] },
  );
  const receipt = await signer.releaseOutput(bytes, { ancestors: turn.ancestors, construction });
  return { ...artifact, metadata: { [EVIDENCE_KEY]: { path: [...turn.ancestors, receipt] } } };
}

/** One chunk event of a streamed artifact, as the child publishes it. */
export interface StreamedChunk {
  artifact: Artifact;
  append: boolean;
  lastChunk: boolean;
}

/**
 * The chunk events the real child (stream-release.ts) publishes for `text` in `turn`'s
 * task, made by the same code with `key` — each with its chunk receipt, checkpoints, and
 * on the last the final receipt and the artifact's evidence; under dag both co-signed by
 * the parent's service at `cosignerUrl` with the delegation's credential. An adversary
 * publishes them altered (`publishChunks`).
 */
export async function streamedChunks(
  key: SigningKey,
  turn: Pick<Turn, 'ctx' | 'delegation' | 'ancestors'>,
  text: string,
  options: { cosignerUrl?: string; policy?: StreamPolicy; checkpointEvery?: number } = {},
): Promise<StreamedChunk[]> {
  const chunks: StreamedChunk[] = [];
  const setup: ReleaseSetup = {
    key,
    tool: undefined as unknown as EvidenceClient, // the answer is given: no tool call
    backend: { name: 'scripted', answer: () => text },
    ...(options.cosignerUrl ? { cosigners: { [turn.ancestors.at(-1)?.deployer ?? '']: options.cosignerUrl } } : {}),
    stream: {
      policy: options.policy ?? 'tokens:1',
      checkpointEvery: { chunks: options.checkpointEvery ?? 2, ms: 60_000 },
    },
  };
  const answered: Answered = {
    output: text,
    delegation: turn.delegation,
    ancestors: turn.ancestors,
    construction: turn.delegation?.construction ?? 'none',
    cpu0: process.cpuUsage(),
    toolMs: 0,
    modelMs: 0,
    answeredAt: performance.now(),
  };
  await streamAnswer(setup, { taskId: turn.ctx.taskId, contextId: turn.ctx.contextId }, answered, (artifact, at) =>
    chunks.push({ artifact, ...at }),
  );
  return chunks;
}

/** Publishes chunk events on `turn`'s bus, in the order given. */
export function publishChunks(turn: Pick<Turn, 'ctx' | 'bus'>, chunks: readonly StreamedChunk[]): void {
  for (const chunk of chunks)
    turn.bus.publish(
      AgentEvent.artifactUpdate({
        taskId: turn.ctx.taskId,
        contextId: turn.ctx.contextId,
        ...chunk,
        metadata: undefined,
      }),
    );
}

/**
 * A script that answers with `text` streamed as the real child streams it
 * (`streamedChunks`) — WORKING, the chunk events, COMPLETED — after `alter` has had its
 * way with the chunks (default: none), e.g. to drop, move or splice one.
 */
export function streamingScript(
  key: SigningKey,
  text: string,
  options: {
    cosignerUrl?: string;
    alter?: (chunks: StreamedChunk[], turn: Turn) => Promise<StreamedChunk[]>;
  } = {},
): (turn: Turn) => Promise<void> {
  return async (turn) => {
    turn.bus.publish(AgentEvent.task(taskOf(turn, TaskState.TASK_STATE_WORKING)));
    const chunks = await streamedChunks(
      key,
      turn,
      text,
      options.cosignerUrl ? { cosignerUrl: options.cosignerUrl } : {},
    );
    publishChunks(turn, options.alter ? await options.alter(chunks, turn) : chunks);
    turn.bus.publish(
      AgentEvent.statusUpdate({
        taskId: turn.ctx.taskId,
        contextId: turn.ctx.contextId,
        status: taskOf(turn, TaskState.TASK_STATE_COMPLETED).status,
        metadata: undefined,
      }),
    );
  };
}

/** The task of `turn` in `state`, with `artifacts` and a status message carrying `metadata`. */
export function taskOf(
  turn: Pick<Turn, 'ctx'>,
  state: TaskState,
  artifacts: Artifact[] = [],
  metadata?: Record<string, unknown>,
): Task {
  return {
    id: turn.ctx.taskId,
    contextId: turn.ctx.contextId,
    status: {
      state,
      message: metadata
        ? {
            messageId: randomUUID(),
            contextId: turn.ctx.contextId,
            taskId: turn.ctx.taskId,
            role: Role.ROLE_AGENT,
            parts: [],
            metadata,
            extensions: [],
            referenceTaskIds: [],
          }
        : undefined,
      timestamp: new Date().toISOString(),
    },
    artifacts,
    history: [],
    metadata: undefined,
  };
}

export { AgentEvent, TaskState };
