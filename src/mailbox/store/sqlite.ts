/**
 * @module
 * The SQLite store (`--store sqlite`): the same interface as the JSONL store, in one
 * database file `mailbox.sqlite` in WAL mode with `synchronous=FULL`, so a commit is
 * durable when it returns. `BEGIN IMMEDIATE` is the cross-process lock; a group of
 * operations shares one transaction, and each operation runs in a savepoint, so one
 * that fails leaves nothing behind (its failure receipt is written after the
 * savepoint is undone). A database error (disk full) fails the whole group and
 * SQLite rolls the transaction back. Messages keep the exact JSON text an inbox line
 * would have, and the call log keeps each line's exact text, so receipts and the
 * hash chain are checked the same way for both stores.
 */
import type Database from 'better-sqlite3';
import { WitnessError } from '../../core/errors.js';
import { retryWhileBusy } from '../../core/sqlite-busy.js';
import { genuineCall } from '../call-check.js';
import { type CallEntry, type CallRecord, type ChainHead, EMPTY_HEAD, lineHash, type Message, sealCall } from '../call-log.js';
import { checkWellFormedText } from '../../core/text.js';
import { type DeliveryStatus, deliveryOf, isAckOf } from './delivery.js';
import type { Signer } from '../../attest/signature.js';
import { DEFAULT_LIMITS } from '../limits.js';
import { CommittingStore } from './committing-store.js';
import { writeFailure } from './files.js';
import { openMailboxDatabase, SQLITE_FILE, sqlitePath } from './sqlite-file.js';
import { FolderWatch } from './file-watch.js';
import type { Pending } from './group-commit.js';
import { CAPPED_TEXT } from './lines.js';
import * as ops from './ops.js';
import { checkQuota, type Count, type Quota, UnreadTracker } from './quota.js';
import type { AckResult, FetchOptions, MailboxStore, SendInput, SendResult } from './types.js';

export const SQLITE_SCHEMA = `
CREATE TABLE IF NOT EXISTS messages (pos INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, recipient TEXT NOT NULL, text TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS messages_recipient ON messages (recipient, pos);
CREATE TABLE IF NOT EXISTS calls (seq INTEGER PRIMARY KEY, text TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS cursors (agent TEXT PRIMARY KEY, pos INTEGER NOT NULL, delivered INTEGER NOT NULL, updated_at TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS idempotency (sender TEXT NOT NULL, key TEXT NOT NULL, id TEXT NOT NULL, recipient TEXT NOT NULL, sent_at TEXT NOT NULL, PRIMARY KEY (sender, key));
DROP TABLE IF EXISTS acks;
`;

/** Unread messages after the cursor, oldest first, read row by row. */
const UNREAD = `SELECT pos, ${CAPPED_TEXT} AS text FROM messages WHERE recipient = ? AND pos > ? ORDER BY pos`;

export { sqlitePath } from './sqlite-file.js';

/**
 * WAL mode, FULL sync and the schema. Two servers started at once on a mailbox whose
 * file is new (one stdio server per agent) both switch it to WAL, and SQLite answers
 * one of them SQLITE_BUSY without waiting: retried (core/sqlite-busy.ts).
 */
export function setUpMailboxDatabase(db: Database.Database): void {
  retryWhileBusy(() => {
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = FULL');
    db.exec(SQLITE_SCHEMA);
  }, 30_000);
}

export class SqliteStore extends CommittingStore implements MailboxStore {
  readonly kind = 'sqlite' as const;
  private readonly db: Database.Database;
  private readonly statements = new Map<string, Database.Statement>();
  private readonly unread: UnreadTracker;
  private readonly folderWatch: FolderWatch;
  /** The chain's head, valid inside a commit's transaction. */
  private head: ChainHead = EMPTY_HEAD;
  /** Applies one operation in a savepoint of the commit's transaction. */
  private readonly inSavepoint: (op: ops.StoreOp) => ops.StoreResult;

  constructor(dir: string, private readonly signer: Signer, quota: Quota = DEFAULT_LIMITS) {
    super(dir);
    this.db = openMailboxDatabase(dir); // a regular file, never through a planted link
    setUpMailboxDatabase(this.db);
    this.unread = new UnreadTracker(quota);
    this.folderWatch = new FolderWatch(dir);
    this.inSavepoint = this.db.transaction((op: ops.StoreOp) => this.apply(op));
  }

  async hasUnread(agent: string): Promise<boolean> {
    for (const row of this.sql(UNREAD).iterate(agent, this.cursor(agent).pos) as Iterable<{ text: string | null }>) {
      if (ops.parseMessage(row.text ?? undefined)) return true;
    }
    return false;
  }

  async status(id: string): Promise<DeliveryStatus | undefined> {
    const rows = this.sql('SELECT text FROM calls WHERE instr(text, ?) > 0 ORDER BY seq').all(id) as Array<{ text: string }>;
    return deliveryOf(id, rows.map((r) => r.text), this.signer);
  }

  async acknowledged(agent: string, ids: string[]): Promise<Set<string>> {
    return new Set(ids.filter((id) => this.earlierAck(agent, id) !== undefined));
  }

  async inboxMark(agent: string): Promise<string> {
    return String((this.sql('SELECT coalesce(max(pos), 0) AS mark FROM messages WHERE recipient = ?').get(agent) as { mark: number }).mark);
  }

  async inboxSince(agent: string, mark: string, limit: number): Promise<{ messages: Message[]; mark: string }> {
    const messages: Message[] = [];
    let last = mark === '' ? this.cursor(agent).pos : Number(mark);
    for (const row of this.sql(UNREAD).iterate(agent, last) as Iterable<{ pos: number; text: string | null }>) {
      const m = ops.parseMessage(row.text ?? undefined);
      if (m) messages.push(m);
      last = row.pos;
      if (messages.length >= limit) break;
    }
    return { messages, mark: String(last) };
  }

  /** A commit by any process on this machine writes the database's WAL: it wakes everyone here, who look. */
  onMail(wake: (agent: string | undefined) => void): () => void {
    return this.folderWatch.listen((file) => {
      if (file === undefined || file.startsWith(SQLITE_FILE)) wake(undefined);
    });
  }

  async close(): Promise<void> {
    await this.committer.flushed();
    this.folderWatch.stop();
    this.db.close();
  }

  protected commit(group: Pending<ops.StoreOp, ops.StoreResult>[]): void {
    this.agentsNow();
    const settle: Array<() => void> = [];
    const run = this.db.transaction(() => {
      settle.length = 0;
      const last = this.sql('SELECT seq, text FROM calls ORDER BY seq DESC LIMIT 1').get() as { seq: number; text: string } | undefined;
      this.head = last ? { seq: last.seq, hash: lineHash(last.text) } : EMPTY_HEAD;
      for (const p of group) {
        const head = this.head;
        try {
          const result = this.inSavepoint(p.op);
          settle.push(() => p.resolve(result));
        } catch (error) {
          this.head = head;
          if (!(error instanceof WitnessError)) throw error; // the database failed: the whole group fails
          const failed = ops.failedCall(p.op, error);
          if (failed) this.log(failed);
          settle.push(() => p.reject(error));
        }
      }
    });
    try {
      run.immediate();
    } catch (error) {
      this.unread.forget();
      throw writeFailure(error, this.dir, sqlitePath(this.dir));
    }
    for (const s of settle) s();
  }

  private apply(op: ops.StoreOp): ops.StoreResult {
    if (op.kind === 'record') return void this.log(ops.recordEntry(op.agent, op.tool, op.outcome));
    if (op.kind === 'ack') return this.applyAck(op.agent, op.id, op.reply);
    if (op.kind === 'fetch') return this.applyFetch(op.agent, op.options);
    return this.applySend(op.from, op.input);
  }

  private applySend(from: string, input: SendInput): SendResult {
    ops.checkRecipient(this.agentList, input.to);
    if (input.idempotencyKey !== undefined) {
      const earlier = this.sql('SELECT id, recipient AS "to", sent_at FROM idempotency WHERE sender = ? AND key = ?').get(from, input.idempotencyKey) as ops.IdempotentSend | undefined;
      // The idempotency row is only a pointer: a row written by someone else, or whose
      // message is gone, is replaced below and the message stored (it never was).
      const stored = earlier && this.backs(from, input.idempotencyKey, earlier);
      if (earlier && stored) {
        this.log(ops.dedupEntry(from, earlier, input.idempotencyKey));
        return ops.dedupResult(stored);
      }
    }
    const parent = input.replyTo === undefined ? undefined : ops.receivedOrRefuse(this.received(from, input.replyTo), from, input.replyTo, 'reply_to');
    const sentAt = new Date().toISOString();
    const { message, text, bytes, entry } = ops.prepareSend(from, input, sentAt, parent);
    this.checkQuota(message.to, bytes);
    this.sql('INSERT INTO messages (id, recipient, text) VALUES (?, ?, ?)').run(message.id, message.to, text);
    if (input.idempotencyKey !== undefined) {
      this.sql('INSERT OR REPLACE INTO idempotency VALUES (?, ?, ?, ?, ?)').run(from, input.idempotencyKey, message.id, message.to, sentAt);
    }
    this.log(entry, sentAt);
    return { id: message.id, to: message.to, sent_at: sentAt, ...(message.thread ? { thread: message.thread } : {}), deduplicated: false };
  }

  private applyAck(agent: string, id: string, reply: string | undefined): AckResult {
    ops.receivedOrRefuse(this.received(agent, id), agent, id, 'message_id');
    if (reply !== undefined) checkWellFormedText(reply, 'The reply');
    const earlier = this.earlierAck(agent, id);
    const seq = this.log(ops.ackEntry(agent, id, reply, earlier !== undefined));
    if (earlier) return { id, acknowledged_at: earlier.ts, ...(earlier.reply !== undefined ? { reply: earlier.reply } : {}), deduplicated: true };
    return { id, acknowledged_at: seq.record.ts, ...(reply !== undefined ? { reply } : {}), deduplicated: false };
  }

  /** The message `id` in `agent`'s inbox, if it is there. */
  private received(agent: string, id: string): Message | undefined {
    const row = this.sql(`SELECT ${CAPPED_TEXT} AS text FROM messages WHERE id = ? AND recipient = ?`).get(id, agent) as { text: string | null } | undefined;
    return ops.recordIs(row?.text ?? undefined, id);
  }

  /**
   * `agent`'s earlier acknowledgement of `id`: the first genuine ack receipt in the call
   * log itself (an index table beside it could be edited apart from the lines: a deleted
   * row made a second ack count as the first).
   */
  private earlierAck(agent: string, id: string): CallRecord | undefined {
    const needle = `"message_ids":[${JSON.stringify(id)}]`;
    for (const call of this.sql('SELECT text FROM calls WHERE instr(text, ?) > 0 ORDER BY seq').iterate(needle) as Iterable<{ text: string }>) {
      const record = genuineCall(call.text, this.signer);
      if (record && isAckOf(record, id) && record.agent === agent) return record;
    }
    return undefined;
  }

  /**
   * The earlier send's message is stored and a genuine send receipt backs it
   * (ops.storedDedup, ops.receiptBacks). The receipt is found by its id in the line's
   * text, newest first (a retry follows its send closely); only retries pay this.
   */
  private backs(from: string, key: string, earlier: ops.IdempotentSend): Message | undefined {
    const row = this.sql('SELECT text FROM messages WHERE id = ? AND recipient = ?').get(earlier.id, earlier.to) as { text: string } | undefined;
    const stored = ops.storedDedup(from, key, earlier, row?.text);
    if (!stored) return undefined;
    const needle = `"message_ids":[${JSON.stringify(stored.id)}]`;
    for (const call of this.sql('SELECT text FROM calls WHERE instr(text, ?) > 0 ORDER BY seq DESC').iterate(needle) as Iterable<{ text: string }>) {
      const record = genuineCall(call.text, this.signer);
      if (record && ops.receiptBacks(record, stored)) return stored;
    }
    return undefined;
  }

  private checkQuota(to: string, bytes: number): void {
    if (!this.unread.active) return;
    const cursor = this.cursor(to).pos;
    const end = (this.sql('SELECT max(pos) AS end FROM messages WHERE recipient = ?').get(to) as { end: number | null }).end ?? cursor;
    const count = (from: number, upTo: number) =>
      this.sql('SELECT count(*) AS messages, coalesce(sum(octet_length(text) + 1), 0) AS bytes FROM messages WHERE recipient = ? AND pos > ? AND pos <= ?').get(to, from, upTo) as Count;
    checkQuota(this.unread.quota, to, this.unread.unread(to, cursor, end, count), bytes);
  }

  private applyFetch(agent: string, options: FetchOptions): Message[] {
    if (options.thread !== undefined) return this.applyThreadRead(agent, options, options.thread);
    const cursor = this.cursor(agent);
    const messages: Message[] = [];
    let skipped = 0;
    let last = cursor.pos;
    if (options.limit > 0) {
      for (const row of this.sql(UNREAD).iterate(agent, cursor.pos) as Iterable<{ pos: number; text: string | null }>) {
        const m = ops.parseMessage(row.text ?? undefined);
        if (m) messages.push(m);
        else skipped++; // damaged: skipped, counted in the receipt, and reported by verify
        last = row.pos;
        if (messages.length >= options.limit) break;
      }
    }
    if (options.quietIfEmpty && messages.length === 0) return messages;
    this.log(ops.fetchEntry(agent, options.tool, messages, skipped, options.peek));
    if (!options.peek && last !== cursor.pos) {
      this.sql('INSERT INTO cursors (agent, pos, delivered, updated_at) VALUES (?, ?, ?, ?) ON CONFLICT(agent) DO UPDATE SET pos = excluded.pos, delivered = excluded.delivered, updated_at = excluded.updated_at').run(
        agent,
        last,
        cursor.delivered + messages.length,
        new Date().toISOString(),
      );
    }
    return messages;
  }

  /** Every message of `agent`'s inbox in one conversation, read or not; a peek (nothing moves). */
  private applyThreadRead(agent: string, options: FetchOptions, thread: string): Message[] {
    const messages: Message[] = [];
    for (const row of this.sql(`SELECT ${CAPPED_TEXT} AS text FROM messages WHERE recipient = ? AND instr(text, ?) > 0 ORDER BY pos`).iterate(agent, thread) as Iterable<{ text: string | null }>) {
      const m = ops.parseMessage(row.text ?? undefined);
      if (m && ops.threadOf(m) === thread) messages.push(m);
      if (messages.length >= options.limit) break;
    }
    this.log(ops.fetchEntry(agent, options.tool, messages, 0, true));
    return messages;
  }

  private cursor(agent: string): { pos: number; delivered: number } {
    return (this.sql('SELECT pos, delivered FROM cursors WHERE agent = ?').get(agent) as { pos: number; delivered: number } | undefined) ?? { pos: 0, delivered: 0 };
  }

  private log(entry: CallEntry, ts?: string): ReturnType<typeof sealCall> {
    const sealed = sealCall(entry, this.head, this.signer, ts);
    this.sql('INSERT INTO calls (seq, text) VALUES (?, ?)').run(sealed.record.seq, sealed.text);
    this.head = sealed.head;
    return sealed;
  }

  /** A prepared statement, prepared once. */
  private sql(text: string): Database.Statement {
    let statement = this.statements.get(text);
    if (!statement) {
      statement = this.db.prepare(text);
      this.statements.set(text, statement);
    }
    return statement;
  }
}
