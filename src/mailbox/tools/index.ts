/**
 * @module
 * The mailbox tools on an `McpServer` of either SDK line (1.x serves MCP 2025-11-25,
 * 2.x serves 2026-07-28). The caller's identity (`agent`) is bound
 * when the server is created — from `--agent` on stdio, from the bearer token on
 * HTTP — and no tool takes a sender argument (mailbox.md §1). Every call, accepted
 * or rejected, leaves one signed line in the call log: calls reach the tools
 * through route.ts, which checks and logs what the SDK would refuse unlogged.
 */
import type { ToolCallback } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult, ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import * as z from 'zod';
import { WitnessError } from '../../core/errors.js';
import type { MailboxToolName, ToolName } from '../call-log.js';
import {
  checkBody,
  checkIdempotencyKey,
  checkMessageId,
  checkReply,
  type MailboxLimits,
  type SendRate,
} from '../limits.js';
import { agentNameProblem, AGENT_NAME_RULE } from '../names.js';
import type { MailboxStore } from '../store/types.js';
import { type LogRefusal, type RoutableServer, requestSignal, routeToolCalls, type ToolRoute } from './route.js';
import * as s from './schemas.js';
import { withAcks } from './messages.js';
import { type MailSignal, waitForMail } from './wait.js';

export interface ToolContext {
  store: MailboxStore;
  agent: string;
  prefix: string;
  limits: MailboxLimits;
  rate: SendRate;
  /** Wakes wait_for_message callers in this process when a send reaches them. */
  mailSignal: MailSignal;
  /** Aborted when the server shuts down: a pending wait ends with its empty answer. */
  closing: AbortSignal;
}

const READ_ONLY = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false } as const;

interface ToolConfig<In extends z.ZodRawShape> {
  title: string;
  description: string;
  inputSchema: In;
  outputSchema: z.ZodRawShape;
  annotations: ToolAnnotations;
}

/**
 * An MCP server of either SDK line as the tools use it: `registerTool` for
 * tools/list (both lines take a raw Zod shape) and the router's hook for tools/call.
 */
export interface ToolServer {
  registerTool(name: string, config: ToolConfig<z.ZodRawShape>, cb: (args: never, extra: never) => unknown): unknown;
  readonly server: RoutableServer;
}

/** Installs the router for tools/call on a server (routeToolCalls for SDK 1.x, routeModernToolCalls for 2.x). */
export type ToolRouter = (routes: ReadonlyMap<string, ToolRoute>, logRefusal: LogRefusal) => void;

export function registerMailboxTools(
  server: ToolServer,
  ctx: ToolContext,
  router: ToolRouter = (routes, log) => routeToolCalls(server, routes, log),
): void {
  const { store, agent, prefix } = ctx;
  const routes = new Map<string, ToolRoute>();
  // Registered with the SDK for tools/list; calls are routed by route.ts, which checks the same input schema.
  const register = <In extends z.ZodRawShape>(tool: MailboxToolName, config: ToolConfig<In>, run: ToolCallback<In>) => {
    server.registerTool(`${prefix}${tool}`, config, run);
    routes.set(`${prefix}${tool}`, { tool, input: z.object(config.inputSchema), run: run as ToolRoute['run'] });
  };
  const guarded = async (fn: () => Promise<Record<string, unknown>>): Promise<CallToolResult> => {
    try {
      return _ok(await fn());
    } catch (error) {
      return _error(error);
    }
  };
  const logRefusal = (tool: ToolName, error: WitnessError) =>
    store.record(agent, tool, { ok: false, error: { code: error.code, message: error.message } });
  const rejectAndLog = async (tool: ToolName, error: WitnessError): Promise<never> => {
    await logRefusal(tool, error);
    throw error;
  };

  register(
    'whoami',
    {
      title: 'Who am I',
      description: 'Your agent name in this mailbox (bound by the server).',
      inputSchema: {},
      outputSchema: s.whoamiOutput,
      annotations: { title: 'Who am I', ...READ_ONLY },
    },
    () =>
      guarded(async () => {
        await store.record(agent, 'whoami', { ok: true });
        return { name: agent };
      }),
  );

  register(
    'list_agents',
    {
      title: 'List agents',
      description: 'Every agent you can send messages to.',
      inputSchema: {},
      outputSchema: s.listAgentsOutput,
      annotations: { title: 'List agents', ...READ_ONLY },
    },
    () =>
      guarded(async () => {
        const agents = (await store.agents()).map((a) => ({
          name: a.name,
          ...(a.description ? { description: a.description } : {}),
          you: a.name === agent,
        }));
        await store.record(agent, 'list_agents', { ok: true });
        return { agents };
      }),
  );

  register(
    'send_message',
    {
      title: 'Send a message',
      description: `Send a message to another agent's inbox. It is stored durably before this returns. Your name is added as the sender. Recipient names: ${AGENT_NAME_RULE}.`,
      inputSchema: s.sendInput,
      outputSchema: s.sendOutput,
      annotations: {
        title: 'Send a message',
        readOnlyHint: false,
        destructiveHint: false,
        idempotentHint: false,
        openWorldHint: false,
      },
    },
    (args) =>
      guarded(async () => {
        try {
          const problem = agentNameProblem(args.to);
          if (problem)
            throw new WitnessError(
              'INVALID_INPUT',
              `Invalid recipient: ${problem}. Call list_agents for the valid names.`,
            );
          checkBody(args.body, ctx.limits);
          checkIdempotencyKey(args.idempotency_key, ctx.limits);
          checkMessageId(args.reply_to, 'reply_to');
          await ctx.rate.take(agent);
        } catch (error) {
          return rejectAndLog('send_message', error as WitnessError);
        }
        const sent = await store.send(agent, {
          to: args.to,
          body: args.body,
          ...(args.idempotency_key !== undefined ? { idempotencyKey: args.idempotency_key } : {}),
          ...(args.reply_to !== undefined ? { replyTo: args.reply_to } : {}),
        });
        ctx.mailSignal.notify(sent.to);
        return { ...sent };
      }),
  );

  register(
    'check_inbox',
    {
      title: 'Check inbox',
      description:
        'Your unread messages, oldest first; they are marked read unless peek is true. An empty list means no mail. With thread: every message you received in that conversation, read or not.',
      inputSchema: s.checkInput,
      outputSchema: s.messagesOutput,
      annotations: {
        title: 'Check inbox',
        readOnlyHint: false,
        destructiveHint: false,
        idempotentHint: false,
        openWorldHint: false,
      },
    },
    (args) =>
      guarded(async () => {
        try {
          checkMessageId(args.thread, 'thread');
        } catch (error) {
          return rejectAndLog('check_inbox', error as WitnessError);
        }
        const limit = Math.min(args.limit ?? 20, ctx.limits.maxFetch);
        const messages = await store.fetch(agent, {
          limit,
          peek: args.peek ?? false,
          tool: 'check_inbox',
          ...(args.thread !== undefined ? { thread: args.thread } : {}),
        });
        return { messages: await withAcks(ctx, messages) };
      }),
  );

  register(
    'wait_for_message',
    {
      title: 'Wait for a message',
      description: `Wait until a message arrives (or timeout_ms passes, at most ${ctx.limits.maxWaitMs} ms), then return your unread messages and mark them read.`,
      inputSchema: s.waitInput,
      outputSchema: s.waitOutput,
      annotations: {
        title: 'Wait for a message',
        readOnlyHint: false,
        destructiveHint: false,
        idempotentHint: false,
        openWorldHint: false,
      },
    },
    (args, extra) =>
      guarded(async () => {
        const limit = Math.min(args.limit ?? 20, ctx.limits.maxFetch);
        const timeout = Math.min(args.timeout_ms, ctx.limits.maxWaitMs);
        const messages = await waitForMail(ctx, limit, timeout, AbortSignal.any([requestSignal(extra), ctx.closing]));
        return { messages: await withAcks(ctx, messages), timed_out: messages.length === 0 };
      }),
  );

  register(
    'message_status',
    {
      title: 'Message status',
      description:
        "Where a message you sent or received stands, from the signed call log: stored, read (the recipient fetched it) or acknowledged (the recipient called ack_message, with its reply). This, not send_message's answer, proves delivery.",
      inputSchema: s.statusInput,
      outputSchema: s.statusOutput,
      annotations: { title: 'Message status', ...READ_ONLY },
    },
    (args) =>
      guarded(async () => {
        try {
          checkMessageId(args.message_id, 'message_id');
        } catch (error) {
          return rejectAndLog('message_status', error as WitnessError);
        }
        // Asked as the caller: another pair's message is passed over before its status is built,
        // so it answers as a made-up id does, in the same time and with the same error.
        const status = await store.status(args.message_id, agent);
        if (!status || (status.from !== agent && status.to !== agent)) {
          return rejectAndLog(
            'message_status',
            new WitnessError(
              'NOT_FOUND',
              `message_id ${JSON.stringify(args.message_id.slice(0, 100))} is not a message you sent or received. Use an id from your send_message answers or your inbox.`,
            ),
          );
        }
        await store.record(agent, 'message_status', { ok: true, message_ids: [status.id] });
        return { ...status };
      }),
  );

  register(
    'ack_message',
    {
      title: 'Acknowledge a message',
      description: `Tell the sender you have handled a message you received, optionally with a short reply (at most ${ctx.limits.maxReplyBytes} bytes). The sender sees it with message_status. Acknowledging twice keeps the first.`,
      inputSchema: s.ackInput,
      outputSchema: s.ackOutput,
      annotations: {
        title: 'Acknowledge a message',
        readOnlyHint: false,
        destructiveHint: false,
        idempotentHint: true,
        openWorldHint: false,
      },
    },
    (args) =>
      guarded(async () => {
        try {
          checkMessageId(args.message_id, 'message_id');
          checkReply(args.reply, ctx.limits);
        } catch (error) {
          return rejectAndLog('ack_message', error as WitnessError);
        }
        return { ...(await store.ack(agent, args.message_id, args.reply)) };
      }),
  );

  router(routes, logRefusal);
}

function _ok(value: Record<string, unknown>): CallToolResult {
  return { content: [{ type: 'text', text: JSON.stringify(value) }], structuredContent: value };
}

function _error(error: unknown): CallToolResult {
  const message =
    error instanceof WitnessError ? error.message : `Internal error in the mailbox server: ${(error as Error).message}`;
  return { content: [{ type: 'text', text: message }], isError: true };
}
