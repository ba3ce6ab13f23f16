/**
 * @module
 * The mailbox over Streamable HTTP (mailbox.md §1 Transports). Bound to 127.0.0.1
 * by default; the Host header is checked (DNS-rebinding protection, as the SDK's
 * `hostHeaderValidation`) and so is Origin (a browser page on another site must not
 * drive a local agent's mailbox). Each agent authenticates with its bearer token
 * (`witness mailbox add-agent`); a session is bound to the token's agent at
 * `initialize`, and every later request in it must carry the same agent's token.
 * The same endpoint serves MCP 2026-07-28 statelessly (modern-http.ts): a POST that
 * the SDK classifies as that era goes there, after the same guard and authentication.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { isWitnessError } from '../core/errors.js';
import { type FrontRequest, type HttpFront, JSON_RPC_ERRORS, serveFront } from '../core/http-front.js';
import { requestLimit, sendJsonRpcError } from '../core/http-server.js';
import { tokenHash } from './config.js';
import { answerPost, checkPost, checkProtocolVersion, closedEarly, HttpSession, type Post } from './http-session.js';
import { isLegacy, ModernMailbox } from './modern-http.js';
import { createMailboxServer, type MailboxRuntime } from './server.js';

export interface HttpOptions {
  host?: string;
  port?: number;
  /** Extra Origins allowed besides loopback ones (e.g. a local web UI). */
  allowedOrigins?: string[];
  /** Host names allowed when binding beyond loopback. */
  allowedHosts?: string[];
  /** Largest request body in bytes (default 1 MiB); a larger one gets a JSON 413. */
  maxRequestBytes?: number;
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
/** A request body larger than this is refused (413) unless configured; a message body is at most 64 KiB by default. */
export const DEFAULT_MAX_REQUEST_BYTES = 1024 * 1024;

const STORE_UNAVAILABLE =
  "Service unavailable: the mailbox's storage (its database or disk) failed while answering this request, and nothing of it was stored. Retry shortly; if it persists, tell the operator (`witness mailbox verify` on the server shows the cause).";

interface Session {
  transport: HttpSession;
  agent: string;
  lastUsed: number;
}

export async function serveHttp(runtime: MailboxRuntime, options: HttpOptions = {}): Promise<HttpMailbox> {
  let front: _Front;
  let http: HttpFront;
  // Plain node:http behind the one front (core/http-front.ts), not Express: its checks are
  // all this endpoint needs, and Express's router and body parser cost a large share of each request's CPU.
  try {
    const limit = requestLimit(options.maxRequestBytes, DEFAULT_MAX_REQUEST_BYTES);
    front = { runtime, sessions: new Map(), limit, modern: new ModernMailbox(runtime, limit) };
    const state = front;
    http = await serveFront(
      { what: 'the mailbox', ...options, limit, errors: JSON_RPC_ERRORS, onError: _storeUnavailable },
      (req, res, request) => _route(state, req, res, request),
    );
  } catch (error) {
    await runtime.store.close();
    throw error; // a usage error, or Node's (port in use, host unknown): the CLI prints it as one line
  }
  const sessions = front.sessions;
  const sweep = setInterval(() => {
    for (const session of sessions.values())
      if (Date.now() - session.lastUsed > IDLE_MS) void session.transport.close();
  }, 60_000);
  sweep.unref();
  return {
    url: `${http.url}/mcp`,
    async close() {
      clearInterval(sweep);
      runtime.closing.abort(); // pending waits answer now, before their sessions close
      for (const { transport } of sessions.values()) await transport.close();
      sessions.clear();
      await front.modern.close();
      await http.close();
      await runtime.store.close();
    },
  };
}

/**
 * The store could not be read (its database is down, say): a temporary failure, and
 * nothing was stored. Its own message names paths and addresses, which are the operator's.
 */
function _storeUnavailable(error: unknown, res: ServerResponse): boolean {
  if (!isWitnessError(error, 'IO')) return false;
  sendJsonRpcError(res, 503, -32000, STORE_UNAVAILABLE, null, { 'Retry-After': '1' });
  return true;
}

/** What every request of one server sees. */
interface _Front {
  runtime: MailboxRuntime;
  sessions: Map<string, Session>;
  /** Largest request body, bytes. */
  limit: number;
  /** MCP 2026-07-28 requests. */
  modern: ModernMailbox;
}

/** The checks every request passes after the front's Host/Origin guard, in the order that reveals least to a stranger. */
async function _route(front: _Front, req: Req, res: Res, request: FrontRequest): Promise<void> {
  const path = (req.url ?? '/').split('?')[0];
  if (path !== '/mcp') return request.refuse(404, 'NOT_FOUND', 'Not found: the MCP endpoint is /mcp.');
  const agent = await _authenticate(front.runtime, req);
  if (!agent)
    return request.refuse(
      401,
      'UNAUTHORIZED',
      'Unauthorized: send "Authorization: Bearer <token>" with the token printed by `witness mailbox add-agent`.',
      { 'WWW-Authenticate': 'Bearer realm="witness-mailbox"' },
    );
  let body: unknown; // read only for a known agent: a stranger cannot make the server buffer a body
  if (req.method === 'POST') {
    const read = await request.json();
    if (!read) return;
    body = read.value;
    // MCP 2026-07-28, or a request claiming it: the SDK's handler answers or refuses it.
    if (!isLegacy(req.headers, body)) return front.modern.answer(agent, req, res, read.bytes, body);
  }
  await _handle(front.runtime, front.sessions, agent, req, res, body);
}

async function _handle(
  runtime: MailboxRuntime,
  sessions: Map<string, Session>,
  agent: string,
  req: Req,
  res: Res,
  body: unknown,
): Promise<void> {
  if (req.method !== 'POST' && req.method !== 'DELETE' && req.method !== 'GET') {
    res.setHeader('Allow', 'GET, POST, DELETE');
    return _jsonRpcError(
      res,
      405,
      -32000,
      `Method not allowed: ${req.method}. Use POST, GET (the server's event stream) or DELETE (to end a session).`,
    );
  }
  if (req.method === 'GET' && !(req.headers.accept ?? '').includes('text/event-stream')) {
    return _jsonRpcError(
      res,
      406,
      -32000,
      "Not Acceptable: a GET opens the server's event stream; its Accept header must list text/event-stream.",
    );
  }
  const post = req.method === 'POST' ? checkPost(req.headers, body) : undefined;
  if (post && 'status' in post) return _jsonRpcError(res, post.status, post.code, post.message);
  if (post?.initialize) {
    // As the SDK's transport: initialize opens a session, so one sent inside a session is refused.
    if (req.headers['mcp-session-id'] !== undefined)
      return _jsonRpcError(
        res,
        400,
        -32600,
        'Invalid Request: initialize opens a new session and is sent without mcp-session-id; this session is already initialized.',
      );
    return _initialize(runtime, sessions, agent, post, req, res);
  }

  const sessionId = req.headers['mcp-session-id'];
  if (typeof sessionId !== 'string')
    return _jsonRpcError(res, 400, -32000, 'Bad request: no mcp-session-id header; start with an initialize request.');
  const session = sessions.get(sessionId);
  if (!session) return _jsonRpcError(res, 404, -32001, `Unknown session ${sessionId}: initialize a new one.`);
  if (session.agent !== agent)
    return _jsonRpcError(
      res,
      403,
      -32001,
      "This session belongs to another agent; a token cannot act in another agent's session.",
    );
  const version = checkProtocolVersion(req.headers);
  if (version) return _jsonRpcError(res, version.status, version.code, version.message);
  session.lastUsed = Date.now();
  if (req.method === 'GET') {
    if (!session.transport.openStream(res))
      return _jsonRpcError(
        res,
        409,
        -32000,
        'Conflict: this session already has its event stream open (one per session).',
      );
    return;
  }
  if (!post) {
    await session.transport.close();
    res.statusCode = 200;
    return void res.end();
  }
  answerPost(res, post, await session.transport.receive(post, req.headers, closedEarly(res)));
}

async function _initialize(
  runtime: MailboxRuntime,
  sessions: Map<string, Session>,
  agent: string,
  post: Post,
  req: Req,
  res: Res,
): Promise<void> {
  const own = [...sessions.values()].filter((session) => session.agent === agent);
  if (own.length >= MAX_SESSIONS_PER_AGENT)
    await own.reduce((a, b) => (b.lastUsed < a.lastUsed ? b : a)).transport.close();
  if (sessions.size >= MAX_SESSIONS)
    return _jsonRpcError(
      res,
      503,
      -32000,
      `Too many open sessions (${MAX_SESSIONS}); close unused clients (HTTP DELETE on the session) and retry.`,
    );
  const transport = new HttpSession();
  transport.onclose = () => sessions.delete(transport.sessionId);
  await createMailboxServer(runtime, agent).connect(transport);
  sessions.set(transport.sessionId, { transport, agent, lastUsed: Date.now() });
  res.setHeader('mcp-session-id', transport.sessionId);
  answerPost(res, post, await transport.receive(post, req.headers, closedEarly(res)));
}

async function _authenticate(runtime: MailboxRuntime, req: Req): Promise<string | undefined> {
  const header = req.headers.authorization ?? '';
  const match = /^Bearer\s+(\S+)$/i.exec(header);
  if (!match?.[1]) return undefined;
  const hash = tokenHash(match[1]);
  return (await runtime.store.agents()).find((a) => a.token_sha256 === hash)?.name;
}

const _jsonRpcError = (res: Res, status: number, code: number, message: string): void =>
  sendJsonRpcError(res, status, code, message);
