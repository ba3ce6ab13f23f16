/**
 * @module
 * The mailbox over Streamable HTTP (mailbox.md §1 Transports). Bound to 127.0.0.1
 * by default; the Host header is checked (DNS-rebinding protection from
 * `createMcpExpressApp`) and so is Origin (a browser page on another site must not
 * drive a local agent's mailbox). Each agent authenticates with its bearer token
 * (`witness mailbox add-agent`); a session is bound to the token's agent at
 * `initialize`, and every later request in it must carry the same agent's token.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createMcpExpressApp } from '@modelcontextprotocol/sdk/server/express.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { WitnessError } from '../core/errors.js';
import { tokenHash } from './config.js';
import { createMailboxServer, type MailboxRuntime } from './server.js';

export interface HttpOptions {
  host?: string;
  port?: number;
  /** Extra Origins allowed besides loopback ones (e.g. a local web UI). */
  allowedOrigins?: string[];
  /** Host names allowed when binding beyond loopback. */
  allowedHosts?: string[];
}

export interface HttpMailbox {
  url: string;
  close(): Promise<void>;
}

type Req = IncomingMessage & { body?: unknown };
type Handler = (req: Req, res: ServerResponse, next: (error?: unknown) => void) => void;
/** The part of the Express app used here (`@types/express` is not installed). */
interface App {
  use(handler: Handler | ((error: unknown, req: Req, res: ServerResponse, next: () => void) => void)): void;
  all(path: string, handler: (req: Req, res: ServerResponse) => void): void;
  listen(port: number, host: string, callback: (error?: Error) => void): Server;
}

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '::1', '[::1]']);
/** Open sessions are bounded, and idle ones closed, so forgotten clients cannot pile up. */
const MAX_SESSIONS = 1024;
const IDLE_MS = 60 * 60_000;

interface Session {
  transport: WebStandardStreamableHTTPServerTransport;
  agent: string;
  lastUsed: number;
}

export async function serveHttp(runtime: MailboxRuntime, options: HttpOptions = {}): Promise<HttpMailbox> {
  const host = options.host ?? '127.0.0.1';
  if (!LOOPBACK.has(host) && !options.allowedHosts?.length) {
    throw new WitnessError('USAGE', `Binding to ${host} exposes the mailbox beyond this machine; pass --allowed-host NAME for each host name clients will use.`);
  }
  const app = createMcpExpressApp({ host, ...(options.allowedHosts?.length ? { allowedHosts: options.allowedHosts } : {}) }) as unknown as App;
  const sessions = new Map<string, Session>();

  app.use(_originCheck(new Set(options.allowedOrigins ?? [])));
  app.use((error: unknown, _req: Req, res: ServerResponse, _next: () => void) => {
    // express.json() rejects a body that is not JSON: answer as JSON-RPC, not an HTML page.
    _jsonRpcError(res, 400, -32700, `Parse error: the request body is not valid JSON (${(error as Error).message}).`);
  });
  app.all('/mcp', (req, res) => {
    _handle(runtime, sessions, req, res).catch((error: unknown) => {
      if (!res.headersSent) _jsonRpcError(res, 500, -32603, `Internal error: ${(error as Error).message}`);
    });
  });

  const sweep = setInterval(() => {
    for (const session of sessions.values()) if (Date.now() - session.lastUsed > IDLE_MS) void session.transport.close();
  }, 60_000);
  sweep.unref();

  const server = await new Promise<Server>((resolve, reject) => {
    const s = app.listen(options.port ?? 0, host, (error) => (error ? reject(error) : resolve(s)));
  });
  const address = server.address() as AddressInfo;
  const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    url: `http://${shownHost}:${address.port}/mcp`,
    async close() {
      clearInterval(sweep);
      for (const { transport } of sessions.values()) await transport.close();
      sessions.clear();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await runtime.store.close();
    },
  };
}

async function _handle(runtime: MailboxRuntime, sessions: Map<string, Session>, req: Req, res: ServerResponse): Promise<void> {
  const agent = _authenticate(runtime, req);
  if (!agent) {
    res.setHeader('WWW-Authenticate', 'Bearer realm="witness-mailbox"');
    return _jsonRpcError(res, 401, -32001, 'Unauthorized: send "Authorization: Bearer <token>" with the token printed by `witness mailbox add-agent`.');
  }
  const sessionId = req.headers['mcp-session-id'];
  if (typeof sessionId === 'string') {
    const session = sessions.get(sessionId);
    if (!session) return _jsonRpcError(res, 404, -32001, `Unknown session ${sessionId}: initialize a new one.`);
    if (session.agent !== agent) return _jsonRpcError(res, 403, -32001, 'This session belongs to another agent; a token cannot act in another agent\'s session.');
    session.lastUsed = Date.now();
    return _relay(res, await session.transport.handleRequest(_webRequest(req), { parsedBody: req.body }));
  }
  if (req.method !== 'POST' || !isInitializeRequest(req.body)) {
    return _jsonRpcError(res, 400, -32000, 'Bad request: no mcp-session-id header; start with an initialize request.');
  }
  if (sessions.size >= MAX_SESSIONS) return _jsonRpcError(res, 503, -32000, `Too many open sessions (${MAX_SESSIONS}); close unused clients (HTTP DELETE on the session) and retry.`);
  const transport: WebStandardStreamableHTTPServerTransport = new WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: () => randomUUID(),
    enableJsonResponse: true,
    onsessioninitialized: (id) => {
      sessions.set(id, { transport, agent, lastUsed: Date.now() });
    },
  });
  transport.onclose = () => {
    if (transport.sessionId) sessions.delete(transport.sessionId);
  };
  await createMailboxServer(runtime, agent).connect(transport);
  await _relay(res, await transport.handleRequest(_webRequest(req), { parsedBody: req.body }));
}

/**
 * Node ↔ Web adapter. The SDK's Node wrapper (`StreamableHTTPServerTransport`) costs
 * ~8 ms per request on this machine class; building the Request ourselves (the body
 * is already parsed) and relaying the Response costs a fraction of that.
 */
function _webRequest(req: Req): Request {
  const headers = new Headers();
  for (const [key, value] of Object.entries(req.headers)) {
    if (value !== undefined) headers.set(key, Array.isArray(value) ? value.join(', ') : value);
  }
  return new Request(`http://${req.headers.host ?? 'localhost'}${req.url ?? '/mcp'}`, { method: req.method ?? 'GET', headers });
}

async function _relay(res: ServerResponse, response: Response): Promise<void> {
  const headers: Record<string, string> = {};
  response.headers.forEach((value, key) => {
    headers[key] = value;
  });
  res.writeHead(response.status, headers);
  if (!response.body) return void res.end();
  const reader = response.body.getReader();
  res.on('close', () => void reader.cancel().catch(() => undefined)); // an SSE stream ends when the client goes
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    res.write(value);
  }
  res.end();
}

function _authenticate(runtime: MailboxRuntime, req: Req): string | undefined {
  const header = req.headers.authorization ?? '';
  const match = /^Bearer\s+(\S+)$/i.exec(header);
  if (!match?.[1]) return undefined;
  const hash = tokenHash(match[1]);
  return runtime.store.agents().find((a) => a.token_sha256 === hash)?.name;
}

function _originCheck(allowed: Set<string>): Handler {
  return (req, res, next) => {
    const origin = req.headers.origin;
    if (origin === undefined || allowed.has(origin) || _isLoopbackOrigin(origin)) return next();
    _jsonRpcError(res, 403, -32000, `Forbidden: Origin ${origin} is not allowed. Loopback origins are; add others with --allow-origin.`);
  };
}

function _isLoopbackOrigin(origin: string): boolean {
  try {
    const url = new URL(origin);
    return (url.protocol === 'http:' || url.protocol === 'https:') && LOOPBACK.has(url.hostname);
  } catch {
    return false;
  }
}

function _jsonRpcError(res: ServerResponse, status: number, code: number, message: string): void {
  res.statusCode = status;
  res.setHeader('Content-Type', 'application/json');
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }));
}
