/**
 * @module
 * `wait_for_message`: a long poll. Sends made by this process wake the waiter at
 * once, and so do sends by other processes where the store hears of them
 * (PostgreSQL's LISTEN/NOTIFY); otherwise they are seen by polling the inbox every
 * 50 ms (the store's `pollMs`). A wake-up that comes while the waiter is checking
 * the inbox is not lost: the waiter notes the signal's count before it checks, and
 * does not sleep if it moved. Exactly one receipt is logged per call, whatever the inbox
 * holds meanwhile: the fetch that delivers (which logs its own), or one with no ids
 * at the end. Polls fetch only when `hasUnread` sees a complete, readable message,
 * and a fetch that finds none logs nothing (`quietIfEmpty`), so a torn or damaged
 * line cannot make a waiter log on every poll.
 */
import type { Message } from '../call-log.js';
import type { ToolContext } from './index.js';

const POLL_MS = 50;

export async function waitForMail(
  ctx: ToolContext,
  limit: number,
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<Message[]> {
  const deadline = Date.now() + timeoutMs;
  const pollMs = ctx.store.pollMs ?? POLL_MS;
  for (;;) {
    const seen = ctx.mailSignal.count(ctx.agent);
    if (await ctx.store.hasUnread(ctx.agent)) {
      const messages = await ctx.store.fetch(ctx.agent, {
        limit,
        peek: false,
        tool: 'wait_for_message',
        quietIfEmpty: true,
      });
      if (messages.length > 0) return messages;
    }
    const left = deadline - Date.now();
    if (left <= 0 || signal?.aborted) break;
    await ctx.mailSignal.wait(ctx.agent, Math.min(pollMs, left), seen, signal);
  }
  await ctx.store.record(ctx.agent, 'wait_for_message', { ok: true, message_ids: [] });
  return [];
}

/** Wakes waiters in this process when mail is sent to them. */
export class MailSignal {
  private readonly waiters = new Map<string, Set<() => void>>();
  /** Wake-ups so far, per agent and for everyone: a waiter compares before it sleeps. */
  private readonly counts = new Map<string, number>();
  private everyone = 0;

  private readonly listeners = new Map<string, Set<() => void>>();

  /** Mail for `agent`; undefined: anyone may have mail (e.g. notifications were lost). */
  notify(agent: string | undefined): void {
    if (agent === undefined) {
      this.everyone++;
      for (const set of [...this.waiters.values(), ...this.listeners.values()]) for (const wake of set) wake();
      return;
    }
    this.counts.set(agent, (this.counts.get(agent) ?? 0) + 1);
    for (const wake of [...(this.waiters.get(agent) ?? []), ...(this.listeners.get(agent) ?? [])]) wake();
  }

  /** Calls `wake` on every wake-up of `agent` until the returned function is called (push subscriptions). */
  listen(agent: string, wake: () => void): () => void {
    const set = this.listeners.get(agent) ?? new Set();
    this.listeners.set(agent, set);
    set.add(wake);
    return () => {
      set.delete(wake);
      if (set.size === 0 && this.listeners.get(agent) === set) this.listeners.delete(agent);
    };
  }

  /** A number that changes whenever `agent` is woken. */
  count(agent: string): number {
    return (this.counts.get(agent) ?? 0) + this.everyone;
  }

  /** Sleeps up to `ms`, or not at all when `agent` was woken since its count was `seen`. */
  wait(agent: string, ms: number, seen: number, signal?: AbortSignal): Promise<void> {
    if (this.count(agent) !== seen) return Promise.resolve();
    return new Promise((resolve) => {
      const set = this.waiters.get(agent) ?? new Set();
      this.waiters.set(agent, set);
      const done = () => {
        clearTimeout(timer);
        set.delete(done);
        if (set.size === 0 && this.waiters.get(agent) === set) this.waiters.delete(agent);
        signal?.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      set.add(done);
      signal?.addEventListener('abort', done, { once: true });
    });
  }
}
