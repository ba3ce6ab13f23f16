// The one PostgreSQL module: URLs, redaction, and schema migrations through the version
// table (the nonce store uses them now; the mailbox store will). Real server, a fresh
// database per case.
import { afterEach, describe, expect, it } from 'vitest';
import { isPostgresUrl, migrate, openPool, redactUrl, resolveDatabaseUrl } from '../../src/attest/postgres.js';
import { freshDatabase } from './postgres.js';

const V1 = { version: 1, sql: 'CREATE TABLE t (id text PRIMARY KEY)' };
const V2 = { version: 2, sql: 'ALTER TABLE t ADD COLUMN note text' };

const cleanup: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});
let lastUrl = '';
async function pool() {
  const db = await freshDatabase('migrate');
  const p = await openPool(db.url, { purpose: 'test database' });
  cleanup.push(db.drop, () => p.end());
  lastUrl = db.url;
  return p;
}
const columns = async (p: Awaited<ReturnType<typeof pool>>) =>
  (
    await p.query<{ column_name: string }>(
      "SELECT column_name FROM information_schema.columns WHERE table_name = 't' ORDER BY ordinal_position",
    )
  ).rows.map((r) => r.column_name);
const version = async (p: Awaited<ReturnType<typeof pool>>) =>
  (await p.query<{ version: number }>("SELECT version FROM witness_schema WHERE component = 'demo'")).rows[0]?.version;

describe('migrate', () => {
  it('creates the newest schema in an empty database and records its version', async () => {
    const p = await pool();
    expect(await migrate(p, 'demo', [V1, V2])).toBe(0);
    expect(await columns(p)).toEqual(['id', 'note']);
    expect(await version(p)).toBe(2);
  });
  it('brings a database at the previous version to the newest, keeping its rows', async () => {
    const p = await pool();
    await migrate(p, 'demo', [V1]);
    await p.query("INSERT INTO t (id) VALUES ('kept')");
    expect(await migrate(p, 'demo', [V1, V2])).toBe(1);
    expect(await columns(p)).toEqual(['id', 'note']);
    expect((await p.query('SELECT id FROM t')).rows).toEqual([{ id: 'kept' }]);
    expect(await version(p)).toBe(2);
  });
  it('runs once when several servers start together on separate connections (no CREATE TABLE twice)', async () => {
    const p = await pool();
    const db2 = await openPool(lastUrl, { purpose: 'test database' });
    cleanup.push(() => db2.end());
    const found = await Promise.all([
      migrate(p, 'demo', [V1, V2]),
      migrate(db2, 'demo', [V1, V2]),
      migrate(p, 'demo', [V1, V2]),
    ]);
    expect(found.sort()).toEqual([0, 2, 2]);
  });
  it('refuses a database migrated by a newer Witness, and changes nothing', async () => {
    const p = await pool();
    await migrate(p, 'demo', [V1, V2]);
    await expect(migrate(p, 'demo', [V1])).rejects.toThrow(
      "The database's demo schema is version 2, newer than this Witness knows (1); upgrade Witness.",
    );
    expect(await version(p)).toBe(2);
  });
  it('leaves nothing behind when a step fails (one transaction)', async () => {
    const p = await pool();
    await expect(
      migrate(p, 'demo', [V1, { version: 2, sql: 'ALTER TABLE missing ADD COLUMN x text' }]),
    ).rejects.toThrow(/missing/);
    expect(await columns(p)).toEqual([]);
  });
});

describe('database URLs', () => {
  it('recognises postgres:// and postgresql:// only', () => {
    expect(['postgres://h/db', 'postgresql:///db', 'POSTGRES://x'].map(isPostgresUrl)).toEqual([true, true, true]);
    expect(['nonces.db', 'pg://h/db', './postgres://x'].map(isPostgresUrl)).toEqual([false, false, false]);
  });
  it('hides a password in messages', () => {
    expect(redactUrl('postgres://alice:s3cret@db:5432/w')).toBe('postgres://alice:***@db:5432/w');
    expect(redactUrl('postgres://alice@db/w')).toBe('postgres://alice@db/w');
  });
  it('takes the bare word postgres to mean WITNESS_DATABASE_URL, and says so when it is unset', () => {
    expect(resolveDatabaseUrl('postgres', '--x', { WITNESS_DATABASE_URL: 'postgres:///w' })).toBe('postgres:///w');
    expect(resolveDatabaseUrl('nonces.db', '--x', {})).toBe('nonces.db');
    expect(() => resolveDatabaseUrl('postgres', '--x', {})).toThrow(
      '--x postgres reads the database URL from WITNESS_DATABASE_URL, which is not set',
    );
  });
  it('refuses a URL that is not PostgreSQL, naming the form to use', async () => {
    await expect(openPool('mysql://h/db', { purpose: 'nonce store' })).rejects.toThrow(
      'The nonce store URL mysql://h/db is not a PostgreSQL URL; write postgres://USER@HOST:PORT/DB (or postgres:///DB for the local socket).',
    );
  });
  it('never prints the password of a URL it cannot reach', async () => {
    const error = await openPool('postgres://u:topsecret@127.0.0.1:1/none', { purpose: 'nonce store' }).catch(
      (e: Error) => e,
    );
    expect((error as Error).message).toMatch(
      /^Cannot reach the nonce store at postgres:\/\/u:\*\*\*@127\.0\.0\.1:1\/none: /,
    );
    expect((error as Error).message).not.toContain('topsecret');
  });
});
