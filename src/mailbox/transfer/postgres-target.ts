/**
 * @module
 * `witness mailbox import` into a PostgreSQL database: everything in ONE transaction
 * (under the chain lock, like a commit of the store), with rows sent in batches of
 * many VALUES, so an import is all or nothing and a large one takes few round trips.
 * mailbox.json is written only after the transaction committed.
 */
import type { Pool, PoolClient } from 'pg';
import { WitnessError } from '../../core/errors.js';
import { type AgentEntry, type MailboxConfig, writeMailboxFiles } from '../config.js';
import {
  assertDatabaseFree,
  claimDatabase,
  MAILBOX_GRANTS,
  mailboxDatabaseUrl,
  openMailboxPool,
} from '../store/postgres/db.js';
import { CHAIN_LOCK } from '../store/postgres/driver.js';
import { callSeq, type ImportTarget, LogIndex, UniqueIds } from './targets.js';

const BATCH = 500;

export async function openPostgresTarget(dir: string, config: MailboxConfig): Promise<ImportTarget> {
  const url = mailboxDatabaseUrl(config);
  const pool = await openMailboxPool(url, {
    max: 1,
    schema: 'migrate',
    grants: MAILBOX_GRANTS.import,
    command: '`witness mailbox import`',
    ...(config.database ? { location: config.database } : {}),
  });
  let client: PoolClient | undefined;
  try {
    await assertDatabaseFree(pool, url);
    client = await pool.connect();
    await client.query('BEGIN');
    await client.query('SELECT pg_advisory_xact_lock($1, $2)', [...CHAIN_LOCK]);
    await claimDatabase(client, config, url);
    return new _PostgresTarget(dir, config, pool, client);
  } catch (error) {
    await client?.query('ROLLBACK').catch(() => {});
    client?.release();
    await pool.end();
    throw error;
  }
}

class _PostgresTarget implements ImportTarget {
  private readonly batches = new Map<string, { columns: string[]; rows: unknown[][] }>();
  private readonly index = new LogIndex();
  private readonly ids = new UniqueIds();
  private done = false;

  constructor(
    private readonly dir: string,
    private readonly config: MailboxConfig,
    private readonly pool: Pool,
    private readonly client: PoolClient,
  ) {}

  agent(entry: AgentEntry): Promise<void> {
    return this.add(
      'mailbox_agents',
      ['name', 'description', 'created', 'token_sha256'],
      [entry.name, entry.description ?? null, entry.created, entry.token_sha256 ?? null],
    );
  }

  async call(text: string): Promise<void> {
    const seq = callSeq(text, 'postgres');
    this.index.learn(text);
    await this.add('mailbox_calls', ['seq', 'text'], [seq, text]);
  }

  message(to: string, text: string): Promise<void> {
    return this.add('mailbox_messages', ['id', 'recipient', 'text'], [this.ids.of(text), to, text]);
  }

  async cursor(agent: string, read: number): Promise<void> {
    if (read === 0) return;
    await this.flushAll();
    const row = (
      await this.client.query<{ pos: string }>(
        'SELECT pos FROM mailbox_messages WHERE recipient = $1 ORDER BY pos LIMIT 1 OFFSET $2',
        [agent, read - 1],
      )
    ).rows[0];
    if (!row) throw new WitnessError('INTERNAL', `the cursor of ${agent} points past its imported messages`);
    await this.client.query('INSERT INTO mailbox_cursors (agent, pos, delivered, updated_at) VALUES ($1, $2, $3, $4)', [
      agent,
      row.pos,
      read,
      new Date().toISOString(),
    ]);
  }

  async finish(): Promise<void> {
    for (const [sender, key, send] of this.index.entries())
      await this.add(
        'mailbox_idempotency',
        ['sender', 'key', 'id', 'recipient', 'sent_at'],
        [sender, key, send.id, send.to, send.sent_at],
      );
    await this.flushAll();
    await this.client.query('COMMIT');
    this.done = true;
    this.client.release();
    await this.pool.end();
    writeMailboxFiles(this.dir, this.config);
  }

  /** Deletes every row the import committed (its verify failed): the database is as free as before. */
  async discard(): Promise<void> {
    const pool = await openMailboxPool(mailboxDatabaseUrl(this.config), { max: 1 });
    try {
      await pool.query(
        'TRUNCATE mailbox_meta, mailbox_agents, mailbox_messages, mailbox_calls, mailbox_cursors, mailbox_idempotency, mailbox_rate',
      );
    } finally {
      await pool.end();
    }
  }

  async abort(): Promise<void> {
    if (this.done) return; // committed: the database holds the mailbox; only mailbox.json failed, and the error says so
    this.done = true;
    await this.client.query('ROLLBACK').catch(() => {});
    this.client.release();
    await this.pool.end();
  }

  private async add(table: string, columns: string[], row: unknown[]): Promise<void> {
    const batch = this.batches.get(table) ?? { columns, rows: [] };
    this.batches.set(table, batch);
    batch.rows.push(row);
    if (batch.rows.length >= BATCH) await this.flush(table);
  }

  private async flushAll(): Promise<void> {
    // Agents first (they number themselves in order), then the rest.
    for (const table of this.batches.keys()) await this.flush(table);
  }

  private async flush(table: string): Promise<void> {
    const batch = this.batches.get(table);
    if (!batch || batch.rows.length === 0) return;
    const rows = batch.rows;
    batch.rows = [];
    if (table !== 'mailbox_messages') return void (await this.insert(table, batch.columns, rows));
    // A message id already taken (a forged copy, which verify reports) must not drop the
    // record: that batch goes again row by row, and such a row gets a made-up key.
    await this.client.query('SAVEPOINT batch');
    if ((await this.insert(table, batch.columns, rows, ' ON CONFLICT (id) DO NOTHING')) === rows.length)
      return void (await this.client.query('RELEASE SAVEPOINT batch'));
    await this.client.query('ROLLBACK TO SAVEPOINT batch');
    for (const row of rows) {
      if ((await this.insert(table, batch.columns, [row], ' ON CONFLICT (id) DO NOTHING')) === 0)
        await this.insert(table, batch.columns, [[this.ids.fresh(), ...row.slice(1)]]);
    }
  }

  /** One INSERT of many rows; returns how many went in. */
  private async insert(table: string, columns: string[], rows: unknown[][], tail = ''): Promise<number> {
    const width = columns.length;
    const values = rows.map((_, r) => `(${columns.map((_, c) => `$${r * width + c + 1}`).join(', ')})`).join(', ');
    return (
      (await this.client.query(`INSERT INTO ${table} (${columns.join(', ')}) VALUES ${values}${tail}`, rows.flat()))
        .rowCount ?? 0
    );
  }
}
