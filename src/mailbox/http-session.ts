/**
 * @module
 * One Streamable HTTP session of the mailbox, as a transport for the SDK's
 * `McpServer`, in the spec's JSON-response mode: a POST carries JSON-RPC messages
 * and its answer carries the responses to the requests among them.
 *
 * Why not the SDK's `WebStandardStreamableHTTPServerTransport`: behind node:http it
 * needs a Web `Request` and `Response` per call (Headers, URL, web streams), which
 * cost about as much CPU as the mailbox's own durable send on a small machine
 * (NOTES.md, "Mailbox over HTTP"). The mailbox's tools never stream and never ask
 * the client anything, so a session here is a map from request id to the HTTP answer
 * waiting for it; the checks the SDK transport makes on each POST (Accept,
 * Content-Type, session, protocol version, message shape) are made in `checkPost`
 * with the same status codes. What the server sends on its own — resource updates
 * for a subscribed inbox, channel events — goes down the session's one standalone
 * SSE stream, which a client opens with GET (as the spec's "Listening for Messages
 * from the Server"); without one, such notifications are dropped, as the spec allows.
 * A client that opens the stream and does not read it is disconnected once
 * MAX_STREAM_BUFFER_BYTES wait unsent, rather than buffered without end.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  isInitializeRequest,
  isJSONRPCRequest,
  type JSONRPCMessage,
  JSONRPCMessageSchema,
  type RequestId,
  SUPPORTED_PROTOCOL_VERSIONS,
} from '@modelcontextprotocol/sdk/types.js';

/** A JSON-RPC batch larger than this is refused, as the SDK transport does. */
const MAX_BATCH = 100;
/**
 * Bytes of events a session's SSE stream may hold unsent (the client not reading): a
 * write that would pass it closes the stream instead (docs/mailbox.md). 1 MiB is ~10,000
 * inbox notices, or 15 channel events of the largest body; a client that reads is
 * never near it, and 128 that do not cost at most 128 MiB, not memory without end.
 */
export const MAX_STREAM_BUFFER_BYTES = 1024 * 1024;
/** The JSON-RPC error code LSP and others use for a cancelled request. */
const REQUEST_CANCELLED = -32800;

/** An HTTP answer: status, JSON-RPC error code and message. */
export interface Refusal {
  status: number;
  code: number;
  message: string;
}

/** What one POST carries, once checked. */
export interface Post {
  messages: JSONRPCMessage[];
  batch: boolean;
  initialize: boolean;
}

/** Checks a POST the way the Streamable HTTP spec asks; returns the messages or why not. */
export function checkPost(headers: IncomingHttpHeaders, body: unknown): Post | Refusal {
  const accept = headers.accept ?? '';
  if (!accept.includes('application/json') || !accept.includes('text/event-stream')) {
    return {
      status: 406,
      code: -32000,
      message: 'Not Acceptable: the Accept header must list both application/json and text/event-stream.',
    };
  }
  const type = (headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  if (type !== 'application/json')
    return { status: 415, code: -32000, message: 'Unsupported Media Type: Content-Type must be application/json.' };
  const batch = Array.isArray(body);
  const raw = batch ? (body as unknown[]) : [body];
  if (raw.length === 0 || raw.length > MAX_BATCH)
    return { status: 400, code: -32600, message: `Invalid Request: a batch holds 1 to ${MAX_BATCH} messages.` };
  const messages: JSONRPCMessage[] = [];
  for (const item of raw) {
    const parsed = JSONRPCMessageSchema.safeParse(item);
    // JSON-RPC 2.0 §5.1: valid JSON that is not a Request object is an Invalid Request (-32600), as on stdio.
    if (!parsed.success)
      return {
        status: 400,
        code: -32600,
        message: 'Invalid Request: the body is JSON but not a JSON-RPC 2.0 message.',
      };
    messages.push(parsed.data);
  }
  const initialize = messages.some(isInitializeRequest);
  if (initialize && messages.length > 1)
    return { status: 400, code: -32600, message: 'Invalid Request: initialize must be sent alone.' };
  return { messages, batch, initialize };
}

/** A supported MCP-Protocol-Version header, or absent (then the negotiated version applies). */
export function checkProtocolVersion(headers: IncomingHttpHeaders): Refusal | undefined {
  const version = headers['mcp-protocol-version'];
  if (version === undefined || (typeof version === 'string' && SUPPORTED_PROTOCOL_VERSIONS.includes(version)))
    return undefined;
  return {
    status: 400,
    code: -32000,
    message: `Bad Request: unsupported protocol version ${String(version)} (supported: ${SUPPORTED_PROTOCOL_VERSIONS.join(', ')}).`,
  };
}

/** Fires when the connection closes before the answer is written (the client gave up). */
export function closedEarly(res: ServerResponse): AbortSignal {
  const controller = new AbortController();
  res.once('close', () => {
    if (!res.writableEnded) controller.abort();
  });
  return controller.signal;
}

/** Answers one POST: 202 for notifications only; otherwise the replies as JSON (an array for a batch). */
export function answerPost(res: ServerResponse, post: Post, replies: JSONRPCMessage[]): void {
  if (replies.length === 0) {
    res.statusCode = 202;
    return void res.end();
  }
  const text = JSON.stringify(post.batch ? replies : replies[0]);
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

export class HttpSession implements Transport {
  readonly sessionId = randomUUID();
  onmessage?: Transport['onmessage'];
  onclose?: () => void;
  onerror?: (error: Error) => void;
  private readonly waiting = new Map<RequestId, (reply: JSONRPCMessage) => void>();
  private closed = false;
  /** The standalone SSE stream (GET), while the client keeps it open. */
  private stream: ServerResponse | undefined;
  private nextEventId = 1;

  async start(): Promise<void> {}

  /** Called by the server with each reply (to the POST that asked) and each message of its own (to the SSE stream). */
  async send(message: JSONRPCMessage): Promise<void> {
    if ('id' in message && !('method' in message) && message.id !== undefined)
      return void this.settle(message.id, message);
    const stream = this.stream;
    if (!stream || stream.writableEnded || stream.destroyed) return; // no listener: the spec lets the server drop it
    const event = `id: ${this.nextEventId++}\nevent: message\ndata: ${JSON.stringify(message)}\n\n`;
    // Backpressure: what the socket has not taken yet waits in writableLength. A client
    // that lets it grow past the bound is not reading; it is disconnected (it may open
    // the stream again, and read the inbox for what it missed).
    if (stream.writableLength + Buffer.byteLength(event) > MAX_STREAM_BUFFER_BYTES) {
      this.stream = undefined;
      stream.destroy();
      return;
    }
    stream.write(event);
  }

  /** Opens the session's standalone SSE stream; false when one is open already (one per session, as the SDK's transport). */
  openStream(res: ServerResponse): boolean {
    if (this.stream && !this.stream.writableEnded) return false;
    this.stream = res;
    res.writeHead(200, {
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
      'mcp-session-id': this.sessionId,
    });
    res.flushHeaders();
    res.once('close', () => {
      if (this.stream === res) this.stream = undefined;
    });
    return true;
  }

  /**
   * Delivers one POST's messages; resolves with the replies to its requests, in
   * request order. A request id already waiting in this session is answered with an
   * error instead of being delivered (its reply could not be told apart).
   * A `notifications/cancelled` for a waiting request answers that request's POST
   * (the server sends no reply to a cancelled request). When `closed` fires (the
   * client went away), this POST's requests are cancelled at the server.
   */
  receive(post: Post, headers: IncomingHttpHeaders, closed?: AbortSignal): Promise<JSONRPCMessage[]> {
    if (this.closed)
      return Promise.resolve(
        post.messages.filter(isJSONRPCRequest).map((m) => _error(m.id, -32001, 'Session closed.')),
      );
    const replies: Promise<JSONRPCMessage>[] = [];
    const deliver: JSONRPCMessage[] = [];
    const mine: RequestId[] = [];
    for (const message of post.messages) {
      if (!isJSONRPCRequest(message)) {
        const cancelled = _cancelledId(message);
        if (cancelled !== undefined)
          this.settle(cancelled, _error(cancelled, REQUEST_CANCELLED, 'Request cancelled by the client.'));
        deliver.push(message);
      } else if (this.waiting.has(message.id)) {
        replies.push(
          Promise.resolve(
            _error(
              message.id,
              -32600,
              `Invalid Request: request id ${String(message.id)} is already in flight in this session.`,
            ),
          ),
        );
      } else {
        replies.push(new Promise((resolve) => this.waiting.set(message.id, resolve)));
        deliver.push(message);
        mine.push(message.id);
      }
    }
    closed?.addEventListener('abort', () => this.abandon(mine), { once: true });
    const extra = { requestInfo: { headers } };
    for (const message of deliver) this.onmessage?.(message, extra);
    return Promise.all(replies);
  }

  /** The client is gone: stop what it asked for, so no reply waits for nobody. */
  private abandon(ids: RequestId[]): void {
    for (const id of ids) {
      if (!this.settle(id, _error(id, REQUEST_CANCELLED, 'The HTTP request was closed.'))) continue;
      this.onmessage?.({
        jsonrpc: '2.0',
        method: 'notifications/cancelled',
        params: { requestId: id, reason: 'The HTTP request was closed before the reply.' },
      });
    }
  }

  /** Answers a waiting request; false when it was not waiting. */
  private settle(id: RequestId, reply: JSONRPCMessage): boolean {
    const answer = this.waiting.get(id);
    if (!answer) return false;
    this.waiting.delete(id);
    answer(reply);
    return true;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const [id, answer] of this.waiting)
      answer(_error(id, -32001, 'Session closed before the request was answered.'));
    this.waiting.clear();
    this.stream?.end();
    this.stream = undefined;
    this.onclose?.();
  }
}

function _cancelledId(message: JSONRPCMessage): RequestId | undefined {
  if (!('method' in message) || message.method !== 'notifications/cancelled') return undefined;
  const id = (message.params as { requestId?: unknown } | undefined)?.requestId;
  return typeof id === 'string' || typeof id === 'number' ? id : undefined;
}

function _error(id: RequestId, code: number, message: string): JSONRPCMessage {
  return { jsonrpc: '2.0', id, error: { code, message } };
}
