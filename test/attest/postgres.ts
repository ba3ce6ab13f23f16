// PostgreSQL for tests: a fresh database per test file, dropped after. PostgreSQL is a
// stated dependency of the project's machines, so an unreachable server is
// a failure with the command to start it — never a silent skip.
import { randomBytes } from 'node:crypto';
import { openPool } from '../../src/attest/postgres.js';

/** Where the server is: WITNESS_TEST_DATABASE_URL, else the local socket's `postgres` database. */
export const ADMIN_URL = process.env.WITNESS_TEST_DATABASE_URL ?? 'postgres:///postgres';

const START = 'pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start';

async function _admin<T>(work: (query: (sql: string) => Promise<unknown>) => Promise<T>): Promise<T> {
  let pool: Awaited<ReturnType<typeof openPool>>;
  try {
    pool = await openPool(ADMIN_URL, {
      purpose: 'test PostgreSQL server',
      max: 1,
    });
  } catch (error) {
    throw new Error(
      `These tests need PostgreSQL at ${ADMIN_URL} (set WITNESS_TEST_DATABASE_URL to another): ${(error as Error).message} Start it with: ${START}`,
    );
  }
  try {
    return await work((sql) => pool.query(sql));
  } finally {
    await pool.end();
  }
}

/** Replaces the database part of a URL. */
export function urlFor(database: string): string {
  const url = new URL(ADMIN_URL);
  url.pathname = `/${database}`;
  return url.toString();
}

/** Creates an empty database named pg_<tag>_<random>; returns its URL and a drop function. */
export async function freshDatabase(tag: string): Promise<{ url: string; name: string; drop: () => Promise<void> }> {
  const name = `pg_${tag}_${randomBytes(4).toString('hex')}`;
  await _admin((query) => query(`CREATE DATABASE ${name}`));
  return {
    url: urlFor(name),
    name,
    drop: () => _admin((query) => query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).then(() => {}),
  };
}
