/**
 * @module
 * MCP 2026-07-28 on the mailbox's HTTP endpoint, beside the 2025-11-25 sessions of
 * http.ts: one endpoint, two protocol eras. The era of each POST is decided by the
 * 2.x SDK's own classifier (`classifyInboundRequest`: the per-request `_meta`
 * envelope, the `MCP-Protocol-Version` and `Mcp-Method` headers), so this server and
 * the SDK cannot disagree about what a request is.
 *
 * A 2026 request is answered statelessly by the SDK's handler (`createMcpHandler`,
 * 2025 traffic refused there, since http.ts serves it): any server process of a
 * mailbox can answer any request, which is what lets several share one PostgreSQL
 * mailbox behind a plain load balancer. Identity is still the server's: the bearer
 * token of *this* request picks the agent (http.ts authenticates before it gets
 * here), and each agent has its own handler, whose server acts only as that agent.
 *
 * Push: `subscriptions/listen` streams are fed by each agent's event bus, which
 * watches the agent's inbox (`watchInbox`, the same source as 2025's
 * `resources/subscribe`: store wake-ups such as LISTEN/NOTIFY, and a slow poll) only
 * while a stream is open.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  classifyInboundRequest,
  createMcpHandler,
  InMemoryServerEventBus,
  type McpHttpHandler,
  type McpServer as ModernMcpServer,
  type ServerEvent,
  type ServerEventBus,
} from '@modelcontextprotocol/server';
import { INBOX_URI, watchInbox } from './push.js';
import { modernSessionEvents, sessionLogger, type WireWatcher } from './session-log.js';
import { createModernMailboxServer, type MailboxRuntime } from './server.js';

/**
 * Whether a POST with JSON body `body` is MCP 2025-11-25, by the SDK's classifier. Any
 * other request claims 2026-07-28 — a valid one or one whose envelope or headers are
 * wrong — and is the SDK's handler's to answer or refuse, with the revision's codes.
 */
export function isLegacy(headers: IncomingMessage['headers'], body: unknown): boolean {
  const header = (name: string) => (typeof headers[name] === 'string' ? (headers[name] as string) : undefined);
  return (
    classifyInboundRequest({
      httpMethod: 'POST',
      ...(header('mcp-protocol-version') !== undefined
        ? { protocolVersionHeader: header('mcp-protocol-version') }
        : {}),
      ...(header('mcp-method') !== undefined ? { mcpMethodHeader: header('mcp-method') } : {}),
      ...(header('mcp-name') !== undefined ? { mcpNameHeader: header('mcp-name') } : {}),
      body,
    }).kind === 'legacy'
  );
}

/** The 2026-07-28 side of one mailbox HTTP server: a handler per agent, made when the agent first calls. */
export class ModernMailbox {
  readonly #agents = new Map<string, { handler: McpHttpHandler; log: WireWatcher | undefined }>();

  constructor(
    private readonly runtime: MailboxRuntime,
    private readonly maxRequestBytes: number,
  ) {}

  /** Answers one authenticated 2026 POST as `agent`; the body was read and parsed by the caller. */
  answer(agent: string, req: IncomingMessage, res: ServerResponse, bytes: Buffer, body: unknown): Promise<void> {
    const { handler, log } = this.#agent(agent);
    log?.inbound(body);
    const id = (body as { id?: unknown } | null)?.id;
    return answerModern(
      handler,
      req,
      res,
      bytes,
      body,
      log && ((status, error) => log.answered(id, status === 200 && !error)),
    );
  }

  async close(): Promise<void> {
    const agents = [...this.#agents.values()];
    this.#agents.clear();
    await Promise.all(agents.map((a) => a.handler.close()));
  }

  #agent(agent: string): { handler: McpHttpHandler; log: WireWatcher | undefined } {
    let entry = this.#agents.get(agent);
    if (!entry) {
      const ctx = { ...this.runtime, agent, closing: this.runtime.closing.signal };
      const logger = this.runtime.sessionLog ? sessionLogger(this.runtime.sessionLog, agent) : undefined;
      // No resource_updated is logged here: the SDK's listen router, not this server,
      // decides which streams a notice goes down, so it is not known to have been sent.
      const bus = new _InboxBus((onChange) => watchInbox(ctx, onChange));
      const handler = createMcpHandler(
        pooled(() => createModernMailboxServer(this.runtime, agent)),
        { legacy: 'reject', bus, maxRequestBodySize: this.maxRequestBytes },
      );
      entry = { handler, log: logger ? modernSessionEvents(logger) : undefined };
      this.#agents.set(agent, entry);
    }
    return entry;
  }
}

/** Idle servers kept per agent: as many as its requests in flight at once, up to this. */
const MAX_IDLE_SERVERS = 32;

/**
 * A factory that hands out idle servers before it builds one. Building a server per
 * request (what the SDK's handler does with a plain factory) cost more than the rest
 * of a send: seven tools registered, their Zod schemas compiled again and converted
 * to JSON Schema again on every call (bench/mailbox.ts: 1,725 µs of server CPU per
 * send against 638 for a 2025 session). A server is handed out only when it serves
 * no request (the handler checks that too), and comes back when its exchange closes.
 * What it holds is the agent's, never a request's: the handler seeds the client's
 * identity from each request's `_meta`.
 */
export function pooled(build: () => ModernMcpServer): () => ModernMcpServer {
  const idle: ModernMcpServer[] = [];
  return () => {
    let server = idle.pop();
    while (server && server.server.transport !== undefined) server = idle.pop();
    const lent = server ?? build();
    let out = true;
    lent.server.onclose = () => {
      if (!out) return;
      out = false;
      if (idle.length < MAX_IDLE_SERVERS) idle.push(lent);
    };
    return lent;
  };
}

/**
 * The SDK's in-memory bus, plus the agent's inbox as a source of `resource_updated`
 * events while anything listens, so an idle agent costs no watcher.
 */
class _InboxBus implements ServerEventBus {
  readonly #bus = new InMemoryServerEventBus();
  #listeners = 0;
  #stop: (() => void) | undefined;

  constructor(private readonly watch: (onChange: () => Promise<void>) => () => void) {}

  publish(event: ServerEvent): void {
    this.#bus.publish(event);
  }

  subscribe(listener: (event: ServerEvent) => void): () => void {
    const off = this.#bus.subscribe(listener);
    if (this.#listeners++ === 0) {
      this.#stop = this.watch(async () => this.#bus.publish({ kind: 'resource_updated', uri: INBOX_URI }));
    }
    let subscribed = true;
    return () => {
      if (!subscribed) return;
      subscribed = false;
      off();
      if (--this.#listeners === 0) {
        this.#stop?.();
        this.#stop = undefined;
      }
    };
  }
}

/** Answers one 2026 POST, already read and parsed, with `handler` (the SDK's, `legacy: 'reject'`). */
export async function answerModern(
  handler: McpHttpHandler,
  req: IncomingMessage,
  res: ServerResponse,
  bytes: Buffer,
  body: unknown,
  /** Told how the request was answered (the session log of a server/discover); JSON answers only. */
  onAnswer?: (status: number, error: boolean) => void,
): Promise<void> {
  const gone = new AbortController();
  res.once('close', () => gone.abort());
  const request = new Request(`http://127.0.0.1${req.url ?? '/mcp'}`, {
    method: 'POST',
    headers: _headers(req.headers),
    body: bytes,
    signal: gone.signal,
  });
  const response = await handler.fetch(request, { parsedBody: body });
  if (onAnswer && (response.headers.get('content-type') ?? '').startsWith('application/json'))
    onAnswer(response.status, await _isError(response.clone()));
  await _send(response, res);
}

/** Whether a JSON answer is a JSON-RPC error (or not JSON-RPC at all). */
async function _isError(response: Response): Promise<boolean> {
  try {
    const value = (await response.json()) as { error?: unknown; result?: unknown } | null;
    return value?.error !== undefined || value?.result === undefined;
  } catch {
    return true;
  }
}

function _headers(headers: IncomingMessage['headers']): Headers {
  const out = new Headers();
  for (const [name, value] of Object.entries(headers)) {
    if (typeof value === 'string') out.set(name, value);
    else if (Array.isArray(value)) for (const v of value) out.append(name, v);
  }
  return out;
}

/**
 * Writes the SDK's answer to the socket: a JSON body, or an SSE stream (a tool call
 * that streams, a `subscriptions/listen`) written as it comes, waiting for the socket
 * to drain, and cancelled when the client goes away.
 */
async function _send(response: Response, res: ServerResponse): Promise<void> {
  const headers: Record<string, string> = {};
  response.headers.forEach((value, name) => {
    headers[name] = value;
  });
  res.writeHead(response.status, headers);
  if (!response.body) return void res.end();
  const reader = response.body.getReader();
  const cancel = () => void reader.cancel().catch(() => undefined);
  res.once('close', cancel);
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done || res.destroyed) break;
      if (!res.write(value)) await _drained(res);
    }
  } catch {
    // The stream was cancelled (the client left) or the server is closing: nothing more to send.
  } finally {
    res.off('close', cancel);
    res.end();
  }
}

function _drained(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.once('drain', done);
    res.once('close', done);
  });
}
