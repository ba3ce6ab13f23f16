/**
 * Direct SQL on a database mailbox's tables, as an agent or attacker with access to
 * the database (not to the key) could write them: SQLite's file or the PostgreSQL
 * database its mailbox.json names. Statements are written once, in SQLite's
 * spelling (`?` parameters, bare table names); for PostgreSQL the tables get their
 * `mailbox_` prefix and the parameters their numbers.
 */
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { openPool } from '../../src/attest/postgres.js';
import { readConfig } from '../../src/mailbox/config.js';
import { mailboxDatabaseUrl } from '../../src/mailbox/store/postgres/db.js';

export type Sql = (text: string, params?: unknown[]) => Promise<Array<Record<string, unknown>>>;

const TABLES = ['messages', 'calls', 'cursors', 'idempotency', 'agents'];

export async function withTables<T>(
  kind: 'sqlite' | 'postgres',
  dir: string,
  work: (sql: Sql) => Promise<T>,
): Promise<T> {
  if (kind === 'sqlite') {
    const db = new Database(join(dir, 'mailbox.sqlite'));
    try {
      return await work(async (text, params = []) => {
        const statement = db.prepare(text);
        if (statement.reader) return statement.all(...params) as Array<Record<string, unknown>>;
        statement.run(...params);
        return [];
      });
    } finally {
      db.close();
    }
  }
  const pool = await openPool(mailboxDatabaseUrl(readConfig(dir)), { purpose: 'test', max: 1 });
  try {
    return await work(async (text, params = []) => (await pool.query(toPostgres(text), params)).rows);
  } finally {
    await pool.end();
  }
}

/** SQLite's spelling to PostgreSQL's: prefixed table names, numbered parameters. */
export function toPostgres(text: string): string {
  let n = 0;
  const tables = new RegExp(`\\b(FROM|INTO|UPDATE|JOIN|TABLE)\\s+(${TABLES.join('|')})\\b`, 'g');
  return text.replace(tables, '$1 mailbox_$2').replace(/\?/g, () => `$${++n}`);
}
