/**
 * @module
 * Every `tools/call` of a mailbox server is checked and dispatched here, instead of
 * by the SDK's `McpServer` handler. That handler refuses a call with no params, an
 * unknown tool or arguments that fail the input schema before any tool code runs,
 * so such calls left no receipt; here every refusal is logged (`ok: false`, signed)
 * before it is answered, as docs/mailbox.md promises of every rejected call.
 *
 * Checks, in order: params `{name: string, arguments?: object}`; a tool of this
 * server; every string of the arguments (keys too) well-formed Unicode, so text
 * that cannot be stored or signed is refused before anything is stored; the tool's
 * input schema. Answers follow MCP 2025-11-25 (server/tools, "Error Handling"): an
 * unknown tool or a malformed request is a JSON-RPC error -32602; arguments that
 * fail validation are a tool execution error (`isError`), which a model can read
 * and correct. Messages are one line, never a schema library's dump. The MCP evidence
 * tool of `witness a2a tool` routes its calls here too, with nothing to log.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type * as z from 'zod';
import { WitnessError } from '../../core/errors.js';
import { checkWellFormedValue } from '../../core/text.js';
import { type MailboxToolName, UNKNOWN_TOOL } from '../call-log.js';

/**
 * What a tool gets of the request it answers, in either SDK line: the 1.x SDK
 * (MCP 2025-11-25) passes `signal`, the 2.x SDK (2026-07-28) `mcpReq.signal`.
 */
export interface ToolExtra {
  signal?: AbortSignal;
  mcpReq?: { signal: AbortSignal };
}

/** Aborted when the client cancels the request or goes away. */
export function requestSignal(extra: ToolExtra): AbortSignal {
  const signal = extra.mcpReq?.signal ?? extra.signal;
  if (!signal) throw new WitnessError('INTERNAL', 'The MCP SDK passed a tool no abort signal.');
  return signal;
}

/**
 * The part of an MCP server (`McpServer.server`, of either SDK line) the router
 * takes over. Methods, so both SDKs' own handler types fit.
 */
export interface RoutableServer {
  removeRequestHandler(method: string): void;
  fallbackRequestHandler?(request: { method: string; params?: unknown }, extra: ToolExtra): Promise<unknown>;
}

/** A tool as the router sees it: its log name, its input schema and what it does with checked arguments. */
export interface ToolRoute<Name extends string = MailboxToolName> {
  tool: Name;
  input: z.ZodObject;
  run(args: Record<string, unknown>, extra: ToolExtra): Promise<CallToolResult>;
}

/** Logs a refused call (an `ok: false` receipt) before it is answered. */
export type LogRefusal<Name extends string = MailboxToolName> = (
  tool: Name | typeof UNKNOWN_TOOL,
  error: WitnessError,
) => Promise<void>;

/** JSON-RPC error codes (JSON-RPC 2.0 §5.1). */
const METHOD_NOT_FOUND = -32601;
const INVALID_PARAMS = -32602;

/** An error the SDK's Protocol answers as a JSON-RPC error with this code and message. */
class _ProtocolError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

/**
 * Takes over `tools/call` on `server` (whose tools stay registered for `tools/list`):
 * the SDK's own handler is removed, and the Protocol's fallback handler, which gets
 * the raw request, routes the call. Other unknown methods stay "Method not found".
 */
export function routeToolCalls<Name extends string>(
  server: { readonly server: RoutableServer },
  routes: ReadonlyMap<string, ToolRoute<Name>>,
  logRefusal: LogRefusal<Name>,
): void {
  const inner = server.server;
  inner.removeRequestHandler('tools/call');
  inner.fallbackRequestHandler = async (request, extra) => {
    if (request.method !== 'tools/call') throw new _ProtocolError(METHOD_NOT_FOUND, 'Method not found');
    return routeCall(request.params, extra, routes, logRefusal);
  };
}

/** Checks and dispatches one `tools/call` by its raw params: what both SDK lines' takeovers run. */
export async function routeCall<Name extends string>(
  params: unknown,
  extra: ToolExtra,
  routes: ReadonlyMap<string, ToolRoute<Name>>,
  logRefusal: LogRefusal<Name>,
): Promise<CallToolResult> {
  const refuse = async (
    tool: Name | typeof UNKNOWN_TOOL,
    code: 'INVALID_INPUT' | 'NOT_FOUND',
    message: string,
  ): Promise<never> => {
    await logRefusal(tool, new WitnessError(code, message));
    throw new _ProtocolError(INVALID_PARAMS, message);
  };
  if (!_isObject(params) || typeof params.name !== 'string') {
    return refuse(
      UNKNOWN_TOOL,
      'INVALID_INPUT',
      'Invalid params: tools/call needs params {name: string, arguments?: object}.',
    );
  }
  const name = params.name;
  const route = routes.get(name);
  if (!route)
    return refuse(
      UNKNOWN_TOOL,
      'NOT_FOUND',
      `Unknown tool ${_quote(name)}. This server's tools: ${[...routes.keys()].join(', ')}.`,
    );
  const args = params.arguments ?? {};
  if (!_isObject(args))
    return refuse(route.tool, 'INVALID_INPUT', `Invalid params: the arguments of ${name} must be a JSON object.`);
  let checked: Record<string, unknown>;
  try {
    checked = _checkArguments(name, route.input, args);
  } catch (error) {
    await logRefusal(route.tool, error as WitnessError);
    return { content: [{ type: 'text', text: (error as WitnessError).message }], isError: true };
  }
  return route.run(checked, extra);
}

function _checkArguments(name: string, input: z.ZodObject, args: Record<string, unknown>): Record<string, unknown> {
  try {
    checkWellFormedValue(args, 'arguments');
  } catch (error) {
    if (error instanceof RangeError)
      throw new WitnessError('INVALID_INPUT', `The arguments of ${name} are nested too deeply; send plain values.`);
    throw error;
  }
  const parsed = input.safeParse(args);
  if (parsed.success) return parsed.data;
  const problems = parsed.error.issues.slice(0, 5).map((issue) => _issueText(issue, args));
  throw new WitnessError(
    'INVALID_INPUT',
    `Invalid arguments for ${name}: ${problems.join('; ')}. Fix them and call again (tools/list gives each tool's inputSchema).`,
  );
}

/** One schema problem in words: where, what was expected, what was given. */
function _issueText(issue: z.core.$ZodIssue, args: Record<string, unknown>): string {
  const where = issue.path.length > 0 ? issue.path.join('.') : 'arguments';
  const value = issue.path.reduce<unknown>(
    (v, key) => (_isObject(v) || Array.isArray(v) ? (v as Record<PropertyKey, unknown>)[key] : undefined),
    args,
  );
  switch (issue.code) {
    case 'invalid_type': {
      if (value === undefined) return `${where}: required`;
      const expected = issue.expected === 'int' ? 'a whole number' : _withArticle(issue.expected);
      return `${where}: expected ${expected}, got ${_withArticle(_kind(value))}`;
    }
    case 'too_small':
      return `${where}: must be ${issue.inclusive ? 'at least' : 'more than'} ${String(issue.minimum)}`;
    case 'too_big':
      return `${where}: must be ${issue.inclusive ? 'at most' : 'less than'} ${String(issue.maximum)}`;
    default:
      return `${where}: ${issue.message}`;
  }
}

function _kind(value: unknown): string {
  if (value === null) return 'null';
  return Array.isArray(value) ? 'array' : typeof value;
}

function _withArticle(kind: string): string {
  if (kind === 'null') return 'null';
  return `${/^[aeiou]/.test(kind) ? 'an' : 'a'} ${kind}`;
}

/** A name as given, for a message and a receipt: JSON-quoted (a lone surrogate becomes an escape) and cut. */
function _quote(name: string): string {
  return JSON.stringify(name.length > 100 ? `${name.slice(0, 100)}…` : name);
}

function _isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
