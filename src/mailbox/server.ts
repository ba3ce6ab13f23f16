/**
 * @module
 * The mailbox MCP server for one bound identity: from `--agent` on stdio (stdio.ts),
 * from the bearer token on HTTP (http.ts, modern-http.ts) (mailbox.md §1).
 * `createMailboxServer` builds the `McpServer` of SDK 1.x (MCP 2025-11-25): one per
 * stdio process or HTTP session. `createModernMailboxServer` builds the same tools and
 * inbox on SDK 2.x (MCP 2026-07-28), where a server keeps nothing between requests.
 */
import { McpServer as ModernMcpServer } from '@modelcontextprotocol/server';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import {
  type InitializeRequest,
  InitializeRequestSchema,
  type InitializeResult,
} from '@modelcontextprotocol/sdk/types.js';
import { WitnessError } from '../core/errors.js';
import { VERSION } from '../core/version.js';
import type { StoreKind } from './config.js';
import { DEFAULT_LIMITS, type MailboxLimits, RateLimiter, type SendRate } from './limits.js';
import { assertAgentName } from './names.js';
import { openStore } from './store/index.js';
import type { MailboxStore } from './store/types.js';
import { channelInstructionsFor, instructionsFor } from './instructions.js';
import { registerChannel, registerInbox, registerInboxResource } from './push.js';
import { type SessionEvent, sessionLogger } from './session-log.js';
import { registerMailboxTools } from './tools/index.js';
import { routeModernToolCalls } from './tools/route-modern.js';
import { MailSignal } from './tools/wait.js';

export const SERVER_NAME = 'witness-mailbox';

/** What every server process shares across its sessions. */
export interface MailboxRuntime {
  store: MailboxStore;
  limits: MailboxLimits;
  rate: SendRate;
  mailSignal: MailSignal;
  prefix: string;
  /** Aborted when the server shuts down: pending waits end at once with their (empty) answer. */
  closing: AbortController;
  /** Push each new message to the session as a Claude Code channel event (`serve --channel`). */
  channel: boolean;
  /** `serve --session-log FILE`: where each session's negotiated protocol and pushes are written (session-log.ts). */
  sessionLog?: string;
}

export interface RuntimeOptions {
  dir: string;
  keyPath?: string;
  store?: StoreKind;
  prefix?: string;
  limits?: Partial<MailboxLimits>;
  /** Claude Code channel events (see MailboxRuntime.channel). */
  channel?: boolean;
  sessionLog?: string;
}

export async function createRuntime(options: RuntimeOptions): Promise<MailboxRuntime> {
  const limits = { ...DEFAULT_LIMITS, ...options.limits };
  const prefix = options.prefix ?? '';
  if (prefix !== '' && !/^[A-Za-z0-9_-]{1,32}$/.test(prefix)) {
    throw new WitnessError(
      'USAGE',
      `--tool-prefix ${JSON.stringify(prefix)} must be 1–32 letters, digits, "_" or "-" (for example mailbox_).`,
    );
  }
  const store = await openStore(options.dir, {
    limits,
    ...(options.keyPath ? { keyPath: options.keyPath } : {}),
    ...(options.store ? { kind: options.store } : {}),
  });
  const mailSignal = new MailSignal();
  store.onMail?.((agent) => mailSignal.notify(agent)); // mail committed by other processes, where the store hears of it
  const rate = store.sendRate?.(limits.sendsPerMinute) ?? new RateLimiter(limits.sendsPerMinute);
  return {
    store,
    limits,
    rate,
    mailSignal,
    prefix,
    closing: new AbortController(),
    channel: options.channel ?? false,
    ...(options.sessionLog ? { sessionLog: options.sessionLog } : {}),
  };
}

/** An MCP server whose every call acts as `agent`. */
export function createMailboxServer(runtime: MailboxRuntime, agent: string): McpServer {
  const server = new McpServer(
    { name: SERVER_NAME, version: VERSION },
    {
      instructions: instructionsFor(runtime.prefix) + (runtime.channel ? channelInstructionsFor(runtime.prefix) : ''),
      capabilities: { tools: {} },
    },
  );
  const ctx = { ...runtime, agent, closing: runtime.closing.signal };
  registerMailboxTools(server, ctx);
  const log = sessionLogger(runtime.sessionLog, agent);
  if (runtime.sessionLog) _logInitialize(server, log);
  const stops = [registerInbox(server, ctx, log), ...(runtime.channel ? [registerChannel(server, ctx, log)] : [])];
  const onclose = server.server.onclose;
  server.server.onclose = () => {
    for (const stop of stops) stop();
    onclose?.();
  };
  return server;
}

/**
 * The same tools and inbox resource for MCP 2026-07-28 (SDK 2.x), acting as `agent`.
 * Built per request by the HTTP front (modern-http.ts): the protocol has no session,
 * so nothing here outlives the request; inbox pushes ride `subscriptions/listen`,
 * which the SDK's handler serves from the front's event bus. Claude Code's channel
 * is a 2025-era session notification and is not offered here.
 */
export function createModernMailboxServer(runtime: MailboxRuntime, agent: string): ModernMcpServer {
  const server = new ModernMcpServer(
    { name: SERVER_NAME, version: VERSION },
    { instructions: instructionsFor(runtime.prefix), capabilities: { tools: {}, resources: { subscribe: true } } },
  );
  const ctx = { ...runtime, agent, closing: runtime.closing.signal };
  registerMailboxTools(server, ctx, (routes, logRefusal) => routeModernToolCalls(server, routes, logRefusal));
  registerInboxResource(server, ctx);
  return server;
}

/**
 * Records the version the server answers `initialize` with: the SDK's own answer
 * (it picks the client's version when it supports it, else its latest), so the
 * record is what was negotiated on the wire, not what the client claims elsewhere.
 */
function _logInitialize(server: McpServer, log: (event: SessionEvent) => void): void {
  const sdk = server.server as unknown as { _oninitialize?: (request: InitializeRequest) => Promise<InitializeResult> };
  const answer = sdk._oninitialize?.bind(server.server);
  if (!answer)
    throw new WitnessError(
      'INTERNAL',
      'This MCP SDK has no initialize handler to wrap: --session-log cannot record the negotiated protocol version with it.',
    );
  server.server.setRequestHandler(InitializeRequestSchema, async (request) => {
    const result = await answer(request);
    const info = request.params.clientInfo;
    log({
      event: 'initialize',
      protocol_version: result.protocolVersion,
      requested: request.params.protocolVersion,
      client: { name: info.name, version: info.version },
    });
    return result;
  });
}

/** Checks that `agent` is registered: an unknown identity fails at start, not as "no mail". */
export async function assertRegistered(runtime: MailboxRuntime, agent: string): Promise<void> {
  assertAgentName(agent, '--agent');
  if (!(await runtime.store.agents()).some((a) => a.name === agent)) {
    throw new WitnessError(
      'NOT_FOUND',
      `The agent "${agent}" is not registered in ${runtime.store.dir}. Register it first: witness mailbox add-agent ${runtime.store.dir} ${agent}`,
    );
  }
}
