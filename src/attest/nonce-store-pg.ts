/**
 * @module
 * A nonce store in PostgreSQL, for verifiers on several machines: the SQLite
 * file only serialises processes of one host. A claim is one `INSERT … ON CONFLICT DO
 * NOTHING` against a primary key — never a read then a write — so of any number of
 * verifiers racing on one nonce, the database lets exactly one row in.
 */
import type { Pool } from 'pg';
import type { NonceStore } from './nonce-store.js';
import { type Migration, migrate, openPool } from './postgres.js';

/** The nonce store's schema, oldest first; the version table records how far a database is. */
export const NONCE_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    sql: 'CREATE TABLE witness_nonces (id text PRIMARY KEY, expires_at bigint NOT NULL); CREATE INDEX witness_nonces_expiry ON witness_nonces (expires_at)',
  },
];

export class PostgresNonceStore implements NonceStore {
  readonly #pool: Pool;

  private constructor(pool: Pool) {
    this.#pool = pool;
  }

  /** Connects, creates or migrates the table, and returns the store. */
  static async open(url: string): Promise<PostgresNonceStore> {
    const pool = await openPool(url, { purpose: 'nonce store', max: 8 });
    try {
      await migrate(pool, 'nonces', NONCE_MIGRATIONS);
    } catch (error) {
      await pool.end();
      throw error;
    }
    return new PostgresNonceStore(pool);
  }

  async claim(id: string, expiresAt: number): Promise<boolean> {
    const result = await this.#pool.query(
      'INSERT INTO witness_nonces (id, expires_at) VALUES ($1, $2) ON CONFLICT (id) DO NOTHING',
      [id, expiresAt],
    );
    return result.rowCount === 1;
  }

  async prune(now: number): Promise<number> {
    return (await this.#pool.query('DELETE FROM witness_nonces WHERE expires_at < $1', [now])).rowCount ?? 0;
  }

  async close(): Promise<void> {
    await this.#pool.end();
  }
}
