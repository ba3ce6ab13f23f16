/**
 * @module
 * The SQLite store (`--store sqlite`): the same interface as the JSONL store, in one
 * database file `mailbox.sqlite` in WAL mode with `synchronous=FULL`, so a commit is
 * durable when it returns. `BEGIN IMMEDIATE` is the cross-process lock; a group of
 * operations shares one transaction. Messages keep the exact JSON text an inbox line
 * would have, and the call log keeps each line's exact text, so receipts and the
 * hash chain are checked the same way for both stores.
 */
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { WitnessError } from '../../core/errors.js';
import { type CallEntry, type ChainHead, EMPTY_HEAD, lineHash, type Message, sealCall, } from '../call-log.js';
import type { ReceiptSigner } from '../keys.js';
import { CommittingStore } from './committing-store.js';
import type { Pending } from './group-commit.js';
import * as ops from './ops.js';
import type { FetchOptions, MailboxStore, StoreSnapshot } from './types.js';

const SCHEMA = `
CREATE TABLE IF NOT EXISTS messages (pos INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, recipient TEXT NOT NULL, text TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS messages_recipient ON messages (recipient, pos);
CREATE TABLE IF NOT EXISTS calls (seq INTEGER PRIMARY KEY, text TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS cursors (agent TEXT PRIMARY KEY, pos INTEGER NOT NULL, delivered INTEGER NOT NULL, updated_at TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS idempotency (sender TEXT NOT NULL, key TEXT NOT NULL, id TEXT NOT NULL, recipient TEXT NOT NULL, sent_at TEXT NOT NULL, PRIMARY KEY (sender, key));
`;

export function sqlitePath(dir: string): string {
  return join(dir, 'mailbox.sqlite');
}

export class SqliteStore extends CommittingStore implements MailboxStore {
  readonly kind = 'sqlite' as const;
  private readonly db: Database.Database;

  constructor(dir: string, private readonly signer: ReceiptSigner) {
    super(dir);
    try {
      this.db = new Database(sqlitePath(dir), { timeout: 30_000 });
    } catch (cause) {
      throw new WitnessError('IO', `Cannot open ${sqlitePath(dir)}: ${(cause as Error).message}.`, { cause });
    }
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('synchronous = FULL');
    this.db.exec(SCHEMA);
  }

  hasUnread(agent: string): boolean {
    const row = this.db.prepare('SELECT 1 FROM messages WHERE recipient = ? AND pos > coalesce((SELECT pos FROM cursors WHERE agent = ?), 0) LIMIT 1').get(agent, agent);
    return row !== undefined;
  }

  async close(): Promise<void> {
    await this.committer.flushed();
    this.db.close();
  }

  protected commit(group: Pending<ops.StoreOp, ops.StoreResult>[]): void {
    this.agents();
    const settle: Array<() => void> = [];
    const run = this.db.transaction(() => {
      settle.length = 0;
      const last = this.db.prepare('SELECT text FROM calls ORDER BY seq DESC LIMIT 1').get() as { text: string } | undefined;
      let head: ChainHead = last ? { seq: (JSON.parse(last.text) as { seq: number }).seq, hash: lineHash(last.text) } : EMPTY_HEAD;
      const log = (entry: CallEntry, ts?: string) => {
        const sealed = sealCall(entry, head, this.signer, ts);
        this.db.prepare('INSERT INTO calls (seq, text) VALUES (?, ?)').run(sealed.record.seq, sealed.text);
        head = sealed.head;
      };
      for (const p of group) {
        try {
          const result = this.apply(p.op, log);
          settle.push(() => p.resolve(result));
        } catch (error) {
          settle.push(() => p.reject(error));
        }
      }
    });
    run.immediate();
    for (const s of settle) s();
  }

  private apply(op: ops.StoreOp, log: (entry: CallEntry, ts?: string) => void): ops.StoreResult {
    if (op.kind === 'record') return void log(ops.recordEntry(op.agent, op.tool, op.outcome));
    if (op.kind === 'fetch') return this.applyFetch(op.agent, op.options, log);
    const { from, input } = op;
    try {
      ops.checkRecipient(this.agentList, input.to);
      if (input.idempotencyKey !== undefined) {
        const earlier = this.db.prepare('SELECT id, recipient AS "to", sent_at FROM idempotency WHERE sender = ? AND key = ?').get(from, input.idempotencyKey) as ops.IdempotentSend | undefined;
        if (earlier) {
          log(ops.dedupEntry(from, earlier, input.idempotencyKey));
          return { ...earlier, deduplicated: true };
        }
      }
      const sentAt = new Date().toISOString();
      const message = ops.newMessage(from, input, sentAt);
      this.db.prepare('INSERT INTO messages (id, recipient, text) VALUES (?, ?, ?)').run(message.id, message.to, JSON.stringify(message));
      if (input.idempotencyKey !== undefined) {
        this.db.prepare('INSERT INTO idempotency VALUES (?, ?, ?, ?, ?)').run(from, input.idempotencyKey, message.id, message.to, sentAt);
      }
      log(ops.sendEntry(message), sentAt);
      return { id: message.id, to: message.to, sent_at: sentAt, deduplicated: false };
    } catch (error) {
      log(ops.failureEntry(from, 'send_message', error));
      throw error;
    }
  }

  private applyFetch(agent: string, options: FetchOptions, log: (entry: CallEntry) => void): Message[] {
    const cursor = (this.db.prepare('SELECT pos, delivered FROM cursors WHERE agent = ?').get(agent) as { pos: number; delivered: number } | undefined) ?? { pos: 0, delivered: 0 };
    const rows = this.db.prepare('SELECT pos, text FROM messages WHERE recipient = ? AND pos > ? ORDER BY pos LIMIT ?').all(agent, cursor.pos, options.limit) as Array<{ pos: number; text: string }>;
    const messages = rows.map((r) => JSON.parse(r.text) as Message);
    log({ agent, tool: options.tool, ok: true, message_ids: messages.map((m) => m.id), ...(options.peek ? { peek: true } : {}) });
    const lastRow = rows[rows.length - 1];
    if (!options.peek && lastRow) {
      this.db
        .prepare('INSERT INTO cursors (agent, pos, delivered, updated_at) VALUES (?, ?, ?, ?) ON CONFLICT(agent) DO UPDATE SET pos = excluded.pos, delivered = excluded.delivered, updated_at = excluded.updated_at')
        .run(agent, lastRow.pos, cursor.delivered + rows.length, new Date().toISOString());
    }
    return messages;
  }
}

/** The stored call lines and messages, for verify. */
export function sqliteSnapshot(dir: string): StoreSnapshot {
  const db = new Database(sqlitePath(dir), { readonly: true, fileMustExist: true });
  try {
    const file = sqlitePath(dir);
    const calls = (db.prepare('SELECT seq, text FROM calls ORDER BY rowid').all() as Array<{ seq: number; text: string }>).map((r, i) => ({ file: `${file}#calls`, line: i + 1, text: r.text }));
    const rows = db.prepare('SELECT pos, recipient, text FROM messages ORDER BY pos').all() as Array<{ pos: number; recipient: string; text: string }>;
    const byAgent = new Map<string, StoreSnapshot['inboxes'][number]>();
    for (const r of rows) {
      let inbox = byAgent.get(r.recipient);
      if (!inbox) {
        inbox = { agent: r.recipient, file: `${file}#messages[${r.recipient}]`, lines: [], tornTail: false };
        byAgent.set(r.recipient, inbox);
      }
      inbox.lines.push({ line: r.pos, text: r.text });
    }
    return { kind: 'sqlite', calls, callsTornTail: false, inboxes: [...byAgent.values()] };
  } finally {
    db.close();
  }
}
