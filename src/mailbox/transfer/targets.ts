/**
 * @module
 * Where `witness mailbox import` writes: a new mailbox of any store, fed the
 * export's records in order. Each target keeps records exactly as exported, turns
 * read cursors (a count of records read) into its own positions, rebuilds the
 * idempotency index a database store keeps (the JSONL store learns it from the log),
 * writes mailbox.json last, and on `abort` leaves nothing behind.
 */
import { closeSync, existsSync, fsyncSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type Database from 'better-sqlite3';
import { syncFolder } from '../../core/atomic-write.js';
import { WitnessError } from '../../core/errors.js';
import type { CallRecord } from '../call-log.js';
import { type AgentEntry, configPath, type MailboxConfig, writeJsonAtomic } from '../config.js';
import { APPEND, openInside, READ, replaceFile, writeAll } from '../store/files.js';
import { cursorRel, inboxRel, LOG } from '../store/jsonl/files.js';
import { scanLines } from '../store/lines.js';
import { type IdempotentSend, learnIdempotency } from '../store/ops.js';
import { setUpMailboxDatabase } from '../store/sqlite/driver.js';
import { openMailboxDatabase } from '../store/sqlite/file.js';
import { storeKind } from '../store-kinds.js';

export interface ImportTarget {
  agent(entry: AgentEntry): void | Promise<void>;
  call(text: string): void | Promise<void>;
  message(to: string, text: string): void | Promise<void>;
  /** `agent` has read its first `read` records. */
  cursor(agent: string, read: number): void | Promise<void>;
  /** Makes it durable and writes mailbox.json. */
  finish(): void | Promise<void>;
  /** Removes or rolls back whatever was written. */
  abort(): void | Promise<void>;
  /** After `finish`: deletes what lies outside the folder (a database's rows); the caller removes the folder. */
  discard(): void | Promise<void>;
}

export async function openTarget(dir: string, config: MailboxConfig): Promise<ImportTarget> {
  if (existsSync(dir) && readdirSync(dir).length > 0)
    throw new WitnessError('USAGE', `${dir} is not empty; import into a new folder. Nothing was imported.`);
  return storeKind(config.store).target(dir, config);
}

/** A target that keeps its data in the folder: made here, and removed (or emptied, if it was there) on failure. */
export function folderTarget(dir: string, make: (remove: () => void) => ImportTarget): ImportTarget {
  const created = !existsSync(dir);
  mkdirSync(dir, { recursive: true });
  return make(() => {
    if (created) rmSync(dir, { recursive: true, force: true });
    else for (const f of readdirSync(dir)) rmSync(join(dir, f), { recursive: true, force: true });
  });
}

/**
 * What a database store indexes of its call log, rebuilt from the imported lines:
 * the sends under an idempotency key (newest per sender and key). The stores check
 * each against its genuine receipt when they use it, as they do for their own rows.
 */
export class LogIndex {
  readonly sends = new Map<string, IdempotentSend>();

  /** Learns from one line; returns it parsed (undefined for a damaged line, which keys nothing). */
  learn(text: string): (Partial<CallRecord> & { ts?: string }) | undefined {
    let record: unknown;
    try {
      record = JSON.parse(text);
    } catch {
      return undefined;
    }
    if (typeof record !== 'object' || record === null) return undefined;
    const r = record as Partial<CallRecord> & { ts?: string };
    learnIdempotency(this.sends, r, { at: 0 });
    return r;
  }

  /** [sender, key, send] for each entry. */
  *entries(): Generator<[string, string, IdempotentSend]> {
    for (const [k, send] of this.sends) {
      const cut = k.indexOf('\u0000');
      yield [k.slice(0, cut), k.slice(cut + 1), send];
    }
  }
}

export class JsonlTarget implements ImportTarget {
  private readonly agents: AgentEntry[] = [];
  private readonly fds = new Map<string, number>();
  private readonly cursors: Array<[string, number]> = [];

  constructor(
    private readonly dir: string,
    private readonly config: MailboxConfig,
    private readonly remove: () => void,
  ) {
    mkdirSync(join(dir, 'inbox'));
    mkdirSync(join(dir, 'cursors'));
  }

  agent(entry: AgentEntry): void {
    this.agents.push(entry);
  }

  call(text: string): void {
    this.append(LOG, text);
  }

  message(to: string, text: string): void {
    this.append(inboxRel(to), text);
  }

  cursor(agent: string, read: number): void {
    this.cursors.push([agent, read]);
  }

  finish(): void {
    for (const fd of this.fds.values()) fsyncSync(fd);
    this.closeAll();
    for (const [agent, read] of this.cursors)
      replaceFile(
        this.dir,
        cursorRel(agent),
        JSON.stringify({
          offset: this.offsetAfter(agent, read),
          delivered: read,
          updated_at: new Date().toISOString(),
        }),
        { syncFolder: false },
      );
    syncFolder(join(this.dir, 'inbox'));
    syncFolder(join(this.dir, 'cursors'));
    writeJsonAtomic(join(this.dir, 'agents.json'), { agents: this.agents });
    writeJsonAtomic(configPath(this.dir), this.config);
  }

  discard(): void {}

  abort(): void {
    this.closeAll();
    this.remove();
  }

  private append(rel: string, text: string): void {
    let fd = this.fds.get(rel);
    if (fd === undefined) {
      fd = openInside(this.dir, rel, APPEND)!;
      this.fds.set(rel, fd);
    }
    writeAll(fd, Buffer.from(`${text}\n`, 'utf8'));
  }

  /** The byte offset just after the first `read` lines of an inbox. */
  private offsetAfter(agent: string, read: number): number {
    const fd = openInside(this.dir, inboxRel(agent), READ);
    if (fd === undefined) return 0;
    try {
      let n = 0;
      let offset = 0;
      if (read === 0) return 0;
      scanLines(fd, 0, (line) => {
        offset = line.end;
        return ++n < read;
      });
      return offset;
    } finally {
      closeSync(fd);
    }
  }

  private closeAll(): void {
    for (const fd of this.fds.values()) closeSync(fd);
    this.fds.clear();
  }
}

export class SqliteTarget implements ImportTarget {
  private readonly db: Database.Database;
  private readonly index = new LogIndex();
  private readonly agents: AgentEntry[] = [];
  private readonly ids = new UniqueIds();

  constructor(
    private readonly dir: string,
    private readonly config: MailboxConfig,
    private readonly remove: () => void,
  ) {
    this.db = openMailboxDatabase(dir);
    setUpMailboxDatabase(this.db);
    this.db.exec('BEGIN IMMEDIATE');
  }

  agent(entry: AgentEntry): void {
    this.agents.push(entry);
  }

  call(text: string): void {
    this.db.prepare('INSERT INTO calls (seq, text) VALUES (?, ?)').run(callSeq(text, this.config.store), text);
    this.index.learn(text);
  }

  message(to: string, text: string): void {
    const insert = this.db.prepare('INSERT OR IGNORE INTO messages (id, recipient, text) VALUES (?, ?, ?)');
    if (insert.run(this.ids.of(text), to, text).changes === 0) insert.run(this.ids.fresh(), to, text);
  }

  cursor(agent: string, read: number): void {
    if (read === 0) return;
    const row = this.db
      .prepare('SELECT pos FROM messages WHERE recipient = ? ORDER BY pos LIMIT 1 OFFSET ?')
      .get(agent, read - 1) as { pos: number };
    this.db
      .prepare('INSERT INTO cursors (agent, pos, delivered, updated_at) VALUES (?, ?, ?, ?)')
      .run(agent, row.pos, read, new Date().toISOString());
  }

  finish(): void {
    const insert = this.db.prepare('INSERT INTO idempotency VALUES (?, ?, ?, ?, ?)');
    for (const [sender, key, send] of this.index.entries()) insert.run(sender, key, send.id, send.to, send.sent_at);
    this.db.exec('COMMIT');
    this.db.close();
    writeJsonAtomic(join(this.dir, 'agents.json'), { agents: this.agents });
    writeJsonAtomic(configPath(this.dir), this.config);
  }

  discard(): void {}

  abort(): void {
    if (this.db.open) this.db.close();
    this.remove();
  }
}

/** The `seq` a call line is keyed by in a database store; a line without one cannot be stored there. */
export function callSeq(text: string, store: string): number {
  try {
    const seq = (JSON.parse(text) as { seq?: unknown }).seq;
    if (Number.isSafeInteger(seq)) return seq as number;
  } catch {
    // below
  }
  throw new WitnessError(
    'INVALID_INPUT',
    `A call-log line of the export is not a call record with a seq (${text.slice(0, 80)}…): a ${store} mailbox keys its log by seq, so this damaged log can only be imported into a jsonl mailbox. Nothing was imported.`,
  );
}

/**
 * The id a database store keys a message row by: the id its record says, or — for a
 * damaged record, or a second record with an id already taken (a forgery verify
 * reports) — a made-up one. The row keeps the record's text as it is.
 */
export class UniqueIds {
  private n = 0;

  of(text: string): string {
    try {
      const id = (JSON.parse(text) as { id?: unknown }).id;
      if (typeof id === 'string') return id;
    } catch {
      // below
    }
    return this.fresh();
  }

  fresh(): string {
    return `imported_unkeyed_${++this.n}`;
  }
}
