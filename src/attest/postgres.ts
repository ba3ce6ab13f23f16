/**
 * @module
 * The one way Witness reaches PostgreSQL (the nonce store here, the mailbox store
 * above it): URL checks, a pool with a connect timeout, one-line errors, and schema
 * migrations recorded in a version table. `pg` is loaded on first use so a user who
 * never names a database pays nothing for it.
 */
import { existsSync } from 'node:fs';
import { userInfo } from 'node:os';
import type { Client, Pool, PoolClient, PoolConfig } from 'pg';
import { WitnessError } from '../core/errors.js';

/** True for `postgres://…` and `postgresql://…` (the forms libpq and `pg` accept). */
export function isPostgresUrl(text: string): boolean {
  return /^postgres(ql)?:\/\//i.test(text);
}

/** `postgres://user:secret@host/db` → `postgres://user:***@host/db`, for messages and reports. */
export function redactUrl(url: string): string {
  return url.replace(/^(postgres(?:ql)?:\/\/[^:/@]*):[^@/]*@/i, '$1:***@');
}

export interface OpenPoolOptions {
  /** Largest number of connections this process holds (default 4). */
  max?: number;
  /** What the database is for, in error messages ("nonce store", "mailbox"). */
  purpose: string;
  /**
   * A statement every new connection runs first (e.g. `SET synchronous_commit = on`);
   * a hook, not libpq's `options`, which a URL's own `?options=` would replace.
   */
  sessionSql?: string;
}

/** Opens a pool and checks it reaches the server now, so a wrong URL fails at once and clearly. */
export async function openPool(url: string, options: OpenPoolOptions): Promise<Pool> {
  const pg = await _pg(url, options.purpose);
  const config: PoolConfig = {
    connectionString: url,
    max: options.max ?? 4,
    connectionTimeoutMillis: 5000,
    idleTimeoutMillis: 10_000,
    // pg-pool waits for this before it hands the connection out, and fails the connect if it fails.
    ...(options.sessionSql !== undefined ? { onConnect: _runFirst(options.sessionSql) } : {}),
  };
  const pool = new pg.Pool(config);
  // An idle connection dropped by the server must not crash the process; the next query reconnects.
  pool.on('error', () => {});
  try {
    const client = await pool.connect();
    client.release();
  } catch (cause) {
    await pool.end().catch(() => {});
    throw _unreachable(url, options.purpose, cause);
  }
  return pool;
}

/**
 * One connection outside any pool, for a session that must stay open (LISTEN): same
 * URL rules and defaults as `openPool`. Its errors go to `onError`, never unhandled.
 */
export async function openClient(url: string, purpose: string, onError: (error: Error) => void): Promise<Client> {
  const pg = await _pg(url, purpose);
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000, keepAlive: true });
  client.on('error', onError);
  try {
    await client.connect();
  } catch (cause) {
    await client.end().catch(() => {});
    throw _unreachable(url, purpose, cause);
  }
  return client;
}

function _runFirst(sql: string): (client: { query(sql: string): Promise<unknown> }) => Promise<void> {
  return async (client) => {
    await client.query(sql);
  };
}

/** The pg module, loaded on first use with libpq's defaults, once `url` is checked to be a PostgreSQL URL. */
async function _pg(url: string, purpose: string): Promise<typeof import('pg').default> {
  if (!isPostgresUrl(url))
    throw new WitnessError(
      'USAGE',
      `The ${purpose} URL ${redactUrl(url)} is not a PostgreSQL URL; write postgres://USER@HOST:PORT/DB (or postgres:///DB for the local socket).`,
    );
  const { default: pg } = await import('pg');
  _libpqDefaults(pg.defaults);
  return pg;
}

function _unreachable(url: string, purpose: string, cause: unknown): WitnessError {
  // A host name that does not resolve is the caller's to fix (exit 2, docs/errors.md); a server that is down is not.
  const code = (cause as { code?: unknown } | undefined)?.code === 'ENOTFOUND' ? 'INVALID_INPUT' : 'IO';
  return new WitnessError(
    code,
    `Cannot reach the ${purpose} at ${redactUrl(url)}: ${(cause as Error).message}. Check the server runs and the URL names an existing database.`,
    { cause },
  );
}

/**
 * What a URL leaves out means what it means to libpq (psql): the OS user, and the local
 * socket — so `postgres:///db` works as in psql. pg's own defaults are $USER (unset
 * under many service managers) and TCP localhost. Set once, only where pg has none.
 */
function _libpqDefaults(defaults: { user?: string | undefined; host?: string | undefined }): void {
  defaults.user ||= process.env.PGUSER || userInfo().username;
  if (!process.env.PGHOST && defaults.host === 'localhost' && existsSync('/var/run/postgresql'))
    defaults.host = '/var/run/postgresql';
}

/** Runs `work` in one transaction on one connection: COMMIT when it returns, ROLLBACK when it throws. */
export async function inTransaction<T>(pool: Pool, work: (client: PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {});
    throw error;
  } finally {
    client.release();
  }
}

/** A schema step: applied once, in order; `version` counts from 1. */
export interface Migration {
  version: number;
  sql: string;
}

// One fixed key for every migration: schema changes of all components are serialised,
// so two processes starting together never both run CREATE TABLE (PostgreSQL's
// IF NOT EXISTS is not safe under concurrency: both may pass the check).
const _MIGRATION_LOCK = 0x5749_544e; // "WITN"

/**
 * Brings `component`'s tables to the newest version in `migrations`; returns the
 * version found before. A database at a newer version than this build knows is
 * refused: an old binary must not write rows a newer schema expects otherwise. A
 * database already at the newest version is only read (no DDL, no lock), so a role
 * without CREATE may run this where the schema was made by another. `remedy` ends
 * the one line a role without the rights to create the tables gets.
 */
export async function migrate(
  pool: Pool,
  component: string,
  migrations: readonly Migration[],
  remedy = 'run this as a role that may create tables',
): Promise<number> {
  const newest = migrations.at(-1)?.version ?? 0;
  const before = await schemaVersion(pool, component);
  if (before > newest) throw _tooNew(component, before, newest);
  if (before === newest) return before;
  return inTransaction(pool, async (client) => {
    await client.query('SELECT pg_advisory_xact_lock($1)', [_MIGRATION_LOCK]);
    await client.query(
      'CREATE TABLE IF NOT EXISTS witness_schema (component text PRIMARY KEY, version integer NOT NULL)',
    );
    const found = await client.query<{ version: number }>('SELECT version FROM witness_schema WHERE component = $1', [
      component,
    ]);
    const current = found.rows[0]?.version ?? 0;
    if (current > newest) throw _tooNew(component, current, newest);
    for (const step of migrations) {
      if (step.version > current) await client.query(step.sql);
    }
    await client.query(
      'INSERT INTO witness_schema (component, version) VALUES ($1, $2) ON CONFLICT (component) DO UPDATE SET version = EXCLUDED.version',
      [component, newest],
    );
    return current;
  }).catch(async (error: unknown) => {
    if ((error as { code?: unknown }).code !== INSUFFICIENT_PRIVILEGE) throw error;
    const role = await currentRole(pool).catch(() => 'this role');
    const message = (error as Error).message;
    // Upgrading a table takes its owner; creating one, CREATE on the schema.
    const fix = /must be owner/.test(message)
      ? 'as the role that owns the tables'
      : `or grant it: GRANT CREATE ON SCHEMA ${_schemaOf(error)} TO ${quoteIdent(role)}`;
    throw new WitnessError(
      'USAGE',
      `The role ${JSON.stringify(role)} may not create or upgrade the ${component} tables (${message}); ${remedy}, ${fix}.`,
      { cause: error },
    );
  });
}

/**
 * The version of `component`'s tables, 0 when there are none: read with SELECT alone
 * (no DDL, no lock), what a command that must not change the schema checks.
 */
export async function schemaVersion(db: Pool | PoolClient, component: string): Promise<number> {
  const table = (
    await db.query<{ present: boolean; readable: boolean | null; role: string }>(
      "SELECT to_regclass('witness_schema') IS NOT NULL AS present, has_table_privilege(to_regclass('witness_schema'), 'SELECT') AS readable, current_user AS role",
    )
  ).rows[0]!;
  if (!table.present) return 0;
  if (!table.readable)
    throw new WitnessError(
      'USAGE',
      `The role ${JSON.stringify(table.role)} may not SELECT from witness_schema, which says which schema version the database holds; grant it: GRANT SELECT ON witness_schema TO ${quoteIdent(table.role)}.`,
    );
  const found = await db.query<{ version: number }>('SELECT version FROM witness_schema WHERE component = $1', [
    component,
  ]);
  return found.rows[0]?.version ?? 0;
}

/**
 * Refuses a database whose `component` schema is not the newest this build knows,
 * without changing it: missing or older says to migrate (`remedy`, exit 2), newer to
 * upgrade Witness.
 */
export async function requireSchema(
  db: Pool | PoolClient,
  component: string,
  migrations: readonly Migration[],
  remedy: string,
): Promise<void> {
  const newest = migrations.at(-1)?.version ?? 0;
  const found = await schemaVersion(db, component);
  if (found > newest) throw _tooNew(component, found, newest);
  if (found < newest)
    throw new WitnessError(
      'USAGE',
      `The database's ${component} schema is ${found === 0 ? 'not there' : `at version ${found}, older than this Witness's ${newest}`}; ${remedy}.`,
    );
}

function _tooNew(component: string, found: number, newest: number): WitnessError {
  return new WitnessError(
    'INVALID_INPUT',
    `The database's ${component} schema is version ${found}, newer than this Witness knows (${newest}); upgrade Witness.`,
  );
}

/** SQLSTATE insufficient_privilege: the role lacks a right on the object the statement uses. */
export const INSUFFICIENT_PRIVILEGE = '42501';

/** A right a command needs: PRIVILEGE on a table, a sequence or a schema. */
export interface Grant {
  kind: 'table' | 'sequence' | 'schema';
  object: string;
  privilege: 'SELECT' | 'INSERT' | 'UPDATE' | 'DELETE' | 'TRUNCATE' | 'USAGE' | 'CREATE';
}

/**
 * Refuses, in one line, a role that lacks any of `grants` (what `command` does with
 * the database): each missing right by name, with the GRANT that gives it. One query
 * of the catalog, before any work, so a role short of a right never fails halfway.
 */
export async function requireGrants(db: Pool | PoolClient, grants: readonly Grant[], command: string): Promise<void> {
  if (grants.length === 0) return;
  const missing = await db.query<{ role: string; kind: Grant['kind']; object: string; privilege: Grant['privilege'] }>(
    `SELECT current_user AS role, g.kind, g.object, g.privilege FROM unnest($1::text[], $2::text[], $3::text[]) AS g(kind, object, privilege)
     WHERE NOT CASE g.kind WHEN 'table' THEN has_table_privilege(g.object, g.privilege) WHEN 'sequence' THEN has_sequence_privilege(g.object, g.privilege) ELSE has_schema_privilege(g.object, g.privilege) END`,
    [grants.map((g) => g.kind), grants.map((g) => g.object), grants.map((g) => g.privilege)],
  );
  if (missing.rows.length === 0) return;
  const role = missing.rows[0]!.role;
  const rights = missing.rows.map((g) => _right(g));
  // One GRANT per object, its privileges together, in the order they were asked for.
  const byObject = new Map<string, Grant['privilege'][]>();
  for (const g of missing.rows) {
    const on = `${g.kind === 'table' ? '' : `${g.kind.toUpperCase()} `}${g.object}`;
    byObject.set(on, [...(byObject.get(on) ?? []), g.privilege]);
  }
  const statements = [...byObject].map(
    ([on, privileges]) => `GRANT ${privileges.join(', ')} ON ${on} TO ${quoteIdent(role)}`,
  );
  throw new WitnessError(
    'USAGE',
    `The role ${JSON.stringify(role)} may not ${rights.join(', ')}, which ${command} needs; grant it: ${statements.join('; ')}.`,
  );
}

function _right(g: Grant): string {
  if (g.privilege === 'CREATE') return `CREATE in schema ${g.object}`;
  if (g.privilege === 'USAGE') return `use the ${g.kind} ${g.object}`;
  // Template literals: this folder's import check reads a quote after "from" as a module.
  const preposition: Partial<Record<Grant['privilege'], string>> = {
    SELECT: `from `,
    DELETE: `from `,
    INSERT: `into `,
  };
  return `${g.privilege} ${preposition[g.privilege] ?? ''}${g.object}`;
}

/**
 * A one-line reading of a PostgreSQL "permission denied" error (SQLSTATE 42501) that
 * no check before the work caught (a right revoked while a server runs): which object
 * it was, and what to do. Undefined for any other error.
 */
export function privilegeDenied(error: unknown): string | undefined {
  const { code, severity, message } = (error ?? {}) as { code?: unknown; severity?: unknown; message?: unknown };
  if (code !== INSUFFICIENT_PRIVILEGE || typeof severity !== 'string' || typeof message !== 'string') return undefined;
  return `the database role was refused a right (${message}); grant it the rights docs/mailbox.md lists for this command, or run it as a role that has them`;
}

/** The role this connection acts as. */
export async function currentRole(db: Pool | PoolClient): Promise<string> {
  return (await db.query<{ role: string }>('SELECT current_user AS role')).rows[0]!.role;
}

/** An SQL identifier as it must be written: bare when plain lower case, else double-quoted. */
export function quoteIdent(name: string): string {
  return /^[a-z_][a-z0-9_$]*$/.test(name) ? name : `"${name.replaceAll('"', '""')}"`;
}

function _schemaOf(error: unknown): string {
  const match = /permission denied for schema (\S+)/.exec((error as Error).message);
  return match?.[1] ?? 'public';
}

/** The environment variable a bare `postgres` (instead of a URL) stands for. */
export const DATABASE_URL_ENV = 'WITNESS_DATABASE_URL';

/**
 * `postgres` alone means "the database in WITNESS_DATABASE_URL" (so a URL with a
 * password need not appear in a command line or shell history); anything else is
 * returned as given. `option` names the flag in the error.
 */
export function resolveDatabaseUrl(value: string, option: string, env: NodeJS.ProcessEnv = process.env): string {
  if (value !== 'postgres') return value;
  const url = env[DATABASE_URL_ENV];
  if (!url)
    throw new WitnessError(
      'USAGE',
      `${option} postgres reads the database URL from ${DATABASE_URL_ENV}, which is not set; set it (e.g. postgres:///witness) or give the URL itself.`,
    );
  return url;
}
