/**
 * @module
 * Administrative changes to a mailbox that servers may be using at the same time:
 * creating it, registering agents (files: under the directory lock, written
 * atomically; PostgreSQL: in one transaction that tells every server) and
 * recovering from an interrupted writer.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { KeyMaterial } from '../attest/keys.js';
import { inTransaction, isPostgresUrl, migrate, openPool, redactUrl, resolveDatabaseUrl } from '../attest/postgres.js';
import { WitnessError } from '../core/errors.js';
import {
  assertNoMailbox,
  type InitOptions,
  loadKey,
  type MailboxConfig,
  newMailboxConfig,
  newMailboxKey,
  newToken,
  readAgents,
  readConfig,
  withAgent,
  writeJsonAtomic,
  writeMailboxFiles,
} from './config.js';
import { signerFor } from '../attest/signature.js';
import { acquireLock, breakIfStale, hasStaleLock, type Recovery } from './store/jsonl/lock.js';
import { storeKind } from './store-kinds.js';
import {
  AGENTS_CHANNEL,
  assertDatabaseFree,
  assertSameMailbox,
  claimDatabase,
  databaseSetting,
  MAILBOX_GRANTS,
  MAILBOX_MIGRATIONS,
  mailboxDatabaseUrl,
  openMailboxPool,
} from './store/postgres/db.js';

export interface AddedAgent {
  name: string;
  /** The HTTP bearer token; shown once, only its hash is stored. */
  token: string;
}

/**
 * Creates an empty mailbox in `dir` and its signing key; refuses to overwrite one. A
 * PostgreSQL mailbox (`store: 'postgres'`, `database`) is checked to be reachable and
 * free before the key is made, and recorded in its database before mailbox.json is
 * written, so a failure leaves no half mailbox behind.
 */
export async function initMailbox(
  dir: string,
  options: InitOptions = {},
): Promise<{ config: MailboxConfig; key: KeyMaterial }> {
  assertNoMailbox(dir);
  const store = options.store ?? 'jsonl';
  if (storeKind(store).inFolder) {
    if (options.database !== undefined)
      throw new WitnessError(
        'USAGE',
        `A database is only for --store postgres; a ${store} mailbox keeps its data in its folder.`,
      );
    const { id, keyPath, key, checkpointKey } = newMailboxKey(options);
    const config = newMailboxConfig(id, keyPath, key, store, undefined, checkpointKey);
    writeMailboxFiles(dir, config);
    return { config, key };
  }
  const database = databaseSetting(options.database ?? 'postgres');
  const url = resolveDatabaseUrl(database, '--store');
  const pool = await openMailboxPool(url, {
    max: 1,
    schema: 'migrate',
    grants: MAILBOX_GRANTS.init,
    command: '`witness mailbox init`',
    location: database,
  });
  try {
    await assertDatabaseFree(pool, url);
    const { id, keyPath, key, checkpointKey } = newMailboxKey(options);
    const config = newMailboxConfig(id, keyPath, key, store, database, checkpointKey);
    await claimDatabase(pool, config, url);
    writeMailboxFiles(dir, config);
    return { config, key };
  } finally {
    await pool.end();
  }
}

export async function addAgent(dir: string, name: string, description?: string): Promise<AddedAgent> {
  const config = readConfig(dir);
  const token = newToken();
  if (!storeKind(config.store).inFolder) {
    await _addAgentToDatabase(dir, config, name, token, description);
    return { name, token };
  }
  const lock = await acquireLock(dir, signerFor(loadKey(config)));
  try {
    writeJsonAtomic(join(dir, 'agents.json'), { agents: withAgent(readAgents(dir), name, token, description) });
  } finally {
    lock.release();
  }
  return { name, token };
}

/** The agent's row, the agent list's new version and a notification, in one transaction (the meta row's lock orders concurrent additions). */
async function _addAgentToDatabase(
  dir: string,
  config: MailboxConfig,
  name: string,
  token: string,
  description?: string,
): Promise<void> {
  const url = mailboxDatabaseUrl(config);
  const pool = await openMailboxPool(url, {
    max: 1,
    grants: MAILBOX_GRANTS.addAgent,
    command: '`witness mailbox add-agent`',
    location: dir,
  });
  try {
    await assertSameMailbox(pool, config, url);
    await inTransaction(pool, async (client) => {
      await client.query('UPDATE mailbox_meta SET agents_version = agents_version + 1');
      const names = (
        await client.query<{ name: string }>('SELECT name FROM mailbox_agents ORDER BY position')
      ).rows.map((r) => ({ name: r.name, created: '' }));
      const entry = withAgent(names, name, token, description).at(-1)!;
      await client.query(
        'INSERT INTO mailbox_agents (name, description, created, token_sha256) VALUES ($1, $2, $3, $4)',
        [entry.name, entry.description ?? null, entry.created, entry.token_sha256],
      );
      await client.query('SELECT pg_notify($1, $2)', [AGENTS_CHANNEL, entry.name]);
    });
  } finally {
    await pool.end();
  }
}

export interface Migrated {
  /** The store the location names; only `postgres` has a schema to migrate. */
  store: MailboxConfig['store'];
  /** The database (password redacted), for PostgreSQL. */
  database?: string;
  /** The schema version found, and the one it is now (equal: nothing was run). */
  from?: number;
  to?: number;
}

/**
 * Creates or upgrades a PostgreSQL mailbox's tables to this build's version: the one
 * step that runs DDL, so every other command can run as a role without CREATE.
 * `location` is a mailbox folder (its mailbox.json names the database) or a database
 * URL (`postgres`: $WITNESS_DATABASE_URL), e.g. before `init` by a role without CREATE.
 */
export async function migrateMailbox(location: string): Promise<Migrated> {
  const byUrl = location === 'postgres' || isPostgresUrl(location);
  if (!byUrl && !existsSync(join(location, 'mailbox.json')))
    throw new WitnessError(
      'NOT_FOUND',
      `${location} is neither a mailbox folder (no mailbox.json) nor a PostgreSQL URL; give the mailbox's folder or its database URL (postgres://USER@HOST/DB).`,
    );
  const config = byUrl ? undefined : readConfig(location);
  if (config && storeKind(config.store).inFolder) return { store: config.store };
  const url = config ? mailboxDatabaseUrl(config) : resolveDatabaseUrl(location, 'LOCATION');
  const pool = await openPool(url, { purpose: 'mailbox database', max: 1 });
  try {
    const to = MAILBOX_MIGRATIONS.at(-1)!.version;
    const from = await migrate(pool, 'mailbox', MAILBOX_MIGRATIONS, 'run it as a role that may create tables');
    return { store: 'postgres', database: redactUrl(url), from, to };
  } finally {
    await pool.end();
  }
}

/**
 * Breaks a dead writer's lock and cuts what its write left unfinished (undefined when
 * there was none; never for PostgreSQL, whose transactions roll back themselves). A
 * forged or stale intent in the lock is not obeyed: `problem` says so.
 */
export function recoverMailbox(dir: string, options: { keyPath?: string } = {}): Recovery | undefined {
  if (!existsSync(join(dir, 'mailbox.json')))
    throw new WitnessError('NOT_FOUND', `${dir} is not a mailbox (no mailbox.json).`);
  const config = readConfig(dir);
  if (!storeKind(config.store).inFolder || !hasStaleLock(dir)) return undefined;
  return breakIfStale(dir, signerFor(loadKey(config, options.keyPath)));
}
