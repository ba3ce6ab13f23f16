/**
 * @module
 * A witness's state in PostgreSQL, for several witness hosts behind one name (or one
 * host that keeps its state off the machine). Each update takes a transaction-scoped
 * advisory lock on the origin before reading the stored checkpoint, so the check of the
 * old size and the write of the new checkpoint are one step for every host — the
 * spec's rollback race cannot happen between them. Commits wait for the WAL flush
 * (`synchronous_commit` as the server has it, on by default) before the answer.
 */
import type { Pool } from 'pg';
import { inTransaction, type Migration, migrate, openPool } from '../postgres.js';
import type { StoredCheckpoint, WitnessDecision, WitnessState } from './witness-store.js';

export const WITNESS_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    sql: `CREATE TABLE witness_checkpoints (origin text PRIMARY KEY, size bigint NOT NULL, root bytea NOT NULL, note text NOT NULL, updated_at bigint NOT NULL);
          CREATE TABLE witness_refused (id bigserial PRIMARY KEY, origin text NOT NULL, reason text NOT NULL, request text NOT NULL, at bigint NOT NULL)`,
  },
];

// The first key of the two-key advisory lock: "WITW", apart from the migration lock.
const _LOCK = 0x5749_5457;

export class PostgresWitnessState implements WitnessState {
  readonly #pool: Pool;
  private constructor(pool: Pool) {
    this.#pool = pool;
  }

  static async open(url: string): Promise<PostgresWitnessState> {
    const pool = await openPool(url, { purpose: 'witness state', max: 4 });
    try {
      await migrate(pool, 'witness', WITNESS_MIGRATIONS);
    } catch (error) {
      await pool.end();
      throw error;
    }
    return new PostgresWitnessState(pool);
  }

  async latest(origin: string): Promise<StoredCheckpoint | undefined> {
    const { rows } = await this.#pool.query<{ origin: string; size: string; root: Buffer; note: string }>(
      'SELECT origin, size, root, note FROM witness_checkpoints WHERE origin = $1',
      [origin],
    );
    const row = rows[0];
    return row && { origin: row.origin, size: Number(row.size), root: row.root, note: row.note };
  }

  update<R>(origin: string, decide: (current: StoredCheckpoint | undefined) => WitnessDecision<R>): Promise<R> {
    return inTransaction(this.#pool, async (client) => {
      await client.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [_LOCK, origin]);
      const { rows } = await client.query<{ origin: string; size: string; root: Buffer; note: string }>(
        'SELECT origin, size, root, note FROM witness_checkpoints WHERE origin = $1',
        [origin],
      );
      const row = rows[0];
      const { store, refused, result } = decide(
        row && { origin: row.origin, size: Number(row.size), root: row.root, note: row.note },
      );
      if (store) {
        await client.query(
          'INSERT INTO witness_checkpoints (origin, size, root, note, updated_at) VALUES ($1, $2, $3, $4, $5) ON CONFLICT (origin) DO UPDATE SET size = EXCLUDED.size, root = EXCLUDED.root, note = EXCLUDED.note, updated_at = EXCLUDED.updated_at',
          [store.origin, store.size, store.root, store.note, Date.now()],
        );
      }
      if (refused)
        await client.query('INSERT INTO witness_refused (origin, reason, request, at) VALUES ($1, $2, $3, $4)', [
          origin,
          refused.reason,
          refused.request,
          Date.now(),
        ]);
      return result;
    });
  }

  close(): Promise<void> {
    return this.#pool.end();
  }
}
