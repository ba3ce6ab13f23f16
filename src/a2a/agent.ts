/**
 * @module
 * The child A2A agent (attest.md §5–§6), on `@a2a-js/sdk`: a signed Agent Card at
 * `/.well-known/agent-card.json`, JSON-RPC `SendMessage` (A2A v1.0) and `message/send`
 * (v0.3, through the SDK's `legacyCompat`), and the HTTP+JSON binding (A2A v1.0 §11) on
 * the same handler and task store. Every message starts a Task (executor.ts):
 * the runtime calls the MCP tool, lets the agent backend answer, and releases the answer
 * as an artifact whose bytes (artifact.ts) the release-boundary signer signs — the
 * backend never sees the key. Under `dag` the parent's co-signing service must co-sign
 * the edge first; refusal, an unreachable service or a timeout ends the task as failed,
 * with no artifact (fail closed). A client that asks for a stream gets the artifact chunk
 * by chunk, each chunk with its receipt (stream-release.ts).
 */
import { AgentCard } from '@a2a-js/sdk';
import { jsonRpcHandler, restHandler, UserBuilder } from '@a2a-js/sdk/server/express';
import express from 'express';
import type { SigningKey } from '../attest/keys.js';
import { type HttpFront, serveFront } from '../core/http-front.js';
import { requestLimit, sendJsonRpcError } from '../core/http-server.js';
import { buildAgentCard, CARD_PATH, type CardJson, JSONRPC_PATH, signAgentCard } from './card.js';
import type { ServerAccessOptions } from './access.js';
import { jsonFallbacks, jsonRpcFront } from './jsonrpc-front.js';
import { A2A_ERRORS, isRestRoute, restFallbacks, restFront, sendRestError } from './rest-front.js';
import { childExecutor } from './executor.js';
import { ChildRequestHandler, StreamedRequests } from './handler.js';
import type { StreamReleaseOptions } from './stream-release.js';
import { ChildTaskStore } from './task-store.js';
import { connectEvidenceTool, type Evidence, type EvidenceClient } from './tool-server.js';

/** What answers a task: model-free (`policy`) or a model. It sees the task and the tool's evidence, never a key. */
export interface AgentBackend {
  readonly name: string;
  answer(task: string, evidence: Evidence): Promise<string> | string;
  /** Releases the backend's connections, if any. */
  close?(): Promise<void>;
}

/** The model-free child: a deterministic answer from the task and the evidence. */
export const policyBackend: AgentBackend = {
  name: 'policy',
  answer(task, evidence) {
    const within = evidence.items.filter((item) => item.endsWith('within tolerance')).length;
    const verdict = within * 2 > evidence.items.length ? 'ACCEPT' : 'REJECT';
    return [
      `Task ${evidence.task_sha256.slice(0, 16)} (${Buffer.byteLength(task, 'utf8')} bytes): ${within} of ${evidence.items.length} findings within tolerance; verdict ${verdict}.`,
      ...evidence.items.map((i) => `- ${i}`),
    ].join('\n');
  },
};

export interface ChildAgentOptions extends ServerAccessOptions {
  key: SigningKey;
  /** MCP endpoint of the evidence tool (`witness a2a tool`). */
  toolUrl: string;
  /** Co-signing service per parent deployer — configured by the child's operator, never taken from a request. */
  cosigners?: Readonly<Record<string, string>>;
  /** Longest wait for a co-signature, ms (default 5000); then the task fails. */
  cosignTimeoutMs?: number;
  backend?: AgentBackend;
  name?: string;
  instance?: string;
  /**
   * Where tasks are kept (task-store.ts): a SQLite file, `:memory:` (the default: tasks
   * last as long as the agent), or a `postgres://` URL shared by agent processes on
   * several machines. A durable store keeps tasks across restarts; a task that was
   * running when its process died is reported FAILED with ERROR_KEY code INTERRUPTED.
   */
  taskStore?: string;
  /** How an answer a client asked to stream is cut and checkpointed (default DEFAULT_STREAM_RELEASE). */
  stream?: StreamReleaseOptions;
}

export interface ChildAgent {
  url: string;
  card: CardJson;
  close(): Promise<void>;
}

/** A request body larger than this gets a JSON 413 unless configured: room for a 200 KB task and its delegation. */
export const DEFAULT_AGENT_MAX_REQUEST_BYTES = 1024 * 1024;

export async function serveChildAgent(options: ChildAgentOptions): Promise<ChildAgent> {
  const limit = requestLimit(options.maxRequestBytes, DEFAULT_AGENT_MAX_REQUEST_BYTES);
  const store = await ChildTaskStore.open(options.taskStore);
  let tool: EvidenceClient;
  try {
    tool = await connectEvidenceTool(options.toolUrl);
  } catch (error) {
    await store.close();
    throw error;
  }
  const app = express();
  app.disable('x-powered-by');
  let card: CardJson | undefined;
  let rpc: express.RequestHandler | undefined;
  let rest: express.RequestHandler | undefined;
  const notReady = (res: express.Response) =>
    sendJsonRpcError(res, 503, -32603, 'The agent is starting; retry in a moment.');
  // The card is served byte for byte as signed (the SDK's agentCardHandler re-serialises
  // with default values filled in, which a JCS verifier would not reproduce).
  app.get(CARD_PATH, (_req, res) =>
    card ? void res.type('application/json').send(JSON.stringify(card)) : notReady(res),
  );
  app.use(JSONRPC_PATH, jsonRpcFront(limit), (req, res, next) => (rpc ? rpc(req, res, next) : notReady(res)));
  const restReady: express.RequestHandler = (req, res, next) =>
    rest ? rest(req, res, next) : sendRestError(res, 503, 'The agent is starting; retry in a moment.');
  const restRoutes = express.Router();
  restRoutes.use(restFront(limit), restReady, ...restFallbacks());
  app.use((req, res, next) => (isRestRoute(req.path) ? restRoutes(req, res, next) : next()));
  app.use(...jsonFallbacks());
  // The one front (core/http-front.ts) guards Host and Origin before Express sees the
  // request, the card route or any body parser included, and answers in each binding's
  // shape (A2A_ERRORS); the checks of each binding are jsonRpcFront's and restFront's.
  let http: HttpFront;
  try {
    http = await serveFront(
      { what: 'the A2A agent', ...options, limit, errors: A2A_ERRORS },
      async (req, res) => void app(req, res),
    );
  } catch (error) {
    await tool.close();
    await store.close();
    throw error;
  }
  const url = http.url;
  card = signAgentCard(
    buildAgentCard({
      baseUrl: url,
      name: options.name ?? `witness-child-${options.key.deployer}`,
      deployer: options.key.deployer,
    }),
    options.key,
  );
  const streamed = new StreamedRequests();
  const executor = childExecutor(
    {
      key: options.key,
      tool,
      backend: options.backend ?? policyBackend,
      ...(options.cosigners ? { cosigners: options.cosigners } : {}),
      ...(options.cosignTimeoutMs !== undefined ? { cosignTimeoutMs: options.cosignTimeoutMs } : {}),
      ...(options.instance ? { instance: options.instance } : {}),
      ...(options.stream ? { stream: options.stream } : {}),
    },
    store,
    (ctx) => streamed.isStreamed(ctx),
  );
  const handler = new ChildRequestHandler(AgentCard.fromJSON(card), store, executor, streamed);
  rpc = jsonRpcHandler({
    requestHandler: handler,
    userBuilder: UserBuilder.noAuthentication,
    legacyCompat: { enabled: true },
  });
  rest = restHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication });
  return {
    url,
    card,
    async close() {
      await http.close();
      await tool.close();
      await store.close();
      await options.backend?.close?.();
    },
  };
}
