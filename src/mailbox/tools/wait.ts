/**
 * @module
 * `wait_for_message`: a long poll. Sends made by this process wake the waiter at
 * once; sends by other processes sharing the directory are seen by polling the
 * inbox every 50 ms. Exactly one receipt is logged per call, whatever the inbox
 * holds meanwhile: the fetch that delivers (which logs its own), or one with no ids
 * at the end. Polls fetch only when `hasUnread` sees a complete, readable message,
 * and a fetch that finds none logs nothing (`quietIfEmpty`), so a torn or damaged
 * line cannot make a waiter log on every poll.
 */
import type { Message } from '../call-log.js';
import type { ToolContext } from './index.js';

const POLL_MS = 50;

export async function waitForMail(ctx: ToolContext, limit: number, timeoutMs: number, signal?: AbortSignal): Promise<Message[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await ctx.store.hasUnread(ctx.agent)) {
      const messages = await ctx.store.fetch(ctx.agent, { limit, peek: false, tool: 'wait_for_message', quietIfEmpty: true });
      if (messages.length > 0) return messages;
    }
    const left = deadline - Date.now();
    if (left <= 0 || signal?.aborted) break;
    await ctx.mailSignal.wait(ctx.agent, Math.min(POLL_MS, left), signal);
  }
  await ctx.store.record(ctx.agent, 'wait_for_message', { ok: true, message_ids: [] });
  return [];
}

/** Wakes waiters in this process when mail is sent to them. */
export class MailSignal {
  private readonly waiters = new Map<string, Set<() => void>>();

  notify(agent: string): void {
    for (const wake of this.waiters.get(agent) ?? []) wake();
  }

  wait(agent: string, ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const set = this.waiters.get(agent) ?? new Set();
      this.waiters.set(agent, set);
      const done = () => {
        clearTimeout(timer);
        set.delete(done);
        signal?.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      set.add(done);
      signal?.addEventListener('abort', done, { once: true });
    });
  }
}
