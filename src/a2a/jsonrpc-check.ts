/**
 * @module
 * The checks a JSON-RPC request to the child agent must pass before `@a2a-js/sdk`
 * 1.3.0's handler sees it, where that handler answers wrongly under A2A v1.0
 * (docs/a2a.md, "JSON-RPC"): a batch, a body that is not a Request object, a wrong
 * `jsonrpc`, a missing `method` or an `id` that is neither string, number nor null is
 * an Invalid Request (-32600, JSON-RPC 2.0 §4–§5), where the SDK said -32602; a
 * message without a role or without parts, a negative `historyLength` and a
 * `statusTimestampAfter` that is not a timestamp are Invalid params (-32602), which the
 * SDK let through. A request without `id` is a notification, which gets no answer.
 */

/** JSON-RPC 2.0 error codes (§5.1). */
export const INVALID_REQUEST = -32600;
export const INVALID_PARAMS = -32602;

type _Id = string | number | null;

export type RequestCheck = { ok: true; notification: boolean } | { ok: false; code: number; message: string; id: _Id };

/** Methods that carry a message, in both protocol versions, with the roles each accepts. */
const MESSAGE_METHODS: Record<string, readonly unknown[]> = {
  SendMessage: ['ROLE_USER', 'ROLE_AGENT', 1, 2],
  SendStreamingMessage: ['ROLE_USER', 'ROLE_AGENT', 1, 2],
  'message/send': ['user', 'agent'],
  'message/stream': ['user', 'agent'],
};
const HISTORY_METHODS = new Set(['GetTask', 'ListTasks', 'tasks/get']);
/** RFC 3339 date-time, as A2A v1.0 says timestamps are written (ISO 8601, e.g. 2023-10-27T10:00:00Z). */
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/i;

/** Checks one parsed body; `ok` requests go on to the SDK. */
export function checkA2aRequest(body: unknown): RequestCheck {
  if (Array.isArray(body))
    return _invalid(null, 'Invalid Request: batches are not supported; send one JSON-RPC request per POST.');
  if (!_isObject(body)) return _invalid(null, 'Invalid Request: the body must be one JSON-RPC 2.0 request object.');
  const hasId = 'id' in body;
  if (hasId && !_isId(body.id)) return _invalid(null, 'Invalid Request: id must be a string, a number or null.');
  const id = hasId ? (body.id as _Id) : null;
  if (body.jsonrpc !== '2.0') return _invalid(id, 'Invalid Request: jsonrpc must be "2.0".');
  if (typeof body.method !== 'string' || body.method === '')
    return _invalid(id, 'Invalid Request: method must be a non-empty string.');
  if ('params' in body && (typeof body.params !== 'object' || body.params === null))
    return _invalid(id, 'Invalid Request: params must be an object.');
  if (!hasId) return { ok: true, notification: true };
  const problem = paramsProblem(body.method, body.params);
  return problem
    ? { ok: false, code: INVALID_PARAMS, message: `Invalid params: ${problem}`, id }
    : { ok: true, notification: false };
}

/**
 * What the SDK lets through and the spec refuses, for the methods it concerns (named as
 * in JSON-RPC; the HTTP+JSON front asks with the method its route stands for).
 */
export function paramsProblem(method: string, params: unknown): string | undefined {
  if (!_isObject(params)) return undefined; // the SDK answers a missing or wrong params itself
  const roles = MESSAGE_METHODS[method];
  if (roles && _isObject(params.message)) {
    const { role, parts } = params.message;
    if (!roles.includes(role as string))
      return `message.role is required: ${roles.filter((r) => typeof r === 'string').join(' or ')}.`;
    if (!Array.isArray(parts) || parts.length === 0)
      return 'message.parts must hold at least one part (the task as a text part).';
  }
  if (HISTORY_METHODS.has(method) && 'historyLength' in params) {
    const n = params.historyLength;
    if (!Number.isInteger(n) || (n as number) < 0) return 'historyLength must be a whole number ≥ 0.';
  }
  if (method === 'ListTasks' && 'statusTimestampAfter' in params) {
    const t = params.statusTimestampAfter;
    if (typeof t !== 'string' || !RFC3339.test(t) || Number.isNaN(Date.parse(t)))
      return 'statusTimestampAfter must be an ISO 8601 timestamp such as 2026-01-31T12:00:00Z.';
  }
  return undefined;
}

function _invalid(id: _Id, message: string): RequestCheck {
  return { ok: false, code: INVALID_REQUEST, message, id };
}

function _isId(value: unknown): value is _Id {
  return value === null || typeof value === 'string' || (typeof value === 'number' && Number.isFinite(value));
}

function _isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
