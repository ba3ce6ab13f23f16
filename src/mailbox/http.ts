/**
 * @module
 * The mailbox over Streamable HTTP (mailbox.md §1 Transports). Bound to 127.0.0.1
 * by default; the Host header is checked (DNS-rebinding protection, as the SDK's
 * `hostHeaderValidation`) and so is Origin (a browser page on another site must not
 * drive a local agent's mailbox). Each agent authenticates with its bearer token
 * (`witness mailbox add-agent`); a session is bound to the token's agent at
 * `initialize`, and every later request in it must carry the same agent's token.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { WitnessError } from '../core/errors.js';
import { hostCheck, isLoopbackOrigin, LOOPBACK_HOSTS } from '../core/http-guard.js';
import { tokenHash } from './config.js';
import { checkPost, checkProtocolVersion, HttpSession, type Post } from './http-session.js';
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

type Req = IncomingMessage;
type Res = ServerResponse;

/** Open sessions are bounded, and idle ones closed, so forgotten clients cannot pile up. */
const MAX_SESSIONS = 1024;
/** Per agent: its oldest idle session is closed to make room, so one token cannot fill the table. */
const MAX_SESSIONS_PER_AGENT = 32;
const IDLE_MS = 60 * 60_000;
/** A request body larger than this is refused (413); a message body is at most 64 KiB. */
const MAX_REQUEST_BYTES = 1024 * 1024;

interface Session {
  transport: HttpSession;
  agent: string;
  lastUsed: number;
}

export async function serveHttp(runtime: MailboxRuntime, options: HttpOptions = {}): Promise<HttpMailbox> {
  const host = options.host ?? '127.0.0.1';
  const port = options.port ?? 0;
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new WitnessError('USAGE', `The port ${port} is not a TCP port; give a whole number from 0 to 65535 (0: any free port).`);
  if (!LOOPBACK_HOSTS.has(host) && !options.allowedHosts?.length) {
    throw new WitnessError('USAGE', `Binding to ${host} exposes the mailbox beyond this machine; pass --allowed-host NAME for each host name clients will use.`);
  }
  const hostAllowed = hostCheck(options.allowedHosts?.length ? options.allowedHosts : [...LOOPBACK_HOSTS]);
  const origins = new Set(options.allowedOrigins ?? []);
  const sessions = new Map<string, Session>();

  // Plain node:http, not Express: the checks below are all this endpoint needs, and
  // Express's router and body parser cost a large share of each request's CPU.
  const server = createServer((req, res) => {
    _route(runtime, sessions, hostAllowed, origins, req, res).catch((error: unknown) => {
      if (!res.headersSent) _jsonRpcError(res, 500, -32603, `Internal error: ${(error as Error).message}`);
      else res.destroy();
    });
  });

  const sweep = setInterval(() => {
    for (const session of sessions.values()) if (Date.now() - session.lastUsed > IDLE_MS) void session.transport.close();
  }, 60_000);
  sweep.unref();

  try {
    await _listen(server, port, host);
  } catch (error) {
    clearInterval(sweep);
    await runtime.store.close();
    throw error; // a Node system error (port in use, host unknown): the CLI prints it as one line
  }
  const address = server.address() as AddressInfo;
  const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    url: `http://${shownHost}:${address.port}/mcp`,
    async close() {
      clearInterval(sweep);
      runtime.closing.abort(); // pending waits answer now, before their sessions close
      for (const { transport } of sessions.values()) await transport.close();
      sessions.clear();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await runtime.store.close();
    },
  };
}

/** Resolves once listening; rejects on a listen error (port in use, host unknown or not ours). */
function _listen(server: ReturnType<typeof createServer>, port: number, host: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

/** The checks every request passes, in the order that reveals least to a stranger. */
async function _route(runtime: MailboxRuntime, sessions: Map<string, Session>, hostAllowed: (host: string | undefined) => string | undefined, origins: Set<string>, req: Req, res: Res): Promise<void> {
  const hostProblem = hostAllowed(req.headers.host);
  if (hostProblem) return _jsonRpcError(res, 403, -32000, hostProblem);
  const origin = req.headers.origin;
  if (origin !== undefined && !origins.has(origin) && !isLoopbackOrigin(origin)) {
    return _jsonRpcError(res, 403, -32000, `Forbidden: Origin ${origin} is not allowed. Loopback origins are; add others with --allow-origin.`);
  }
  const path = (req.url ?? '/').split('?')[0];
  if (path !== '/mcp') return _jsonRpcError(res, 404, -32000, `Not found: ${path}. The MCP endpoint is /mcp.`);
  const agent = _authenticate(runtime, req);
  if (!agent) {
    res.setHeader('WWW-Authenticate', 'Bearer realm="witness-mailbox"');
    return _jsonRpcError(res, 401, -32001, 'Unauthorized: send "Authorization: Bearer <token>" with the token printed by `witness mailbox add-agent`.');
  }
  let body: unknown; // read only for a known agent: a stranger cannot make the server buffer a body
  if (req.method === 'POST') {
    const text = await _readBody(req);
    if (text === undefined) return _jsonRpcError(res, 413, -32000, `Request body too large: the limit is ${MAX_REQUEST_BYTES} bytes. Send shorter messages.`);
    try {
      body = JSON.parse(text);
    } catch (error) {
      return _jsonRpcError(res, 400, -32700, `Parse error: the request body is not valid JSON (${(error as Error).message}).`);
    }
  }
  await _handle(runtime, sessions, agent, req, res, body);
}

async function _handle(runtime: MailboxRuntime, sessions: Map<string, Session>, agent: string, req: Req, res: Res, body: unknown): Promise<void> {
  if (req.method === 'GET') {
    // The mailbox never pushes to a client, so it opens no SSE stream (the spec allows 405).
    res.setHeader('Allow', 'POST, DELETE');
    return _jsonRpcError(res, 405, -32000, 'Method not allowed: this server answers POSTs with JSON and offers no SSE stream.');
  }
  if (req.method !== 'POST' && req.method !== 'DELETE') {
    res.setHeader('Allow', 'POST, DELETE');
    return _jsonRpcError(res, 405, -32000, `Method not allowed: ${req.method}. Use POST (or DELETE to end a session).`);
  }
  const post = req.method === 'POST' ? checkPost(req.headers, body) : undefined;
  if (post && 'status' in post) return _jsonRpcError(res, post.status, post.code, post.message);
  if (post?.initialize) return _initialize(runtime, sessions, agent, post, req, res);

  const sessionId = req.headers['mcp-session-id'];
  if (typeof sessionId !== 'string') return _jsonRpcError(res, 400, -32000, 'Bad request: no mcp-session-id header; start with an initialize request.');
  const session = sessions.get(sessionId);
  if (!session) return _jsonRpcError(res, 404, -32001, `Unknown session ${sessionId}: initialize a new one.`);
  if (session.agent !== agent) return _jsonRpcError(res, 403, -32001, 'This session belongs to another agent; a token cannot act in another agent\'s session.');
  const version = checkProtocolVersion(req.headers);
  if (version) return _jsonRpcError(res, version.status, version.code, version.message);
  session.lastUsed = Date.now();
  if (!post) {
    await session.transport.close();
    res.statusCode = 200;
    return void res.end();
  }
  _answer(res, post, await session.transport.receive(post, req.headers, _closedEarly(res)));
}

async function _initialize(runtime: MailboxRuntime, sessions: Map<string, Session>, agent: string, post: Post, req: Req, res: Res): Promise<void> {
  const own = [...sessions.values()].filter((session) => session.agent === agent);
  if (own.length >= MAX_SESSIONS_PER_AGENT) await own.reduce((a, b) => (b.lastUsed < a.lastUsed ? b : a)).transport.close();
  if (sessions.size >= MAX_SESSIONS) return _jsonRpcError(res, 503, -32000, `Too many open sessions (${MAX_SESSIONS}); close unused clients (HTTP DELETE on the session) and retry.`);
  const transport = new HttpSession();
  transport.onclose = () => sessions.delete(transport.sessionId);
  await createMailboxServer(runtime, agent).connect(transport);
  sessions.set(transport.sessionId, { transport, agent, lastUsed: Date.now() });
  res.setHeader('mcp-session-id', transport.sessionId);
  _answer(res, post, await transport.receive(post, req.headers, _closedEarly(res)));
}

/** Fires when the connection closes before the answer is written (the client gave up). */
function _closedEarly(res: Res): AbortSignal {
  const controller = new AbortController();
  res.once('close', () => {
    if (!res.writableEnded) controller.abort();
  });
  return controller.signal;
}

/** 202 for a POST of notifications only; otherwise the replies as JSON (an array for a batch). */
function _answer(res: Res, post: Post, replies: JSONRPCMessage[]): void {
  if (replies.length === 0) {
    res.statusCode = 202;
    return void res.end();
  }
  const text = JSON.stringify(post.batch ? replies : replies[0]);
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

/** The body as text, or undefined when it exceeds MAX_REQUEST_BYTES. */
function _readBody(req: Req): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_REQUEST_BYTES) {
        req.removeAllListeners('data');
        req.resume();
        resolve(undefined);
      } else chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function _authenticate(runtime: MailboxRuntime, req: Req): string | undefined {
  const header = req.headers.authorization ?? '';
  const match = /^Bearer\s+(\S+)$/i.exec(header);
  if (!match?.[1]) return undefined;
  const hash = tokenHash(match[1]);
  return runtime.store.agents().find((a) => a.token_sha256 === hash)?.name;
}

function _jsonRpcError(res: Res, status: number, code: number, message: string): void {
  res.statusCode = status;
  res.setHeader('Content-Type', 'application/json');
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }));
}
