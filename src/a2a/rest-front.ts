/**
 * @module
 * What stands in front of `@a2a-js/sdk`'s Express HTTP+JSON handler (A2A v1.0 §11) on
 * the child agent, as jsonrpc-front.ts does for JSON-RPC: a body is read here up to the
 * server's limit (a 413 beyond it, where the SDK's body parser would stop at 100 KB);
 * a body that is not JSON is a 400 that says where it broke and never quotes it; a
 * message without a role or parts, a `historyLength` that is not a whole number ≥ 0 or a
 * `statusTimestampAfter` that is not a timestamp is a 400 (the checks of
 * jsonrpc-check.ts, by the method the route stands for, on the body or the query); the
 * version may come as the `A2A-Version` query parameter. Every refusal is in the
 * binding's error shape, google.rpc.Status as JSON: `{error: {code, status, message,
 * details}}`, as the SDK writes its own.
 */
import type { ServerResponse } from 'node:http';
import type { ErrorRequestHandler, RequestHandler } from 'express';
import { type ErrorShape, JSON_RPC_ERRORS, type Refusal } from '../core/http-front.js';
import { INTERNAL_ERROR_MESSAGE, parseErrorMessage, readBody, sendJson, tooLargeMessage } from '../core/http-server.js';
import { REST_ROUTE } from './card.js';
import { paramsProblem } from './jsonrpc-check.js';
import { versionFromQuery } from './jsonrpc-front.js';

/** The binding's media type (A2A v1.0 §11.4). */
const A2A_CONTENT_TYPE = 'application/a2a+json';
/** Content types whose bodies are read here; any other is the SDK's to refuse (ContentTypeNotSupportedError). */
const JSON_TYPES = new Set(['application/json', A2A_CONTENT_TYPE]);

/** google.rpc.Code names for the HTTP statuses this front answers. */
const STATUS_NAMES: Record<number, string> = {
  400: 'INVALID_ARGUMENT',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  405: 'UNIMPLEMENTED',
  413: 'INVALID_ARGUMENT',
  500: 'INTERNAL',
  503: 'UNAVAILABLE',
};

/** An HTTP+JSON error answer, as the binding's media type (§11.4), as the SDK sends its own. */
export function sendRestError(
  res: ServerResponse,
  status: number,
  message: string,
  headers: Record<string, string> = {},
): void {
  const body = { error: { code: status, status: STATUS_NAMES[status] ?? 'UNKNOWN', message, details: [] } };
  sendJson(res, status, body, { ...headers, 'Content-Type': A2A_CONTENT_TYPE });
}

/** True for a path (no query) of the HTTP+JSON binding. */
export function isRestRoute(path: string): boolean {
  return REST_ROUTE.test(path);
}

/** The agent's one error shape for the front's refusals: HTTP+JSON on its routes, JSON-RPC elsewhere. */
export const A2A_ERRORS: ErrorShape = {
  send(res, status, refusal: Refusal, message, headers) {
    if (isRestRoute((res.req?.url ?? '').split('?')[0] as string)) sendRestError(res, status, message, headers);
    else JSON_RPC_ERRORS.send(res, status, refusal, message, headers);
  },
};

/** The front of the HTTP+JSON routes, for a server whose request bodies are at most `limit` bytes. */
export function restFront(limit: number): RequestHandler {
  return (req, res, next) => {
    // Every route of the binding is a GET or a POST (§11.3); Express would answer OPTIONS itself, in text.
    if (!['GET', 'HEAD', 'POST'].includes(req.method))
      return sendRestError(res, 405, `${req.method} is not a method of the HTTP+JSON binding; use GET or POST.`, {
        Allow: 'GET, POST',
      });
    versionFromQuery(req);
    const method = _methodOf(req.method, req.path);
    if (method === 'GetTask' || method === 'ListTasks') {
      const problem = paramsProblem(method, _queryParams(req.query));
      return problem ? sendRestError(res, 400, `Invalid argument: ${problem}`) : next();
    }
    if (req.method !== 'POST') return next();
    const type = req.headers['content-type'];
    if (type !== undefined && !JSON_TYPES.has(type.split(';')[0]!.trim().toLowerCase())) return next();
    readBody(req, limit).then((bytes) => {
      if (bytes === undefined) return sendRestError(res, 413, tooLargeMessage(limit));
      if (bytes.length === 0) return next(); // the SDK reads a missing body as {}
      let body: unknown;
      try {
        body = JSON.parse(bytes.toString('utf8'));
      } catch (error) {
        return sendRestError(res, 400, parseErrorMessage(error));
      }
      const problem = method ? paramsProblem(method, body) : undefined;
      if (problem) return sendRestError(res, 400, `Invalid argument: ${problem}`);
      req.body = body; // the SDK's body parser sees a request already read and keeps this
      next();
    }, next);
  };
}

/** The last handlers of the binding's routes: a 404 for what the SDK does not serve, and any error left over, in the binding's shape. */
export function restFallbacks(): [RequestHandler, ErrorRequestHandler] {
  const notFound: RequestHandler = (_req, res) =>
    sendRestError(
      res,
      404,
      "Not found: the HTTP+JSON routes are those of A2A v1.0 §11 under the card's interface URL.",
    );
  const failed: ErrorRequestHandler = (error: unknown, _req, res, _next) => {
    const status = (error as { status?: unknown } | null)?.status;
    if (typeof status === 'number' && status >= 400 && status < 500)
      sendRestError(res, status, `Bad request (HTTP ${status}).`);
    else sendRestError(res, 500, INTERNAL_ERROR_MESSAGE);
  };
  return [notFound, failed];
}

/** The A2A method an HTTP+JSON route stands for (§11.3), for the checks that concern it. */
function _methodOf(method: string, path: string): string | undefined {
  const route = path.replace(/^\/[^/]+(?=\/(message:|tasks\b))/, ''); // a /{tenant} prefix
  if (method === 'POST' && route === '/message:send') return 'SendMessage';
  if (method === 'POST' && route === '/message:stream') return 'SendStreamingMessage';
  if (method === 'GET' && route === '/tasks') return 'ListTasks';
  if (method === 'GET' && /^\/tasks\/[^/:]+$/.test(route)) return 'GetTask';
  return undefined;
}

/** The query as the JSON-RPC params it stands for (§11.5): a `historyLength` of digits is a number, the rest text. */
function _queryParams(query: Record<string, unknown>): Record<string, unknown> {
  const params: Record<string, unknown> = { ...query };
  if (typeof query.historyLength === 'string' && /^\d{1,9}$/.test(query.historyLength))
    params.historyLength = Number(query.historyLength);
  return params;
}
