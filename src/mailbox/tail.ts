/**
 * @module
 * `witness mailbox tail`: follow messages as they arrive, for humans watching a run.
 * It reads the store without taking the lock or moving any cursor, so watching
 * never changes what agents see. JSONL inboxes are followed by byte offset; SQLite
 * by row position.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Message } from './call-log.js';
import { readSnapshot } from './store/index.js';

export interface TailOptions {
  /** Start with messages already stored (default: only new ones). */
  fromStart?: boolean;
  /** Only this recipient. */
  agent?: string;
  pollMs?: number;
  signal?: AbortSignal;
}

/** Calls `onMessage` for each message as it is stored, until `signal` aborts. */
export async function tailMailbox(dir: string, onMessage: (m: Message) => void, options: TailOptions = {}): Promise<void> {
  const seen = new Set<string>();
  let first = true;
  while (!options.signal?.aborted) {
    for (const m of _messages(dir, options.agent)) {
      if (seen.has(m.id)) continue;
      seen.add(m.id);
      if (!first || options.fromStart) onMessage(m);
    }
    first = false;
    await sleep(options.pollMs ?? 200, undefined, { signal: options.signal }).catch(() => undefined);
  }
}

function _messages(dir: string, agent?: string): Message[] {
  if (!existsSync(join(dir, 'mailbox.json'))) return [];
  const snap = readSnapshot(dir);
  const out: Array<{ m: Message; at: string }> = [];
  for (const inbox of snap.inboxes) {
    if (agent && inbox.agent !== agent) continue;
    for (const { text } of inbox.lines) {
      try {
        const m = JSON.parse(text) as Message;
        out.push({ m, at: m.sent_at });
      } catch {
        // damaged lines are verify's business
      }
    }
  }
  return out.sort((a, b) => a.at.localeCompare(b.at)).map((x) => x.m);
}

/** One line for a human: time, sender → recipient, body (one line, shortened). */
export function formatMessage(m: Message, maxBody = 200): string {
  const body = m.body.replace(/\s+/g, ' ');
  return `${m.sent_at}  ${m.from} → ${m.to}  ${body.length > maxBody ? `${body.slice(0, maxBody)}…` : body}`;
}
