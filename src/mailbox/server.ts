/**
 * @module
 * The mailbox MCP server over stdio: one process per agent, identity from
 * `--agent` (mailbox.md §1). `createMailboxServer` builds the `McpServer` (SDK 1.x,
 * MCP 2025-11-25) for one bound identity; the HTTP transport (http.ts) builds one per
 * session. `createModernMailboxServer` builds the same tools and inbox on SDK 2.x for
 * MCP 2026-07-28, where a server answers one request and keeps nothing between them.
 */
import { McpServer as ModernMcpServer } from '@modelcontextprotocol/server';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { type InitializeRequest, InitializeRequestSchema, type InitializeResult, isJSONRPCErrorResponse, isJSONRPCNotification, isJSONRPCRequest, isJSONRPCResultResponse, type JSONRPCMessage, type RequestId } from '@modelcontextprotocol/sdk/types.js';
import { WitnessError } from '../core/errors.js';
import type { StoreKind } from './config.js';
import { DEFAULT_LIMITS, type MailboxLimits, RateLimiter, type SendRate } from './limits.js';
import { assertAgentName } from './names.js';
import { openStore } from './store/index.js';
import type { MailboxStore } from './store/types.js';
import { channelInstructionsFor, instructionsFor } from './instructions.js';
import { registerChannel, registerInbox, registerInboxResource } from './push.js';
import { type SessionEvent, sessionLogger } from './session-log.js';
import { registerMailboxTools } from './tools/index.js';
import { routeModernToolCalls } from './tools/route-modern.js';
import { MailSignal } from './tools/wait.js';

export const SERVER_NAME = 'witness-mailbox';
const VERSION = '0.1.0';

/** What every server process shares across its sessions. */
export interface MailboxRuntime {
  store: MailboxStore;
  limits: MailboxLimits;
  rate: SendRate;
  mailSignal: MailSignal;
  prefix: string;
  /** Aborted when the server shuts down: pending waits end at once with their (empty) answer. */
  closing: AbortController;
  /** Push each new message to the session as a Claude Code channel event (`serve --channel`). */
  channel: boolean;
  /** `serve --session-log FILE`: where each session's negotiated protocol and pushes are written (session-log.ts). */
  sessionLog?: string;
}

export interface RuntimeOptions {
  dir: string;
  keyPath?: string;
  store?: StoreKind;
  prefix?: string;
  limits?: Partial<MailboxLimits>;
  /** Claude Code channel events (see MailboxRuntime.channel). */
  channel?: boolean;
  sessionLog?: string;
}

export async function createRuntime(options: RuntimeOptions): Promise<MailboxRuntime> {
  const limits = { ...DEFAULT_LIMITS, ...options.limits };
  const prefix = options.prefix ?? '';
  if (prefix !== '' && !/^[A-Za-z0-9_-]{1,32}$/.test(prefix)) {
    throw new WitnessError('USAGE', `--tool-prefix ${JSON.stringify(prefix)} must be 1–32 letters, digits, "_" or "-" (for example mailbox_).`);
  }
  const store = await openStore(options.dir, { limits, ...(options.keyPath ? { keyPath: options.keyPath } : {}), ...(options.store ? { kind: options.store } : {}) });
  const mailSignal = new MailSignal();
  store.onMail?.((agent) => mailSignal.notify(agent)); // mail committed by other processes, where the store hears of it
  const rate = store.sendRate?.(limits.sendsPerMinute) ?? new RateLimiter(limits.sendsPerMinute);
  return { store, limits, rate, mailSignal, prefix, closing: new AbortController(), channel: options.channel ?? false, ...(options.sessionLog ? { sessionLog: options.sessionLog } : {}) };
}

/** An MCP server whose every call acts as `agent`. */
export function createMailboxServer(runtime: MailboxRuntime, agent: string): McpServer {
  const server = new McpServer({ name: SERVER_NAME, version: VERSION }, { instructions: instructionsFor(runtime.prefix) + (runtime.channel ? channelInstructionsFor(runtime.prefix) : ''), capabilities: { tools: {} } });
  const ctx = { ...runtime, agent, closing: runtime.closing.signal };
  registerMailboxTools(server, ctx);
  const log = sessionLogger(runtime.sessionLog, agent);
  if (runtime.sessionLog) _logInitialize(server, log);
  const stops = [registerInbox(server, ctx, log), ...(runtime.channel ? [registerChannel(server, ctx, log)] : [])];
  const onclose = server.server.onclose;
  server.server.onclose = () => {
    for (const stop of stops) stop();
    onclose?.();
  };
  return server;
}

/**
 * The same tools and inbox resource for MCP 2026-07-28 (SDK 2.x), acting as `agent`.
 * Built per request by the HTTP front (modern-http.ts): the protocol has no session,
 * so nothing here outlives the request; inbox pushes ride `subscriptions/listen`,
 * which the SDK's handler serves from the front's event bus. Claude Code's channel
 * is a 2025-era session notification and is not offered here.
 */
export function createModernMailboxServer(runtime: MailboxRuntime, agent: string): ModernMcpServer {
  const server = new ModernMcpServer({ name: SERVER_NAME, version: VERSION }, { instructions: instructionsFor(runtime.prefix), capabilities: { tools: {}, resources: { subscribe: true } } });
  const ctx = { ...runtime, agent, closing: runtime.closing.signal };
  registerMailboxTools(server, ctx, (routes, logRefusal) => routeModernToolCalls(server, routes, logRefusal));
  registerInboxResource(server, ctx);
  return server;
}

/**
 * Records the version the server answers `initialize` with: the SDK's own answer
 * (it picks the client's version when it supports it, else its latest), so the
 * record is what was negotiated on the wire, not what the client claims elsewhere.
 */
function _logInitialize(server: McpServer, log: (event: SessionEvent) => void): void {
  const sdk = server.server as unknown as { _oninitialize?: (request: InitializeRequest) => Promise<InitializeResult> };
  const answer = sdk._oninitialize?.bind(server.server);
  if (!answer) throw new WitnessError('INTERNAL', 'This MCP SDK has no initialize handler to wrap: --session-log cannot record the negotiated protocol version with it.');
  server.server.setRequestHandler(InitializeRequestSchema, async (request) => {
    const result = await answer(request);
    const info = request.params.clientInfo;
    log({ event: 'initialize', protocol_version: result.protocolVersion, requested: request.params.protocolVersion, client: { name: info.name, version: info.version } });
    return result;
  });
}

/** Checks that `agent` is registered: an unknown identity fails at start, not as "no mail". */
export async function assertRegistered(runtime: MailboxRuntime, agent: string): Promise<void> {
  assertAgentName(agent, '--agent');
  if (!(await runtime.store.agents()).some((a) => a.name === agent)) {
    throw new WitnessError('NOT_FOUND', `The agent "${agent}" is not registered in ${runtime.store.dir}. Register it first: witness mailbox add-agent ${runtime.store.dir} ${agent}`);
  }
}

/**
 * Serves one agent over stdin/stdout until the client closes the stream. Requests
 * read before the end are still answered: a client may write a request and close
 * stdin at once, and its answer must not be lost (the SDK aborts every unanswered
 * request when the server closes, so the server closes only once they are answered).
 */
export async function serveStdio(runtime: MailboxRuntime, agent: string): Promise<void> {
  await assertRegistered(runtime, agent);
  const server = createMailboxServer(runtime, agent);
  const transport = new StdioServerTransport();
  // The SDK drops a line it cannot parse; answer it as JSON-RPC says (parse error /
  // invalid request, id null) so a client with a bug sees why nothing happened.
  transport.onerror = (error) => {
    const invalidJson = error instanceof SyntaxError;
    if (!invalidJson && error.name !== 'ZodError') return;
    const reply = { jsonrpc: '2.0', id: null, error: { code: invalidJson ? -32700 : -32600, message: invalidJson ? `Parse error: the line is not JSON (${error.message}).` : 'Invalid request: the line is JSON but not a JSON-RPC 2.0 message.' } };
    transport.send(reply as unknown as JSONRPCMessage).catch(() => undefined);
  };
  const closed = new Promise<void>((resolve) => {
    transport.onclose = () => resolve();
    process.stdin.once('end', () => resolve());
  });
  await server.connect(transport);
  const answered = _trackRequests(transport);
  await closed;
  runtime.closing.abort();
  await answered();
  await new Promise<void>((resolve) => process.stdout.write('', () => resolve())); // after every reply written before it
  await server.close();
  await runtime.store.close();
}

/**
 * Counts the requests a connected transport delivered and not yet answered; the
 * returned function resolves once none is left. A cancelled request gets no
 * answer (MCP cancellation), so a cancellation settles it too.
 */
function _trackRequests(transport: Transport): () => Promise<void> {
  const open = new Set<RequestId>();
  let idle: (() => void) | undefined;
  const settle = (id: RequestId) => {
    open.delete(id);
    if (open.size === 0) idle?.();
  };
  const deliver = transport.onmessage;
  transport.onmessage = (message, extra) => {
    if (isJSONRPCRequest(message)) open.add(message.id);
    else if (isJSONRPCNotification(message) && message.method === 'notifications/cancelled') {
      const id = (message.params as { requestId?: RequestId } | undefined)?.requestId;
      if (id !== undefined) settle(id);
    }
    deliver?.(message, extra);
  };
  const send = transport.send.bind(transport);
  transport.send = async (message, options) => {
    await send(message, options);
    if (isJSONRPCResultResponse(message) || isJSONRPCErrorResponse(message)) settle(message.id as RequestId);
  };
  return () => (open.size === 0 ? Promise.resolve() : new Promise<void>((resolve) => (idle = resolve)));
}
