/**
 * @module
 * What stands in front of `@a2a-js/sdk`'s Express JSON-RPC handler on the child agent
 * (`witness a2a serve`), so that clients get what A2A v1.0 and JSON-RPC 2.0 say
 * without our copying the handler: the body is read here, up to the server's limit
 * (a JSON 413 beyond it, where the SDK's body parser would answer an Express HTML page
 * with a stack trace); a body that is not JSON is -32700; a request jsonrpc-check.ts
 * refuses gets its error; a notification gets 204 and no answer, and is not run (every
 * A2A method answers, and a result nobody receives would still be signed); the version
 * may come as the `A2A-Version` query parameter (A2A v1.0 §3.6.1: clients MAY send it
 * so). What passes goes to the SDK already parsed. After the SDK, any route or error
 * left over is answered as JSON too (`jsonFallbacks`).
 */
import type { ErrorRequestHandler, Request, RequestHandler } from 'express';
import {
  INTERNAL_ERROR_MESSAGE,
  parseErrorMessage,
  readBody,
  sendJsonRpcError,
  tooLargeMessage,
} from '../core/http-server.js';
import { checkA2aRequest } from './jsonrpc-check.js';

const VERSION_HEADER = 'a2a-version';
/** JSON-RPC errors go with HTTP 200, as the SDK and the A2A TCK have them; a refused body size is an HTTP 413. */
const RPC_STATUS = 200;

/** The front of the JSON-RPC route, for a server whose request bodies are at most `limit` bytes. */
export function jsonRpcFront(limit: number): RequestHandler {
  return (req, res, next) => {
    if (req.path !== '/')
      return sendJsonRpcError(res, 404, -32601, "Not found: the JSON-RPC endpoint is the card's interface URL.");
    if (req.method !== 'POST')
      return sendJsonRpcError(
        res,
        405,
        -32600,
        `Invalid Request: ${req.method} is not allowed; send JSON-RPC requests with POST.`,
        null,
        { Allow: 'POST' },
      );
    versionFromQuery(req);
    const type = req.headers['content-type'];
    if (type !== undefined && type.split(';')[0]!.trim().toLowerCase() !== 'application/json') return next(); // the SDK answers it
    readBody(req, limit).then((bytes) => {
      if (bytes === undefined) return sendJsonRpcError(res, 413, -32600, tooLargeMessage(limit));
      let body: unknown;
      try {
        body = JSON.parse(bytes.toString('utf8'));
      } catch (error) {
        return sendJsonRpcError(res, RPC_STATUS, -32700, parseErrorMessage(error));
      }
      const check = checkA2aRequest(body);
      if (!check.ok) return sendJsonRpcError(res, RPC_STATUS, check.code, check.message, check.id);
      if (check.notification) return void res.status(204).end();
      req.body = body; // the SDK's body parser sees a request already read and keeps this
      next();
    }, next);
  };
}

/** `?A2A-Version=1.0` counts as the header when no header is sent (the name matched in any case). */
export function versionFromQuery(req: Request): void {
  if (req.headers[VERSION_HEADER] !== undefined) return;
  const query = new URL(req.originalUrl, 'http://localhost').searchParams;
  for (const [name, value] of query) {
    if (name.toLowerCase() === VERSION_HEADER) {
      req.headers[VERSION_HEADER] = value;
      return;
    }
  }
}

/** The last handlers of an Express app: a JSON 404 for any other route, and a JSON answer for any error. */
export function jsonFallbacks(): [RequestHandler, ErrorRequestHandler] {
  const notFound: RequestHandler = (_req, res) =>
    sendJsonRpcError(
      res,
      404,
      -32601,
      "Not found: this agent serves its card at /.well-known/agent-card.json and JSON-RPC at the card's interface URL.",
    );
  const failed: ErrorRequestHandler = (error: unknown, _req, res, _next) => {
    const status = _clientStatus(error);
    sendJsonRpcError(
      res,
      status ?? 500,
      status === 413 ? -32600 : -32603,
      status ? `Bad request (HTTP ${status}).` : INTERNAL_ERROR_MESSAGE,
    );
  };
  return [notFound, failed];
}

/** The 4xx status an Express or body-parser error carries, if it is the client's fault. */
function _clientStatus(error: unknown): number | undefined {
  const status =
    (error as { status?: unknown; statusCode?: unknown } | null)?.status ??
    (error as { statusCode?: unknown } | null)?.statusCode;
  return typeof status === 'number' && status >= 400 && status < 500 ? status : undefined;
}
