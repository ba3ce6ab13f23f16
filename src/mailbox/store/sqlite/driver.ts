/**
 * @module
 * The SQLite store's driver (`--store sqlite`): one database file `mailbox.sqlite`
 * in WAL mode with `synchronous=FULL`, so a commit is durable when it returns.
 * `BEGIN IMMEDIATE` is the cross-process lock; a group of operations shares one
 * transaction. An operation the engine refuses has added nothing (engine.ts checks
 * before it adds); a database error (disk full) fails the whole group and the
 * transaction is rolled back. Reads outside a group use a second connection, so they
 * never see a group's rows before it commits. Messages keep the exact JSON text an
 * inbox line would have, and the call log keeps each line's exact text, so receipts
 * and the hash chain are checked the same way for every store.
 */
import type Database from 'better-sqlite3';
import type { Signer } from '../../../attest/signature.js';
import { WitnessError } from '../../../core/errors.js';
import { retryWhileBusy } from '../../../core/sqlite-busy.js';
import { genuineCall } from '../../call-check.js';
import { EMPTY_HEAD, lineHash } from '../../call-log.js';
import type { AgentEntry } from '../../config.js';
import { DEFAULT_LIMITS } from '../../limits.js';
import { AgentsFile } from '../agents-file.js';
import { isAckOf } from '../delivery.js';
import type { ReadCursor, Sealed, StoreDriver, StoredRow, StoreTx } from '../driver.js';
import { MailboxEngine } from '../engine.js';
import { FolderWatch } from '../file-watch.js';
import { writeFailure } from '../files.js';
import { CAPPED_TEXT } from '../lines.js';
import type * as ops from '../ops.js';
import type { Count, Quota } from '../quota.js';
import { UnreadTracker } from '../quota.js';
import { openMailboxDatabase, SQLITE_FILE, sqlitePath } from './file.js';

export const SQLITE_SCHEMA = `
CREATE TABLE IF NOT EXISTS messages (pos INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, recipient TEXT NOT NULL, text TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS messages_recipient ON messages (recipient, pos);
CREATE TABLE IF NOT EXISTS calls (seq INTEGER PRIMARY KEY, text TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS cursors (agent TEXT PRIMARY KEY, pos INTEGER NOT NULL, delivered INTEGER NOT NULL, updated_at TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS idempotency (sender TEXT NOT NULL, key TEXT NOT NULL, id TEXT NOT NULL, recipient TEXT NOT NULL, sent_at TEXT NOT NULL, PRIMARY KEY (sender, key));
DROP TABLE IF EXISTS acks;
`;

/** Records after a position, oldest first, a page at a time. */
const AFTER = `SELECT pos, ${CAPPED_TEXT} AS text FROM messages WHERE recipient = ? AND pos > ? ORDER BY pos LIMIT ?`;
const MATCHING = `SELECT pos, ${CAPPED_TEXT} AS text FROM messages WHERE recipient = ? AND pos > ? AND instr(text, ?) > 0 ORDER BY pos LIMIT ?`;
const NAMING = 'SELECT text FROM calls WHERE instr(text, ?) > 0 ORDER BY seq';

export { sqlitePath } from './file.js';

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

export class SqliteStore extends MailboxEngine {
  constructor(dir: string, signer: Signer, quota: Quota = DEFAULT_LIMITS) {
    super(new SqliteDriver(dir, signer, quota), signer, quota);
  }
}

/** Prepared statements of one connection, each prepared once. */
class _Statements {
  private readonly statements = new Map<string, Database.Statement>();

  constructor(readonly db: Database.Database) {}

  sql(text: string): Database.Statement {
    let statement = this.statements.get(text);
    if (!statement) {
      statement = this.db.prepare(text);
      this.statements.set(text, statement);
    }
    return statement;
  }

  cursor(agent: string): ReadCursor {
    return (
      (this.sql('SELECT pos, delivered FROM cursors WHERE agent = ?').get(agent) as ReadCursor | undefined) ?? {
        pos: 0,
        delivered: 0,
      }
    );
  }

  readAfter(agent: string, after: number, want: number): StoredRow[] {
    return _rows(this.sql(AFTER).all(agent, after, want));
  }

  linesNaming(id: string): string[] {
    return (this.sql(NAMING).all(id) as Array<{ text: string }>).map((r) => r.text);
  }

  /** `agent`'s first genuine acknowledgement of `id`, found in the call log itself (an index beside it could be edited apart from the lines). */
  earlierAck(agent: string, id: string, signer: Signer): { ts: string; reply?: string } | undefined {
    for (const call of this.sql(NAMING).iterate(`"message_ids":[${JSON.stringify(id)}]`) as Iterable<{
      text: string;
    }>) {
      const record = genuineCall(call.text, signer);
      if (record && isAckOf(record, id) && record.agent === agent)
        return { ts: record.ts, ...(record.reply !== undefined ? { reply: record.reply } : {}) };
    }
    return undefined;
  }
}

export class SqliteDriver implements StoreDriver {
  readonly kind = 'sqlite' as const;
  /** The connection commits write through. */
  private readonly writer: _Statements;
  /** The connection reads outside a group go through: it sees only committed rows. */
  private readonly reader: _Statements;
  private readonly unreadTracker: UnreadTracker;
  private readonly folderWatch: FolderWatch;
  private readonly agentsFile: AgentsFile;

  constructor(
    readonly dir: string,
    private readonly signer: Signer,
    quota: Quota,
  ) {
    const db = openMailboxDatabase(dir); // a regular file, never through a planted link
    setUpMailboxDatabase(db);
    this.writer = new _Statements(db);
    this.reader = new _Statements(openMailboxDatabase(dir));
    this.unreadTracker = new UnreadTracker(quota);
    this.folderWatch = new FolderWatch(dir);
    this.agentsFile = new AgentsFile(dir);
  }

  async agents(): Promise<AgentEntry[]> {
    return this.agentsFile.now();
  }

  failsGroup(error: unknown): boolean {
    return !(error instanceof WitnessError); // the database failed: the whole group fails
  }

  cursor(agent: string): ReadCursor {
    return this.reader.cursor(agent);
  }

  readAfter(agent: string, after: number, want: number): StoredRow[] {
    return this.reader.readAfter(agent, after, want);
  }

  linesNaming(id: string): string[] {
    return this.reader.linesNaming(id);
  }

  async acknowledged(agent: string, ids: string[]): Promise<Set<string>> {
    return new Set(ids.filter((id) => this.reader.earlierAck(agent, id, this.signer) !== undefined));
  }

  async inboxMark(agent: string): Promise<string> {
    return String(
      (
        this.reader.sql('SELECT coalesce(max(pos), 0) AS mark FROM messages WHERE recipient = ?').get(agent) as {
          mark: number;
        }
      ).mark,
    );
  }

  /** A commit by any process on this machine writes the database's WAL: it wakes everyone here, who look. */
  onMail(wake: (agent: string | undefined) => void): () => void {
    return this.folderWatch.listen((file) => {
      if (file === undefined || file.startsWith(SQLITE_FILE)) wake(undefined);
    });
  }

  async close(): Promise<void> {
    this.folderWatch.stop();
    this.reader.db.close();
    this.writer.db.close();
  }

  async group(run: (tx: StoreTx) => Promise<void>): Promise<void> {
    const agents = this.agentsFile.now();
    const w = this.writer;
    try {
      w.sql('BEGIN IMMEDIATE').run();
    } catch (error) {
      throw writeFailure(error, this.dir, sqlitePath(this.dir));
    }
    try {
      const last = w.sql('SELECT seq, text FROM calls ORDER BY seq DESC LIMIT 1').get() as
        | { seq: number; text: string }
        | undefined;
      const head = last ? { seq: last.seq, hash: lineHash(last.text) } : EMPTY_HEAD;
      await run(new _SqliteTx(w, this.signer, this.unreadTracker, head, agents));
      w.sql('COMMIT').run();
    } catch (error) {
      this.unreadTracker.forget();
      if (w.db.inTransaction) w.db.exec('ROLLBACK');
      throw error instanceof WitnessError ? error : writeFailure(error, this.dir, sqlitePath(this.dir));
    }
  }
}

/** One group's view: the writing connection inside its transaction (rows are written at once). */
class _SqliteTx implements StoreTx {
  constructor(
    private readonly w: _Statements,
    private readonly signer: Signer,
    private readonly tracker: UnreadTracker,
    readonly head: Sealed['head'],
    readonly agents: AgentEntry[],
  ) {}

  cursor(agent: string): ReadCursor {
    return this.w.cursor(agent);
  }

  readAfter(agent: string, after: number, want: number): StoredRow[] {
    return this.w.readAfter(agent, after, want);
  }

  readMatching(agent: string, needle: string, after: number, want: number): StoredRow[] {
    return _rows(this.w.sql(MATCHING).all(agent, after, needle, want));
  }

  linesNaming(id: string): string[] {
    return this.w.linesNaming(id);
  }

  keyedSend(from: string, key: string): ops.IdempotentSend | undefined {
    return this.w
      .sql('SELECT id, recipient AS "to", sent_at FROM idempotency WHERE sender = ? AND key = ?')
      .get(from, key) as ops.IdempotentSend | undefined;
  }

  findRecord(agent: string, id: string): StoredRow | undefined {
    const row = this.w
      .sql(`SELECT pos, ${CAPPED_TEXT} AS text FROM messages WHERE id = ? AND recipient = ?`)
      .get(id, agent) as { pos: number; text: string | null } | undefined;
    return row && { pos: row.pos, text: row.text ?? undefined };
  }

  /** The receipt is found by its id in the line's text, newest first (a retry follows its send closely); only retries pay this. */
  receiptLines(earlier: ops.IdempotentSend): Iterable<string> {
    const rows = this.w
      .sql('SELECT text FROM calls WHERE instr(text, ?) > 0 ORDER BY seq DESC')
      .iterate(`"message_ids":[${JSON.stringify(earlier.id)}]`) as Iterable<{ text: string }>;
    return (function* () {
      for (const r of rows) yield r.text;
    })();
  }

  earlierAck(agent: string, id: string): { ts: string; reply?: string } | undefined {
    return this.w.earlierAck(agent, id, this.signer);
  }

  unread(to: string): Count {
    const cursor = this.w.cursor(to).pos;
    const end =
      (this.w.sql('SELECT max(pos) AS end FROM messages WHERE recipient = ?').get(to) as { end: number | null }).end ??
      cursor;
    const count = (from: number, upTo: number) =>
      this.w
        .sql(
          'SELECT count(*) AS messages, coalesce(sum(octet_length(text) + 1), 0) AS bytes FROM messages WHERE recipient = ? AND pos > ? AND pos <= ?',
        )
        .get(to, from, upTo) as Count;
    return this.tracker.unread(to, cursor, end, count);
  }

  addMessage(prepared: ops.PreparedSend): void {
    const { message, text } = prepared;
    this.w.sql('INSERT INTO messages (id, recipient, text) VALUES (?, ?, ?)').run(message.id, message.to, text);
    if (message.idempotency_key !== undefined) {
      this.w
        .sql('INSERT OR REPLACE INTO idempotency VALUES (?, ?, ?, ?, ?)')
        .run(message.from, message.idempotency_key, message.id, message.to, message.sent_at);
    }
  }

  addCall(sealed: Sealed): void {
    this.w.sql('INSERT INTO calls (seq, text) VALUES (?, ?)').run(sealed.record.seq, sealed.text);
  }

  moveCursor(agent: string, cursor: ReadCursor): void {
    this.w
      .sql(
        'INSERT INTO cursors (agent, pos, delivered, updated_at) VALUES (?, ?, ?, ?) ON CONFLICT(agent) DO UPDATE SET pos = excluded.pos, delivered = excluded.delivered, updated_at = excluded.updated_at',
      )
      .run(agent, cursor.pos, cursor.delivered, new Date().toISOString());
  }
}

function _rows(rows: unknown[]): StoredRow[] {
  return (rows as Array<{ pos: number; text: string | null }>).map((r) => ({ pos: r.pos, text: r.text ?? undefined }));
}
