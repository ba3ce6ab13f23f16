/**
 * @module
 * The one HTTP front of every Witness server (the mailbox, the MCP evidence tool, the
 * co-signer, the witness): the Host/Origin guard before anything else, the request
 * body read up to the server's limit, JSON parsed without echoing the body, one error
 * shape per protocol, and a failure nobody foresaw answered with a fixed message —
 * never a stack trace or a path. A server gives its routes; the front gives every
 * route the same refusals, in the server's shape:
 *
 * - JSON-RPC endpoints (`JSON_RPC_ERRORS`): `{jsonrpc, id: null, error: {code, message}}`,
 *   with the JSON-RPC code for what was refused (-32700 parse error, -32600 invalid
 *   request, -32001 unauthorized, -32603 internal, -32000 the rest);
 * - the co-signer (`JSON_ERRORS`): `{error: {code, message}}`, `code` one of `Refusal`;
 * - the witness (`TEXT_ERRORS`): the message as `text/plain`, as every other answer of
 *   the C2SP tlog-witness protocol it speaks is text (a C2SP client reads no JSON).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { requestGuard } from './http-guard.js';
import {
  closeServer,
  INTERNAL_ERROR_MESSAGE,
  listen,
  parseErrorMessage,
  readBody,
  sendJson,
  tooLargeMessage,
} from './http-server.js';

/** What a front refuses a request for. */
export type Refusal =
  | 'FORBIDDEN'
  | 'NOT_FOUND'
  | 'METHOD_NOT_ALLOWED'
  | 'NOT_ACCEPTABLE'
  | 'UNAUTHORIZED'
  | 'TOO_LARGE'
  | 'PARSE_ERROR'
  | 'BAD_REQUEST'
  | 'REFUSED'
  | 'UNAVAILABLE'
  | 'INTERNAL';

/** How a server's refusals are written. */
export interface ErrorShape {
  send(res: ServerResponse, status: number, refusal: Refusal, message: string, headers?: Record<string, string>): void;
}

const _JSON_RPC_CODES: Partial<Record<Refusal, number>> = {
  PARSE_ERROR: -32700,
  BAD_REQUEST: -32600,
  UNAUTHORIZED: -32001,
  INTERNAL: -32603,
};

/** JSON-RPC 2.0 errors (§5.1), for MCP endpoints. */
export const JSON_RPC_ERRORS: ErrorShape = {
  send: (res, status, refusal, message, headers = {}) =>
    sendJson(
      res,
      status,
      { jsonrpc: '2.0', id: null, error: { code: _JSON_RPC_CODES[refusal] ?? -32000, message } },
      headers,
    ),
};

/** `{error: {code, message}}`, for the REST endpoints. */
export const JSON_ERRORS: ErrorShape = {
  send: (res, status, refusal, message, headers = {}) =>
    sendJson(res, status, { error: { code: refusal, message } }, headers),
};

/** The message as text/plain, for text protocols (the C2SP witness). */
export const TEXT_ERRORS: ErrorShape = {
  send: (res, status, _refusal, message, headers = {}) => {
    if (res.headersSent) {
      res.destroy();
      return;
    }
    const body = message.endsWith('\n') ? message : `${message}\n`;
    res.writeHead(status, {
      ...headers,
      'Content-Type': 'text/plain; charset=utf-8',
      'Content-Length': Buffer.byteLength(body),
    });
    res.end(body);
  },
};

/** What a route gets from the front besides the request. */
export interface FrontRequest {
  /** Refuses the request in the server's error shape (undefined, so a route can `return` it as "answered"). */
  refuse(status: number, refusal: Refusal, message: string, headers?: Record<string, string>): undefined;
  /** The body, or undefined once it was refused as too large (413 naming the limit). */
  bytes(): Promise<Buffer | undefined>;
  /** The body and its JSON, or undefined once it was refused (413, or 400 parse error saying where, never quoting it). */
  json(): Promise<{ bytes: Buffer; value: unknown } | undefined>;
}

export interface FrontOptions {
  /** What the server is, for the guard's messages ("the co-signer"). */
  what: string;
  host?: string;
  port?: number;
  allowedHosts?: string[];
  allowedOrigins?: string[];
  /** Largest request body, bytes (requestLimit). */
  limit: number;
  errors: ErrorShape;
  /**
   * Answers a failure the route threw, or returns false to have it answered as an
   * internal error. The mailbox answers its store's IO failure as 503, for one.
   */
  onError?: (error: unknown, res: ServerResponse, front: FrontRequest) => boolean;
  keepAliveTimeout?: number;
}

export interface HttpFront {
  /** The server's base URL (`http://127.0.0.1:4100`). */
  url: string;
  server: Server;
  close(): Promise<void>;
}

/** Listens with `route` behind the front; rejects with Node's own error when it cannot listen. */
export async function serveFront(
  options: FrontOptions,
  route: (req: IncomingMessage, res: ServerResponse, front: FrontRequest) => Promise<void>,
): Promise<HttpFront> {
  const host = options.host ?? '127.0.0.1';
  const guard = requestGuard({
    host,
    what: options.what,
    ...(options.allowedHosts ? { allowedHosts: options.allowedHosts } : {}),
    ...(options.allowedOrigins ? { allowedOrigins: options.allowedOrigins } : {}),
  });
  const server = createServer((req, res) => {
    const front = _frontRequest(req, res, options);
    const forbidden = guard(req.headers);
    if (forbidden) {
      front.refuse(403, 'FORBIDDEN', forbidden);
      return;
    }
    route(req, res, front).catch((error: unknown) => {
      if (options.onError?.(error, res, front)) return;
      front.refuse(500, 'INTERNAL', INTERNAL_ERROR_MESSAGE);
    });
  });
  if (options.keepAliveTimeout !== undefined) server.keepAliveTimeout = options.keepAliveTimeout;
  const url = await listen(server, options.port ?? 0, host);
  return { url, server, close: () => closeServer(server) };
}

function _frontRequest(req: IncomingMessage, res: ServerResponse, options: FrontOptions): FrontRequest {
  const refuse: FrontRequest['refuse'] = (status, refusal, message, headers) => {
    options.errors.send(res, status, refusal, message, headers);
    return undefined;
  };
  const bytes = async () => {
    const body = await readBody(req, options.limit);
    if (body === undefined) refuse(413, 'TOO_LARGE', tooLargeMessage(options.limit));
    return body;
  };
  return {
    refuse,
    bytes,
    async json() {
      const body = await bytes();
      if (body === undefined) return undefined;
      try {
        return { bytes: body, value: JSON.parse(body.toString('utf8')) as unknown };
      } catch (error) {
        refuse(400, 'PARSE_ERROR', parseErrorMessage(error));
        return undefined;
      }
    },
  };
}
