/**
 * @module
 * Messages as the tools and the inbox resource return them: what the recipient may
 * see of each (never its idempotency key), and whether it already acknowledged it.
 */
import type { Message } from '../call-log.js';
import type { ToolContext } from './index.js';

/** Messages as a tool returns them, each saying whether the caller already acknowledged it. */
export async function withAcks(ctx: ToolContext, messages: Message[]): Promise<Array<Record<string, unknown>>> {
  const acked =
    messages.length === 0
      ? new Set<string>()
      : await ctx.store.acknowledged(
          ctx.agent,
          messages.map((m) => m.id),
        );
  return messages.map((m) => ({
    id: m.id,
    from: m.from,
    body: m.body,
    sent_at: m.sent_at,
    ...(m.thread !== undefined ? { thread: m.thread } : {}),
    ...(m.reply_to !== undefined ? { reply_to: m.reply_to } : {}),
    acknowledged: acked.has(m.id),
  }));
}
