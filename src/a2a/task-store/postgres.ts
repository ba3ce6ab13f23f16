/**
 * @module
 * The task store's PostgreSQL driver, for agent processes on several machines sharing
 * one database. Each process holds a session-level advisory lock (namespace
 * `WA2A`, a random key) on a connection of its own for as long as it runs, and marks
 * the tasks it runs with that key. When a process dies, the server drops its
 * connection and with it the lock; so a task whose runner's lock is held by nobody —
 * `pg_locks`, which every role may read — is known to be orphaned, from any machine.
 * A process that loses its database connection while it runs loses its running tasks
 * the same way (they are reported INTERRUPTED).
 */
import { randomInt, randomUUID } from 'node:crypto';
import type { Client, Pool } from 'pg';
import { type Migration, migrate, openClient, openPool } from '../../attest/postgres.js';
import { WitnessError } from '../../core/errors.js';
import { TASK_TABLE_SQL, type TaskStoreDriver } from './engine.js';

export const TASK_STORE_MIGRATIONS: readonly Migration[] = [{ version: 1, sql: TASK_TABLE_SQL }];

/** The first key of every runner lock, "WA2A": apart from the other advisory locks Witness takes. */
const LOCK_NAMESPACE = 0x5741_3241;

export async function openPostgresTaskStore(url: string): Promise<TaskStoreDriver> {
  const pool = await openPool(url, { purpose: 'A2A task store', max: 4 });
  let client: Client | undefined;
  try {
    await migrate(pool, 'a2a-tasks', TASK_STORE_MIGRATIONS);
    client = await openClient(url, 'A2A task store', () => {});
    const key = await _lockRunnerKey(client);
    const runner = `pg:${key}:${randomUUID()}`;
    return _driver(pool, client, runner, key);
  } catch (error) {
    await client?.end().catch(() => {});
    await pool.end().catch(() => {});
    throw error;
  }
}

/** A key no live process holds, locked by this process's own connection until it ends. */
async function _lockRunnerKey(client: Client): Promise<number> {
  for (let attempt = 0; attempt < 16; attempt++) {
    const key = randomInt(1, 2 ** 31);
    const { rows } = await client.query<{ ok: boolean }>('SELECT pg_try_advisory_lock($1, $2) AS ok', [
      LOCK_NAMESPACE,
      key,
    ]);
    if (rows[0]?.ok) return key;
  }
  throw new WitnessError('INTERNAL', 'No free advisory lock key for this agent process after 16 tries.');
}

function _driver(pool: Pool, client: Client, runner: string, key: number): TaskStoreDriver {
  return {
    runner,
    async run(sql, params) {
      return (await pool.query(_numbered(sql), [...params])).rowCount ?? 0;
    },
    async all<T>(sql: string, params: readonly unknown[]) {
      return (await pool.query(_numbered(sql), [...params])).rows as T[];
    },
    async gone(runners) {
      const { rows } = await pool.query<{ key: string }>(
        `SELECT objid::bigint AS key FROM pg_locks WHERE locktype = 'advisory' AND classid = $1::bigint::oid
           AND objsubid = 2 AND granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
        [LOCK_NAMESPACE],
      );
      const held = new Set(rows.map((r) => Number(r.key)));
      return new Set(
        runners.filter((other) => {
          const m = /^pg:(\d+):/.exec(other);
          if (!m) return false; // not a runner this driver wrote: never judged
          const otherKey = Number(m[1]);
          // A key of ours on another runner is an earlier process that held it and died.
          return !held.has(otherKey) || (otherKey === key && other !== runner);
        }),
      );
    },
    async close() {
      await pool.end();
      await client.end();
    },
  };
}

/** `?` placeholders as PostgreSQL numbers them (`$1`, `$2`, …); the engine's SQL has no `?` in literals. */
function _numbered(sql: string): string {
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
}
