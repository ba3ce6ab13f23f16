/**
 * @module
 * The child A2A agent (attest.md §5–§6), on `@a2a-js/sdk`: a signed Agent Card at
 * `/.well-known/agent-card.json`, JSON-RPC `SendMessage` (A2A v1.0) and `message/send`
 * (v0.3, through the SDK's `legacyCompat`). For each task the runtime calls the MCP
 * tool, lets the agent backend answer, and releases the answer's exact UTF-8 bytes
 * through the release-boundary signer — the backend never sees the key. Under `dag`
 * the parent's co-signing service must co-sign the edge first; refusal, an unreachable
 * service or a timeout ends the task as failed, with no output (fail closed).
 *
 * The result message holds the output as its one text part, the evidence path under
 * `agent-witness.dev/evidence` and the child's latency split under
 * `agent-witness.dev/timings` (metadata.ts).
 */
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { AgentCard, type Message, Role, TaskState } from '@a2a-js/sdk';
import {
  AgentEvent,
  type AgentExecutor,
  DefaultRequestHandler,
  type ExecutionEventBus,
  type RequestContext,
} from '@a2a-js/sdk/server';
import { jsonRpcHandler, UserBuilder } from '@a2a-js/sdk/server/express';
import express from 'express';
import type { SigningKey } from '../attest/keys.js';
import { parseReceipt, type Receipt } from '../attest/receipt.js';
import { createReleaseSigner } from '../attest/signer.js';
import { WitnessError } from '../core/errors.js';
import { type HttpFront, JSON_RPC_ERRORS, serveFront } from '../core/http-front.js';
import { requestLimit, sendJsonRpcError } from '../core/http-server.js';
import { buildAgentCard, CARD_PATH, type CardJson, JSONRPC_PATH, signAgentCard } from './card.js';
import type { ServerAccessOptions } from './access.js';
import { jsonFallbacks, jsonRpcFront } from './jsonrpc-front.js';
import { ChildTaskStore } from './task-store.js';
import { httpCosign } from './cosign-client.js';
import {
  type ChildTimings,
  DELEGATION_KEY,
  type Delegation,
  DelegationSchema,
  ERROR_KEY,
  EVIDENCE_KEY,
  TIMINGS_KEY,
} from './metadata.js';
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
  const tool = await connectEvidenceTool(options.toolUrl);
  const app = express();
  app.disable('x-powered-by');
  let card: CardJson | undefined;
  let rpc: express.RequestHandler | undefined;
  const notReady = (res: express.Response) =>
    sendJsonRpcError(res, 503, -32603, 'The agent is starting; retry in a moment.');
  // The card is served byte for byte as signed (the SDK's agentCardHandler re-serialises
  // with default values filled in, which a JCS verifier would not reproduce).
  app.get(CARD_PATH, (_req, res) =>
    card ? void res.type('application/json').send(JSON.stringify(card)) : notReady(res),
  );
  app.use(JSONRPC_PATH, jsonRpcFront(limit), (req, res, next) => (rpc ? rpc(req, res, next) : notReady(res)));
  app.use(...jsonFallbacks());
  // The one front (core/http-front.ts) guards Host and Origin before Express sees the
  // request, the card route or any body parser included; the A2A JSON-RPC checks are jsonRpcFront's.
  let http: HttpFront;
  try {
    http = await serveFront(
      { what: 'the A2A agent', ...options, limit, errors: JSON_RPC_ERRORS },
      async (req, res) => void app(req, res),
    );
  } catch (error) {
    await tool.close();
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
  const handler = new DefaultRequestHandler(AgentCard.fromJSON(card), new ChildTaskStore(), _executor(options, tool));
  rpc = jsonRpcHandler({
    requestHandler: handler,
    userBuilder: UserBuilder.noAuthentication,
    legacyCompat: { enabled: true },
  });
  return {
    url,
    card,
    async close() {
      await http.close();
      await tool.close();
      await options.backend?.close?.();
    },
  };
}

function _executor(options: ChildAgentOptions, tool: EvidenceClient): AgentExecutor {
  const backend = options.backend ?? policyBackend;
  return {
    async execute(ctx: RequestContext, bus: ExecutionEventBus) {
      try {
        const { text, metadata } = await _run(options, backend, tool, ctx);
        bus.publish(AgentEvent.message(_message(ctx, text, metadata)));
      } catch (error) {
        bus.publish(AgentEvent.task(_failedTask(ctx, error)));
      }
      bus.finished();
    },
    async cancelTask() {},
  };
}

async function _run(
  options: ChildAgentOptions,
  backend: AgentBackend,
  tool: EvidenceClient,
  ctx: RequestContext,
): Promise<{ text: string; metadata: Record<string, unknown> }> {
  const message = ctx.userMessage;
  const task = message.parts.map((p) => (p.content?.$case === 'text' ? p.content.value : '')).join('');
  if (task === '') throw new WitnessError('INVALID_INPUT', 'The message has no text part: send the task as text.');
  const delegation = _delegation(message.metadata?.[DELEGATION_KEY] ?? ctx.request.metadata?.[DELEGATION_KEY]);
  const ancestors = _ancestors(delegation);
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const evidence = await tool.getEvidence(task);
  const t1 = performance.now();
  const output = await backend.answer(task, evidence);
  const t2 = performance.now();
  let cosignMs = 0;
  const construction = delegation?.construction ?? 'none';
  const parent = ancestors.at(-1);
  let cosign: ReturnType<typeof httpCosign> | undefined;
  if (construction === 'dag' && parent) {
    const cosignerUrl = options.cosigners?.[parent.deployer];
    if (!cosignerUrl)
      throw new WitnessError(
        'REFUSED',
        `No co-signing service is configured for the parent deployer ${parent.deployer}; a dag edge cannot be released without it (fail closed). Start the child with --cosigner ${parent.deployer}=URL.`,
      );
    const request = httpCosign(cosignerUrl, delegation?.task_id ?? '', {
      token: delegation?.cosign_token ?? '',
      timeoutMs: options.cosignTimeoutMs ?? 5000,
    });
    cosign = async (edge, deployer) => {
      const c0 = performance.now();
      try {
        return await request(edge, deployer);
      } finally {
        cosignMs += performance.now() - c0;
      }
    };
  }
  const signer = createReleaseSigner({
    key: options.key,
    instance: options.instance ?? backend.name,
    cosignTimeoutMs: options.cosignTimeoutMs ?? 5000,
    ...(cosign ? { cosign } : {}),
  });
  const receipt = await signer.releaseOutput(Buffer.from(output, 'utf8'), { ancestors, construction });
  const t3 = performance.now();
  const cpu = process.cpuUsage(cpu0);
  const timings: ChildTimings = {
    tool_ms: t1 - t0,
    model_ms: t2 - t1,
    sign_ms: Math.max(0, t3 - t2 - cosignMs),
    cosign_ms: cosignMs,
    cpu_ms: (cpu.user + cpu.system) / 1000,
  };
  return { text: output, metadata: { [EVIDENCE_KEY]: { path: [...ancestors, receipt] }, [TIMINGS_KEY]: timings } };
}

function _delegation(value: unknown): Delegation | undefined {
  if (value === undefined) return undefined;
  const checked = DelegationSchema.safeParse(value);
  if (!checked.success) {
    const issue = checked.error.issues[0];
    throw new WitnessError(
      'INVALID_INPUT',
      `metadata ${DELEGATION_KEY} is malformed: ${issue?.path.join('.') || '(root)'}: ${issue?.message}.`,
    );
  }
  if ((checked.data.construction === 'none') !== (checked.data.evidence === null)) {
    throw new WitnessError(
      'INVALID_INPUT',
      `metadata ${DELEGATION_KEY}: construction none goes without evidence; chain and dag need the parent's task evidence.`,
    );
  }
  if ((checked.data.construction === 'dag') !== (checked.data.cosign_token !== undefined)) {
    throw new WitnessError(
      'INVALID_INPUT',
      `metadata ${DELEGATION_KEY}: a dag delegation carries cosign_token, the credential the parent's co-signer issued with the grant (and only dag does).`,
    );
  }
  return checked.data;
}

function _ancestors(delegation: Delegation | undefined): Receipt[] {
  if (!delegation?.evidence) return [];
  const path = delegation.evidence.path;
  return path.map((item, i) => {
    const parsed = parseReceipt(item, i);
    if (!parsed.ok)
      throw new WitnessError(
        'INVALID_INPUT',
        `The parent's task evidence is malformed: ${parsed.reasons.map((r) => `${r.code} ${r.message}`).join('; ')}`,
      );
    return parsed.value.receipt;
  });
}

function _message(ctx: RequestContext, text: string, metadata: Record<string, unknown>): Message {
  return {
    messageId: randomUUID(),
    contextId: ctx.contextId,
    taskId: '',
    role: Role.ROLE_AGENT,
    parts: [{ content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: 'text/plain' }],
    metadata,
    extensions: [],
    referenceTaskIds: [],
  };
}

function _failedTask(ctx: RequestContext, error: unknown) {
  const code = error instanceof WitnessError ? error.code : 'INTERNAL';
  const text = `No result was released: ${(error as Error).message}`;
  const status = {
    ...(_message(ctx, text, { [ERROR_KEY]: { code, message: (error as Error).message } }) as Message),
    taskId: ctx.taskId,
  };
  return {
    id: ctx.taskId,
    contextId: ctx.contextId,
    status: { state: TaskState.TASK_STATE_FAILED, message: status, timestamp: new Date().toISOString() },
    artifacts: [],
    history: [ctx.userMessage],
    metadata: { [ERROR_KEY]: { code, message: (error as Error).message } },
  };
}
