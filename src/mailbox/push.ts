/**
 * @module
 * Mail pushed to the agent instead of polled:
 *
 * - the inbox as an MCP resource, `mailbox://inbox` (a read is a peek, logged as
 *   `read_resource`), with `resources/subscribe`: a subscribed session gets
 *   `notifications/resources/updated` when mail is stored for its agent, from any
 *   process (store wake-ups: LISTEN/NOTIFY, or a watched folder), with a slow poll
 *   as the safety net;
 * - Claude Code's channel contract (`serve --channel`): the server declares
 *   `capabilities.experimental["claude/channel"]` and sends each new message as
 *   `notifications/claude/channel` `{content, meta}`. Only mail a registered agent
 *   sent through the server — a genuine send receipt from that agent — is pushed;
 *   a record planted in the inbox is not (sender gating). Each push is logged
 *   (`channel_push`), since it shows the body to the agent.
 */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import {
  ErrorCode,
  McpError,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { type Message, messageDigest } from './call-log.js';
import type { SessionEvent } from './session-log.js';
import type { ToolContext } from './tools/index.js';
import { withAcks } from './tools/messages.js';

export const INBOX_URI = 'mailbox://inbox';
export const CHANNEL_CAPABILITY = 'claude/channel';
export const CHANNEL_NOTIFICATION = 'notifications/claude/channel';
/** How often a subscription looks anyway, in case no wake-up reaches this process. */
const SAFETY_POLL_MS = 1000;
/**
 * A file store writes a message's inbox line before its receipt (so a durable receipt
 * always has its line), so a channel may see a message a moment before it can be
 * checked: such a message is looked at again every RECHECK_MS, for up to
 * UNBACKED_GIVE_UP_MS; one still without a genuine receipt then was planted, not sent.
 */
const RECHECK_MS = 25;
const UNBACKED_GIVE_UP_MS = 10_000;
/**
 * At most one notice per subscription this often: the first mail of a burst is told
 * at once, what follows within the gap in one notice at its end (a subscriber reads
 * the inbox anyway), so a flood does not cost the machine one notice per send.
 */
const NOTICE_GAP_MS = 10;

/** An MCP server of either SDK line, as far as registering a resource goes. */
export interface ResourceServer {
  registerResource(
    name: string,
    uri: string,
    config: { title: string; description: string; mimeType: string },
    read: (uri: URL) => Promise<{ contents: { uri: string; mimeType: string; text: string }[] }>,
  ): unknown;
}

/**
 * The inbox resource, the same in both protocol eras: a 2025-11-25 session subscribes
 * with `resources/subscribe` (registerInbox), a 2026-07-28 client names it in
 * `subscriptions/listen` (modern-http.ts); both are told by `watchInbox`.
 */
export function registerInboxResource(server: ResourceServer, ctx: ToolContext): void {
  server.registerResource(
    'inbox',
    INBOX_URI,
    {
      title: 'Your inbox',
      description:
        'Your unread messages, oldest first. Reading it marks nothing read (use check_inbox for that). Subscribe to be told when mail arrives.',
      mimeType: 'application/json',
    },
    async (uri) => {
      const messages = await ctx.store.fetch(ctx.agent, {
        limit: ctx.limits.maxFetch,
        peek: true,
        tool: 'read_resource',
      });
      return {
        contents: [
          {
            uri: uri.href,
            mimeType: 'application/json',
            text: JSON.stringify({ messages: await withAcks(ctx, messages) }),
          },
        ],
      };
    },
  );
}

/** The inbox resource and its subscriptions on one 2025-11-25 session's server; returns what stops them. */
export function registerInbox(
  server: McpServer,
  ctx: ToolContext,
  log: (event: SessionEvent) => void = () => undefined,
): () => void {
  registerInboxResource(server, ctx);
  server.server.registerCapabilities({ resources: { subscribe: true } });
  let stop: (() => void) | undefined;
  server.server.setRequestHandler(SubscribeRequestSchema, async (request) => {
    _checkUri(request.params.uri);
    log({ event: 'subscribe', uri: INBOX_URI });
    stop ??= watchInbox(ctx, async () => {
      await server.server.sendResourceUpdated({ uri: INBOX_URI });
      log({ event: 'resource_updated', uri: INBOX_URI });
    });
    return {};
  });
  server.server.setRequestHandler(UnsubscribeRequestSchema, async (request) => {
    _checkUri(request.params.uri);
    log({ event: 'unsubscribe', uri: INBOX_URI });
    stop?.();
    stop = undefined;
    return {};
  });
  return () => stop?.();
}

/** Claude Code channel events for one session: its unread mail when it starts, then each message as it is stored, gated by sender. */
export function registerChannel(
  server: McpServer,
  ctx: ToolContext,
  log: (event: SessionEvent) => void = () => undefined,
): () => void {
  server.server.registerCapabilities({ experimental: { [CHANNEL_CAPABILITY]: {} } });
  let from = ''; // the read cursor: the session starts with the agent's unread mail
  let stop: (() => void) | undefined;
  let stopped = false;
  let recheck: NodeJS.Timeout | undefined;
  /** Messages seen without a genuine receipt yet, oldest first, with when to give up on each. */
  let unbacked: Array<{ message: Message; until: number }> = [];
  // Events start once the client has initialized: one sent before would be lost.
  const initialized = server.server.oninitialized;
  server.server.oninitialized = () => {
    initialized?.();
    if (stopped || stop) return;
    stop = watchInbox(ctx, () => push());
    void push().catch(() => undefined);
  };
  // One round at a time (wake-ups and rechecks both start rounds), so nothing is pushed twice.
  let rounds = Promise.resolve();
  const push = (): Promise<void> => {
    rounds = rounds.catch(() => undefined).then(round);
    return rounds;
  };
  const round = async (): Promise<void> => {
    for (;;) {
      const { messages, mark: next } = await ctx.store.inboxSince(ctx.agent, from, ctx.limits.maxFetch);
      from = next;
      unbacked.push(...messages.map((message) => ({ message, until: Date.now() + UNBACKED_GIVE_UP_MS })));
      if (messages.length < ctx.limits.maxFetch) break;
    }
    const pushed: string[] = [];
    const waiting: typeof unbacked = [];
    for (const u of unbacked) {
      if (await _sentByRegisteredAgent(ctx, u.message)) {
        await server.server.notification({ method: CHANNEL_NOTIFICATION, params: channelEvent(u.message) });
        pushed.push(u.message.id);
      } else if (Date.now() < u.until) waiting.push(u);
    }
    unbacked = waiting;
    if (pushed.length > 0) {
      log({ event: 'channel', message_ids: pushed });
      await ctx.store.record(ctx.agent, 'channel_push', { ok: true, message_ids: pushed });
    }
    clearTimeout(recheck);
    if (unbacked.length > 0 && !stopped)
      recheck = setTimeout(() => void push().catch(() => undefined), RECHECK_MS).unref();
  };
  return () => {
    stopped = true;
    clearTimeout(recheck);
    stop?.();
  };
}

/** A channel event: the body, and identifiers Claude Code shows as attributes of its <channel> tag. */
export function channelEvent(m: Message): { content: string; meta: Record<string, string> } {
  return {
    content: m.body,
    meta: {
      from: m.from,
      message_id: m.id,
      sent_at: m.sent_at,
      ...(m.thread ? { thread: m.thread } : {}),
      ...(m.reply_to ? { reply_to: m.reply_to } : {}),
    },
  };
}

/**
 * Calls `onChange` (one call at a time) whenever `ctx.agent`'s inbox mark moves,
 * with the mark it moved from; woken by the store and a slow poll. Returns the stop.
 */
export function watchInbox(
  ctx: ToolContext,
  onChange: (mark: { before: string; now: string }) => Promise<void>,
): () => void {
  let last: string | undefined;
  let running = false;
  let again = false;
  let noticedAt = Number.NEGATIVE_INFINITY;
  let later: NodeJS.Timeout | undefined;
  const check = async (): Promise<void> => {
    if (running) {
      again = true;
      return;
    }
    running = true;
    try {
      do {
        again = false;
        const wait = noticedAt + NOTICE_GAP_MS - performance.now();
        if (wait > 0) {
          later ??= setTimeout(() => {
            later = undefined;
            look();
          }, wait).unref();
          return;
        }
        const now = await ctx.store.inboxMark(ctx.agent);
        if (last !== undefined && now !== last) {
          noticedAt = performance.now();
          await onChange({ before: last, now });
        }
        last = now;
      } while (again);
    } finally {
      running = false;
    }
  };
  const look = () => void check().catch(() => undefined); // a failed look is retried by the next wake-up or poll
  const unlisten = ctx.mailSignal.listen(ctx.agent, look);
  const poll = setInterval(look, SAFETY_POLL_MS);
  poll.unref();
  look();
  return () => {
    unlisten();
    clearInterval(poll);
    clearTimeout(later);
  };
}

/** Sender gating: a genuine send receipt says a registered agent sent exactly this message to us. */
async function _sentByRegisteredAgent(ctx: ToolContext, m: Message): Promise<boolean> {
  if (!(await ctx.store.agents()).some((a) => a.name === m.from)) return false;
  const status = await ctx.store.status(m.id);
  if (status === undefined || status.from !== m.from || status.to !== ctx.agent) return false;
  // The record must be the one the receipt signed, not another record under its id.
  const signed =
    status.stored.line === undefined
      ? undefined
      : (JSON.parse(status.stored.line) as { digests?: string[] }).digests?.[0];
  return signed === messageDigest(m);
}

function _checkUri(uri: string): void {
  if (uri !== INBOX_URI)
    throw new McpError(
      ErrorCode.InvalidParams,
      `Unknown resource ${JSON.stringify(uri.slice(0, 100))}: this server offers ${INBOX_URI}.`,
    );
}
