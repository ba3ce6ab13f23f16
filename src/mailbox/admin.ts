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
import { inTransaction, resolveDatabaseUrl } from '../attest/postgres.js';
import { WitnessError } from '../core/errors.js';
import { assertNoMailbox, type InitOptions, loadKey, type MailboxConfig, newMailboxConfig, newMailboxKey, newToken, readAgents, readConfig, withAgent, writeJsonAtomic, writeMailboxFiles } from './config.js';
import { signerFor } from '../attest/signature.js';
import { acquireLock, breakIfStale, hasStaleLock, type Recovery } from './store/jsonl/lock.js';
import { storeKind } from './store-kinds.js';
import { AGENTS_CHANNEL, assertDatabaseFree, assertSameMailbox, claimDatabase, databaseSetting, mailboxDatabaseUrl, openMailboxPool } from './store/postgres/db.js';

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
export async function initMailbox(dir: string, options: InitOptions = {}): Promise<{ config: MailboxConfig; key: KeyMaterial }> {
  assertNoMailbox(dir);
  const store = options.store ?? 'jsonl';
  if (storeKind(store).inFolder) {
    if (options.database !== undefined) throw new WitnessError('USAGE', `A database is only for --store postgres; a ${store} mailbox keeps its data in its folder.`);
    const { id, keyPath, key } = newMailboxKey(options);
    const config = newMailboxConfig(id, keyPath, key, store);
    writeMailboxFiles(dir, config);
    return { config, key };
  }
  const database = databaseSetting(options.database ?? 'postgres');
  const url = resolveDatabaseUrl(database, '--store');
  const pool = await openMailboxPool(url, 1);
  try {
    await assertDatabaseFree(pool, url);
    const { id, keyPath, key } = newMailboxKey(options);
    const config = newMailboxConfig(id, keyPath, key, store, database);
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
    await _addAgentToDatabase(config, name, token, description);
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
async function _addAgentToDatabase(config: MailboxConfig, name: string, token: string, description?: string): Promise<void> {
  const url = mailboxDatabaseUrl(config);
  const pool = await openMailboxPool(url, 1);
  try {
    await assertSameMailbox(pool, config, url);
    await inTransaction(pool, async (client) => {
      await client.query('UPDATE mailbox_meta SET agents_version = agents_version + 1');
      const names = (await client.query<{ name: string }>('SELECT name FROM mailbox_agents ORDER BY position')).rows.map((r) => ({ name: r.name, created: '' }));
      const entry = withAgent(names, name, token, description).at(-1)!;
      await client.query('INSERT INTO mailbox_agents (name, description, created, token_sha256) VALUES ($1, $2, $3, $4)', [entry.name, entry.description ?? null, entry.created, entry.token_sha256]);
      await client.query('SELECT pg_notify($1, $2)', [AGENTS_CHANNEL, entry.name]);
    });
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
  if (!existsSync(join(dir, 'mailbox.json'))) throw new WitnessError('NOT_FOUND', `${dir} is not a mailbox (no mailbox.json).`);
  const config = readConfig(dir);
  if (!storeKind(config.store).inFolder || !hasStaleLock(dir)) return undefined;
  return breakIfStale(dir, signerFor(loadKey(config, options.keyPath)));
}
