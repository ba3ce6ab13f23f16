/**
 * @module
 * `witness mailbox tail`: follow messages as they arrive, for humans watching a run.
 * It reads the store without taking the lock or moving any cursor, so watching
 * never changes what agents see. JSONL inboxes are followed by byte offset, a page
 * at a time; SQLite and PostgreSQL by row position. Memory stays bounded whatever the mailbox's
 * size: each poll reads at most `PER_POLL` new messages per inbox, and damaged
 * records are skipped (verify reports them).
 */
import { closeSync, existsSync, fstatSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Message } from './call-log.js';
import { WitnessError } from '../core/errors.js';
import { type AgentEntry, type MailboxConfig, readAgents, readConfig } from './config.js';
import { openEvidence } from './evidence.js';
import { isMailboxFile, openInside, READ } from './store/files.js';
import { afterLastNewline } from './store/jsonl/files.js';
import { scanLines } from './store/lines.js';
import { parseMessage } from './store/ops.js';
import { CAPPED_TEXT } from './store/lines.js';
import { openMailboxDatabase } from './store/sqlite/file.js';
import { storeKind } from './store-kinds.js';

export interface TailOptions {
  /** Start with messages already stored (default: only new ones). */
  fromStart?: boolean;
  /** Only this recipient. */
  agent?: string;
  pollMs?: number;
  signal?: AbortSignal;
}

const PER_POLL = 1000;

/** Calls `onMessage` for each message as it is stored, until `signal` aborts. */
export async function tailMailbox(
  dir: string,
  onMessage: (m: Message) => void,
  options: TailOptions = {},
): Promise<void> {
  await checkTailTarget(dir, options.agent);
  const follow = await _follower(dir, options.agent);
  let first = true;
  try {
    while (!options.signal?.aborted) {
      const skip = first && !options.fromStart;
      const batch = await follow.next(skip);
      for (const m of batch.sort((a, b) => a.sent_at.localeCompare(b.sent_at))) onMessage(m);
      first = false;
      if (batch.length > 0 && !skip) continue; // more may be waiting: read on before sleeping
      await sleep(options.pollMs ?? 200, undefined, { signal: options.signal }).catch(() => undefined);
    }
  } finally {
    await follow.close();
  }
}

/**
 * Throws (exit 2) unless `dir` is a mailbox and `agent`, when given, is registered in
 * it: waiting on a folder that is no mailbox, or for an agent nobody can write to,
 * would wait for ever on nothing.
 */
export async function checkTailTarget(dir: string, agent: string | undefined): Promise<void> {
  if (!existsSync(dir))
    throw new WitnessError(
      'NOT_FOUND',
      `${dir} does not exist; give a mailbox folder (made by \`witness mailbox init\`).`,
    );
  const config = readConfig(dir);
  if (agent === undefined) return;
  const names = (await _agents(dir, config)).map((a) => a.name);
  if (!names.includes(agent))
    throw new WitnessError(
      'NOT_FOUND',
      `The agent "${agent}" is not registered in ${dir}${names.length > 0 ? ` (its agents: ${names.join(', ')})` : ' (it has no agents yet)'}; register it with: witness mailbox add-agent ${dir} ${agent}`,
    );
}

/** The registered agents, read without any lock: agents.json for the file stores (a SQLite file may not exist before the first server), rows on PostgreSQL. */
async function _agents(dir: string, config: MailboxConfig): Promise<AgentEntry[]> {
  if (storeKind(config.store).inFolder) return readAgents(dir);
  const evidence = await openEvidence(dir, config);
  try {
    return await evidence.agents();
  } finally {
    await evidence.close();
  }
}

/** New messages since the last call (`skip`: only move past what is there). */
interface _Follow {
  next(skip: boolean): Message[] | Promise<Message[]>;
  close(): void | Promise<void>;
}

async function _follower(dir: string, agent: string | undefined): Promise<_Follow> {
  const config = readConfig(dir);
  return storeKind(config.store).follow(dir, config, agent, PER_POLL);
}

/** New messages of each inbox file since the last call; `skip` only moves past what is there. */
export function followJsonl(dir: string, agent?: string): (skip: boolean) => Message[] {
  const offsets = new Map<string, number>();
  return (skip) => {
    const out: Message[] = [];
    const names = existsSync(join(dir, 'inbox')) ? readdirSync(join(dir, 'inbox')) : [];
    for (const name of names) {
      const rel = `inbox/${name}`;
      if (!isMailboxFile(rel) || (agent && name !== `${agent}.jsonl`)) continue;
      let fd: number | undefined;
      try {
        fd = openInside(dir, rel, READ);
      } catch {
        continue; // not a regular file: verify reports what is missing
      }
      if (fd === undefined) continue;
      try {
        const size = fstatSync(fd).size;
        let at = offsets.get(rel) ?? 0;
        if (skip || at > size) at = afterLastNewline(fd, size);
        let taken = 0;
        at = scanLines(fd, at, (line) => {
          const m = skip ? undefined : parseMessage(line.text);
          if (m) out.push(m);
          return ++taken < PER_POLL;
        });
        offsets.set(rel, at);
      } finally {
        closeSync(fd);
      }
    }
    return out;
  };
}

/** New rows of a SQLite mailbox since the last call. */
export function followSqlite(dir: string, agent?: string): (skip: boolean) => Message[] {
  let last = 0;
  return (skip) => {
    const db = openMailboxDatabase(dir, { readonly: true });
    try {
      if (skip) {
        last = (db.prepare('SELECT coalesce(max(pos), 0) AS last FROM messages').get() as { last: number }).last;
        return [];
      }
      const where = agent ? 'pos > ? AND recipient = ?' : 'pos > ?';
      const rows = db
        .prepare(`SELECT pos, ${CAPPED_TEXT} AS text FROM messages WHERE ${where} ORDER BY pos LIMIT ${PER_POLL}`)
        .all(...(agent ? [last, agent] : [last])) as Array<{ pos: number; text: string | null }>;
      const out: Message[] = [];
      for (const r of rows) {
        last = r.pos;
        const m = parseMessage(r.text ?? undefined);
        if (m) out.push(m);
      }
      return out;
    } finally {
      db.close();
    }
  };
}

/** One line for a human: time, sender → recipient, the thread of a reply, body (one line, shortened). */
export function formatMessage(m: Message, maxBody = 200): string {
  const body = m.body.replace(/\s+/g, ' ');
  // Ids end in random hex: their last 8 characters tell messages of one mailbox apart.
  const thread =
    m.reply_to !== undefined ? `  [re …${m.reply_to.slice(-8)}, thread …${(m.thread ?? m.reply_to).slice(-8)}]` : '';
  return `${m.sent_at}  ${m.from} → ${m.to}${thread}  ${body.length > maxBody ? `${body.slice(0, maxBody)}…` : body}`;
}
