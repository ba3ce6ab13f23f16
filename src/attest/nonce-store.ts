/**
 * @module
 * Nonce stores: the memory of which receipts were already accepted, so a replayed
 * receipt is refused (`REPLAY`). The SQLite store is shared by every verifier process
 * that opens the same file and survives restarts (attest.md §4) — the paper's artifact
 * only had one in-memory store. `claim` is atomic: of two processes racing on one
 * nonce, exactly one wins.
 */
import { createRequire } from 'node:module';
import { WitnessError } from '../core/errors.js';
import { retryWhileBusy } from '../core/sqlite-busy.js';
import { isPostgresUrl } from './postgres.js';

export interface NonceStore {
  /**
   * Records `id` as used until `expiresAt` (ms). True when it was new; false when it
   * was already recorded (a replay). Atomic across everything sharing the store.
   */
  claim(id: string, expiresAt: number): boolean | Promise<boolean>;
  /** Forgets entries that expired before `now`; returns how many were removed. */
  prune(now: number): number | Promise<number>;
  /** Releases the file or connections; await it before exiting. */
  close(): void | Promise<void>;
}

/**
 * Opens the nonce store a user named: a `postgres://` URL for verifiers on several
 * machines, otherwise a SQLite file path for processes of one machine. Every verifier
 * path (CLI, tests' child verifiers) opens its store here.
 */
export async function openNonceStore(urlOrPath: string): Promise<NonceStore> {
  if (isPostgresUrl(urlOrPath)) {
    const { PostgresNonceStore } = await import('./nonce-store-pg.js');
    return PostgresNonceStore.open(urlOrPath);
  }
  return new SqliteNonceStore(urlOrPath);
}

/** One process only; forgets everything on exit. For tests and single-shot tools. */
export class MemoryNonceStore implements NonceStore {
  readonly #seen = new Map<string, number>();
  claim(id: string, expiresAt: number): boolean {
    if (this.#seen.has(id)) return false;
    this.#seen.set(id, expiresAt);
    return true;
  }
  prune(now: number): number {
    let removed = 0;
    for (const [id, expiresAt] of this.#seen) {
      if (expiresAt < now) {
        this.#seen.delete(id);
        removed++;
      }
    }
    return removed;
  }
  close(): void {
    this.#seen.clear();
  }
}

// The slice of better-sqlite3 the nonce store uses, typed here so attest needs no import of the package's types (it is loaded through require).
interface _Statement {
  run(...params: unknown[]): { changes: number };
}
interface _Database {
  pragma(text: string): unknown;
  exec(sql: string): void;
  prepare(sql: string): _Statement;
  close(): void;
}
type _DatabaseConstructor = new (path: string, options?: { timeout?: number }) => _Database;

function _loadSqlite(): _DatabaseConstructor {
  try {
    return createRequire(import.meta.url)('better-sqlite3') as _DatabaseConstructor;
  } catch (cause) {
    throw new WitnessError(
      'INTERNAL',
      `The SQLite nonce store needs better-sqlite3, which failed to load (${(cause as Error).message}). Run: npm rebuild better-sqlite3`,
      { cause },
    );
  }
}

export interface SqliteNonceStoreOptions {
  /** How long (ms) to wait for another process's write lock before failing. */
  busyTimeoutMs?: number;
}

/** A nonce store in a SQLite file, shared by processes on one machine. */
export class SqliteNonceStore implements NonceStore {
  readonly #db: _Database;
  readonly #insert: _Statement;
  readonly #prune: _Statement;

  constructor(path: string, options: SqliteNonceStoreOptions = {}) {
    const Database = _loadSqlite();
    try {
      this.#db = new Database(path, { timeout: options.busyTimeoutMs ?? 5000 });
      const db = this.#db;
      // WAL lets readers and one writer proceed together across processes; verifiers
      // started at once on a new file are answered SQLITE_BUSY there (core/sqlite-busy.ts).
      retryWhileBusy(() => {
        db.pragma('journal_mode = WAL');
        db.pragma('synchronous = NORMAL');
        db.exec(
          'CREATE TABLE IF NOT EXISTS witness_nonces (id TEXT PRIMARY KEY, expires_at INTEGER NOT NULL) WITHOUT ROWID',
        );
      }, options.busyTimeoutMs ?? 5000);
    } catch (cause) {
      throw new WitnessError(
        'IO',
        `Cannot open the nonce store ${path}: ${(cause as Error).message}. Check the path is a writable SQLite file.`,
        { cause },
      );
    }
    this.#insert = this.#db.prepare(
      'INSERT INTO witness_nonces (id, expires_at) VALUES (?, ?) ON CONFLICT (id) DO NOTHING',
    );
    this.#prune = this.#db.prepare('DELETE FROM witness_nonces WHERE expires_at < ?');
  }

  claim(id: string, expiresAt: number): boolean {
    // One INSERT decides: SQLite serialises writers, so the "check" and the "record"
    // cannot be split by another process.
    return this.#insert.run(id, expiresAt).changes === 1;
  }

  prune(now: number): number {
    return this.#prune.run(now).changes;
  }

  close(): void {
    this.#db.close();
  }
}
