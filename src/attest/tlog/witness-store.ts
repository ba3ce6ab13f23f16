/**
 * @module
 * What a witness remembers (c2sp.org/tlog-witness): the newest checkpoint it cosigned
 * for each log origin, in a SQLite file, so a restart never lets a log roll back. The
 * check of a submission against the stored size and the write of the new checkpoint
 * happen in one IMMEDIATE transaction: two submissions (from this process or another
 * sharing the file) can never both pass against the same old state — the race the spec
 * warns of, where a slower, smaller checkpoint would roll the stored one back.
 * Refused submissions whose log signature verified are kept as evidence of misbehaviour.
 * Several witness hosts sharing one state use PostgreSQL (witness-store-pg.ts), where an
 * advisory lock per origin does what SQLite's write lock does here.
 */
import { createRequire } from 'node:module';
import { WitnessError } from '../../core/errors.js';
import { retryWhileBusy } from '../../core/sqlite-busy.js';

/** What `decide` returns: the answer, and what to write before the transaction commits. */
export interface WitnessDecision<R> {
  result: R;
  /** The new newest checkpoint of the origin. */
  store?: StoredCheckpoint;
  /** A refused submission worth keeping: why, and the request as received. */
  refused?: { reason: string; request: string };
}

/** A witness's state: the newest cosigned checkpoint per origin, updated atomically. */
export interface WitnessState {
  /** The newest cosigned checkpoint of `origin`, if any. */
  latest(origin: string): StoredCheckpoint | undefined | Promise<StoredCheckpoint | undefined>;
  /**
   * Runs `decide` on the stored checkpoint of `origin` in one transaction that no other
   * update of that origin interleaves with, writes what it asks, then commits.
   */
  update<R>(origin: string, decide: (current: StoredCheckpoint | undefined) => WitnessDecision<R>): R | Promise<R>;
  close(): void | Promise<void>;
}

export interface StoredCheckpoint {
  origin: string;
  size: number;
  root: Buffer;
  /** The checkpoint note as submitted (with the log's signature), followed by the cosignature the witness answered. */
  note: string;
}

// The slice of better-sqlite3 used here (it ships no types).
interface _Statement {
  run(...params: unknown[]): { changes: number };
  get(...params: unknown[]): unknown;
}
interface _Transaction<A extends unknown[], R> {
  immediate(...args: A): R;
}
interface _Database {
  pragma(text: string): unknown;
  exec(sql: string): void;
  prepare(sql: string): _Statement;
  transaction<A extends unknown[], R>(fn: (...args: A) => R): _Transaction<A, R>;
  close(): void;
}
type _DatabaseConstructor = new (path: string, options?: { timeout?: number }) => _Database;

const SCHEMA = `
CREATE TABLE IF NOT EXISTS witness_checkpoints (origin TEXT PRIMARY KEY, size INTEGER NOT NULL, root BLOB NOT NULL, note TEXT NOT NULL, updated_at INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS witness_refused (id INTEGER PRIMARY KEY, origin TEXT NOT NULL, reason TEXT NOT NULL, request TEXT NOT NULL, at INTEGER NOT NULL);
`;

export class SqliteWitnessState implements WitnessState {
  readonly #db: _Database;
  readonly #get: _Statement;
  readonly #put: _Statement;
  readonly #refused: _Statement;

  constructor(path: string, options: { busyTimeoutMs?: number } = {}) {
    let Database: _DatabaseConstructor;
    try {
      Database = createRequire(import.meta.url)('better-sqlite3') as _DatabaseConstructor;
    } catch (cause) {
      throw new WitnessError(
        'INTERNAL',
        `The witness store needs better-sqlite3, which failed to load (${(cause as Error).message}). Run: npm rebuild better-sqlite3`,
        { cause },
      );
    }
    const timeout = options.busyTimeoutMs ?? 5000;
    try {
      this.#db = new Database(path, { timeout });
      const db = this.#db;
      retryWhileBusy(() => {
        db.pragma('journal_mode = WAL');
        // FULL: a cosignature is answered only after the state it promises is on disk.
        db.pragma('synchronous = FULL');
        db.exec(SCHEMA);
      }, timeout);
    } catch (cause) {
      throw new WitnessError(
        'IO',
        `Cannot open the witness state ${path}: ${(cause as Error).message}. Check the path is a writable SQLite file.`,
        { cause },
      );
    }
    this.#get = this.#db.prepare('SELECT origin, size, root, note FROM witness_checkpoints WHERE origin = ?');
    this.#put = this.#db.prepare(
      'INSERT INTO witness_checkpoints (origin, size, root, note, updated_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT (origin) DO UPDATE SET size = excluded.size, root = excluded.root, note = excluded.note, updated_at = excluded.updated_at',
    );
    this.#refused = this.#db.prepare('INSERT INTO witness_refused (origin, reason, request, at) VALUES (?, ?, ?, ?)');
  }

  latest(origin: string): StoredCheckpoint | undefined {
    const row = this.#get.get(origin) as { origin: string; size: number; root: Buffer; note: string } | undefined;
    return row && { origin: row.origin, size: row.size, root: Buffer.from(row.root), note: row.note };
  }

  update<R>(origin: string, decide: (current: StoredCheckpoint | undefined) => WitnessDecision<R>): R {
    const run = this.#db.transaction(() => {
      const { store, refused, result } = decide(this.latest(origin));
      if (store) this.#put.run(store.origin, store.size, store.root, store.note, Date.now());
      if (refused) this.#refused.run(origin, refused.reason, refused.request, Date.now());
      return result;
    });
    return run.immediate();
  }

  close(): void {
    this.#db.close();
  }
}
