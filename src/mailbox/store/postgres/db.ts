/**
 * @module
 * A mailbox's PostgreSQL database: its schema and migrations, the URL a
 * mailbox.json names, and the rows that say which mailbox a database holds. One
 * database (or one schema, through the URL's `options=-csearch_path=…`) holds one
 * mailbox; every server process of that mailbox, on any host, connects to it.
 * The connection itself is attest's (`openPool`): one way to reach PostgreSQL.
 */
import type { Pool, PoolClient } from 'pg';
import {
  DATABASE_URL_ENV,
  type Grant,
  type Migration,
  migrate,
  openPool,
  privilegeDenied,
  redactUrl,
  requireGrants,
  requireSchema,
  resolveDatabaseUrl,
} from '../../../attest/postgres.js';
import { WitnessError } from '../../../core/errors.js';
import type { AgentEntry, MailboxConfig } from '../../config.js';

/**
 * The mailbox's tables, oldest step first. Messages and call-log lines keep the exact
 * text an inbox or calls.jsonl line would have, so receipts and the hash chain are
 * checked as for the file stores. `pos` and `seq` are assigned under the chain lock
 * (postgres.ts), so their order is the order of commits across every server.
 */
export const MAILBOX_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    sql: `
CREATE TABLE mailbox_meta (singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton), id text NOT NULL, kid text NOT NULL, created text NOT NULL, agents_version bigint NOT NULL DEFAULT 0);
CREATE TABLE mailbox_agents (position bigserial PRIMARY KEY, name text NOT NULL UNIQUE, description text, created text NOT NULL, token_sha256 text);
CREATE UNIQUE INDEX mailbox_agents_folded ON mailbox_agents (lower(name));
CREATE TABLE mailbox_messages (pos bigserial PRIMARY KEY, id text NOT NULL UNIQUE, recipient text NOT NULL, text text NOT NULL);
CREATE INDEX mailbox_messages_recipient ON mailbox_messages (recipient, pos);
CREATE TABLE mailbox_calls (seq bigint PRIMARY KEY, text text NOT NULL);
CREATE TABLE mailbox_cursors (agent text PRIMARY KEY, pos bigint NOT NULL, delivered bigint NOT NULL, updated_at text NOT NULL);
CREATE TABLE mailbox_idempotency (sender text NOT NULL, key text NOT NULL, id text NOT NULL, recipient text NOT NULL, sent_at text NOT NULL, PRIMARY KEY (sender, key));
CREATE TABLE mailbox_rate (agent text PRIMARY KEY, tokens double precision NOT NULL, at_ms double precision NOT NULL, taken boolean NOT NULL);
`,
  },
  {
    // Delivery states: which call-log lines name which message, so a
    // message's receipts are found by an index, not a scan of the log. Lines already
    // there are indexed too; one that is not JSON names nothing.
    version: 2,
    sql: `
CREATE TABLE mailbox_mentions (message_id text NOT NULL, seq bigint NOT NULL, tool text NOT NULL, agent text NOT NULL, PRIMARY KEY (message_id, seq));
DO $$
DECLARE r record;
BEGIN
  FOR r IN SELECT seq, text FROM mailbox_calls LOOP
    BEGIN
      INSERT INTO mailbox_mentions (message_id, seq, tool, agent)
        SELECT DISTINCT m, r.seq, r.text::jsonb ->> 'tool', r.text::jsonb ->> 'agent'
        FROM jsonb_array_elements_text(r.text::jsonb -> 'message_ids') AS m
        WHERE r.text::jsonb ->> 'tool' IS NOT NULL AND r.text::jsonb ->> 'agent' IS NOT NULL;
    EXCEPTION WHEN others THEN NULL;
    END;
  END LOOP;
END $$;
`,
  },
  {
    // The call log's own index of which lines name which message: an expression index
    // PostgreSQL keeps from each line's text, so no row of it can be edited, deleted
    // or added apart from the line (mailbox_mentions could: deleting an ack's row made
    // message_status say 'read' and let the message be acknowledged afresh). A line
    // that is not JSON names nothing. Declared IMMUTABLE: it reads only its argument.
    version: 3,
    sql: `
CREATE FUNCTION mailbox_call_ids(line text) RETURNS text[] LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $f$
BEGIN
  RETURN ARRAY(SELECT DISTINCT jsonb_array_elements_text(line::jsonb -> 'message_ids'));
EXCEPTION WHEN others THEN
  RETURN '{}'::text[];
END $f$;
CREATE INDEX mailbox_calls_ids ON mailbox_calls USING gin (mailbox_call_ids(text));
DROP TABLE mailbox_mentions;
`,
  },
];

/** The call-log lines that name message $1 (through the log's own index, migration 3), oldest first. */
export const LINES_NAMING =
  'SELECT seq, text FROM mailbox_calls WHERE mailbox_call_ids(text) @> ARRAY[$1::text] ORDER BY seq';

/** The notification channels: a recipient's name on mail, anything on an agent change. */
export const MAIL_CHANNEL = 'witness_mailbox_mail';
export const AGENTS_CHANNEL = 'witness_mailbox_agents';

/** The database URL a mailbox.json names (`postgres` alone: $WITNESS_DATABASE_URL). */
export function mailboxDatabaseUrl(config: Pick<MailboxConfig, 'database'>): string {
  if (config.database === undefined)
    throw new WitnessError('INVALID_INPUT', 'This mailbox names no database; it is not a PostgreSQL mailbox.');
  if (config.database === 'postgres' && !process.env[DATABASE_URL_ENV]) {
    throw new WitnessError(
      'USAGE',
      `This mailbox's database is the one in ${DATABASE_URL_ENV} (mailbox.json says "database": "postgres"), which is not set here; set it to the mailbox's database URL (e.g. postgres://USER@HOST/DB).`,
    );
  }
  return resolveDatabaseUrl(config.database, '--store');
}

/**
 * What `--store` gave, as it may be written into mailbox.json: a URL with a password
 * is refused (agents may read that file; put it in $WITNESS_DATABASE_URL and give
 * `--store postgres`).
 */
export function databaseSetting(value: string): string {
  if (value === 'postgres') return value;
  if (/^postgres(ql)?:\/\/[^/@]*:[^@/]*@/i.test(value) || /[?&]password=/i.test(value)) {
    throw new WitnessError(
      'USAGE',
      `The database URL ${redactUrl(value)} holds a password, which would be written into mailbox.json where agents may read it. Put the URL in WITNESS_DATABASE_URL and give --store postgres instead.`,
    );
  }
  return value;
}

/**
 * What each mailbox command does with the database, as rights (docs/mailbox.md's least
 * privilege table is this): checked in one query when the command opens the database,
 * so a role short of one is told which, before any work. Only `migrate` (and `init`
 * or `import` into a database without the tables) creates or changes tables.
 */
export const MAILBOX_GRANTS = {
  /** verify, export, status, checkpoint, tail: SELECT alone. */
  read: _grants({
    witness_schema: ['SELECT'],
    mailbox_meta: ['SELECT'],
    mailbox_agents: ['SELECT'],
    mailbox_messages: ['SELECT'],
    mailbox_calls: ['SELECT'],
    mailbox_cursors: ['SELECT'],
    mailbox_idempotency: ['SELECT'],
  }),
  /** serve: reads everything, appends messages and receipts, moves cursors, keeps keys and the send rate. */
  serve: _grants(
    {
      witness_schema: ['SELECT'],
      mailbox_meta: ['SELECT'],
      mailbox_agents: ['SELECT'],
      mailbox_messages: ['SELECT', 'INSERT'],
      mailbox_calls: ['SELECT', 'INSERT'],
      mailbox_cursors: ['SELECT', 'INSERT', 'UPDATE'],
      mailbox_idempotency: ['SELECT', 'INSERT', 'UPDATE'],
      mailbox_rate: ['SELECT', 'INSERT', 'UPDATE'],
    },
    ['mailbox_messages_pos_seq'],
  ),
  /** add-agent: a new agent row, and the agent list's version. */
  addAgent: _grants(
    { witness_schema: ['SELECT'], mailbox_meta: ['SELECT', 'UPDATE'], mailbox_agents: ['SELECT', 'INSERT'] },
    ['mailbox_agents_position_seq'],
  ),
  /** init into a database that has the tables: the row that says which mailbox it holds. */
  init: _grants({ witness_schema: ['SELECT'], mailbox_meta: ['SELECT', 'INSERT'] }),
  /** import into a database that has the tables: every row, and emptying them again when the result does not verify. */
  import: _grants(
    {
      witness_schema: ['SELECT'],
      mailbox_meta: ['SELECT', 'INSERT', 'TRUNCATE'],
      mailbox_agents: ['SELECT', 'INSERT', 'TRUNCATE'],
      mailbox_messages: ['SELECT', 'INSERT', 'TRUNCATE'],
      mailbox_calls: ['SELECT', 'INSERT', 'TRUNCATE'],
      mailbox_cursors: ['SELECT', 'INSERT', 'TRUNCATE'],
      mailbox_idempotency: ['SELECT', 'INSERT', 'TRUNCATE'],
      mailbox_rate: ['TRUNCATE'],
    },
    ['mailbox_messages_pos_seq', 'mailbox_agents_position_seq'],
  ),
} as const;

function _grants(tables: Record<string, Grant['privilege'][]>, sequences: string[] = []): readonly Grant[] {
  return [
    ...Object.entries(tables).flatMap(([object, privileges]) =>
      privileges.map((privilege) => ({ kind: 'table' as const, object, privilege })),
    ),
    ...sequences.map((object) => ({ kind: 'sequence' as const, object, privilege: 'USAGE' as const })),
  ];
}

/** What a command that must not change the schema says to do when it is missing or old. */
export function migrateRemedy(location: string): string {
  return `run \`witness mailbox migrate ${location}\` as a role that may create tables`;
}

export interface MailboxPoolOptions {
  /** Largest number of connections (default 8). */
  max?: number;
  /** `migrate`: create or upgrade the tables (DDL, only when needed); `check` (default): refuse a missing or older schema, changing nothing. */
  schema?: 'migrate' | 'check';
  /** The rights the command needs (MAILBOX_GRANTS), checked once the schema is. */
  grants?: readonly Grant[];
  /** The command, as the error names it (e.g. `witness mailbox serve`). */
  command?: string;
  /** What to name in "run `witness mailbox migrate …`" (default: the URL, redacted). */
  location?: string;
}

/**
 * Connects to the mailbox's database and checks (or, for `migrate`, brings up to date)
 * its schema, then the role's rights. Every transaction commits synchronously
 * whatever the server's default: a send is acknowledged only once its commit is on disk.
 */
export async function openMailboxPool(url: string, options: MailboxPoolOptions = {}): Promise<Pool> {
  const pool = await openPool(url, {
    purpose: 'mailbox database',
    max: options.max ?? 8,
    sessionSql: 'SET synchronous_commit = on',
  });
  try {
    await prepareMailboxDatabase(pool, url, options);
  } catch (error) {
    await pool.end().catch(() => {});
    throw error;
  }
  return pool;
}

/** The schema and rights checks of `openMailboxPool`, for a connection opened otherwise. */
export async function prepareMailboxDatabase(db: Pool, url: string, options: MailboxPoolOptions): Promise<void> {
  const remedy = migrateRemedy(options.location ?? redactUrl(url));
  if (options.schema === 'migrate') await migrate(db, 'mailbox', MAILBOX_MIGRATIONS, remedy);
  else await requireSchema(db, 'mailbox', MAILBOX_MIGRATIONS, remedy);
  await requireGrants(db, options.grants ?? [], options.command ?? 'this command');
}

interface MetaRow {
  id: string;
  kid: string;
}

/** The mailbox a database holds, if any. */
export async function mailboxInDatabase(db: Pool | PoolClient): Promise<MetaRow | undefined> {
  return (await db.query<MetaRow>('SELECT id, kid FROM mailbox_meta')).rows[0];
}

/** Refuses a database that holds another mailbox than `config`'s (or none). */
export async function assertSameMailbox(pool: Pool, config: MailboxConfig, url: string): Promise<void> {
  const found = await mailboxInDatabase(pool);
  if (!found)
    throw new WitnessError(
      'NOT_FOUND',
      `The database ${redactUrl(url)} holds no mailbox, but mailbox.json (id ${config.id}) names it. Point the mailbox at the right database, or create one with \`witness mailbox init DIR --store URL\`.`,
    );
  if (found.id !== config.id || found.kid !== config.signing.kid) {
    throw new WitnessError(
      'INVALID_INPUT',
      `The database ${redactUrl(url)} holds mailbox ${found.id} (key ${found.kid}), not this folder's mailbox ${config.id} (key ${config.signing.kid}). Point the mailbox at its own database.`,
    );
  }
}

/** Records a new mailbox in an empty database; refuses one that already holds a mailbox. */
export async function claimDatabase(pool: Pool | PoolClient, config: MailboxConfig, url: string): Promise<void> {
  const inserted = await pool.query(
    'INSERT INTO mailbox_meta (id, kid, created) VALUES ($1, $2, $3) ON CONFLICT (singleton) DO NOTHING',
    [config.id, config.signing.kid, config.created],
  );
  if (inserted.rowCount === 1) return;
  const found = await mailboxInDatabase(pool);
  throw new WitnessError(
    'USAGE',
    `The database ${redactUrl(url)} already holds mailbox ${found?.id ?? '?'}; nothing was changed. Give another database (one per mailbox), or copy that mailbox's mailbox.json to serve it from this host.`,
  );
}

/** Probes that the database is empty of a mailbox before a key is created for a new one. */
export async function assertDatabaseFree(pool: Pool, url: string): Promise<void> {
  const found = await mailboxInDatabase(pool);
  if (found)
    throw new WitnessError(
      'USAGE',
      `The database ${redactUrl(url)} already holds mailbox ${found.id}; nothing was changed. Give another database (one per mailbox), or copy that mailbox's mailbox.json to serve it from this host.`,
    );
}

/** An agent as its row holds it (the columns AGENT_COLUMNS names). */
export interface AgentRow {
  name: string;
  description: string | null;
  created: string;
  token_sha256: string | null;
}

export const AGENT_COLUMNS = 'a.name, a.description, a.created, a.token_sha256';

export function agentFromRow(r: AgentRow): AgentEntry {
  return {
    name: r.name,
    created: r.created,
    ...(r.description !== null ? { description: r.description } : {}),
    ...(r.token_sha256 !== null ? { token_sha256: r.token_sha256 } : {}),
  };
}

/**
 * One clear error for a database failure. A failed write stored and acknowledged
 * nothing of the call; a failed read (a status, an unread check) changed nothing.
 */
export function databaseFailure(error: unknown, during: 'write' | 'read' = 'write'): WitnessError {
  if (error instanceof WitnessError) return error;
  const denied = privilegeDenied(error);
  if (denied)
    return new WitnessError(
      'USAGE',
      `The mailbox database ${during === 'write' ? 'refused the write' : 'refused a read'}: ${denied}; nothing was changed.`,
      { cause: error },
    );
  const cause = describeDatabaseError(error);
  const effect = during === 'write' ? 'refused the write' : 'failed a read';
  const kept =
    during === 'write' ? 'this call was not stored and nothing of it was acknowledged' : 'nothing was changed';
  return new WitnessError(
    'IO',
    `The mailbox database ${effect} (${cause}): ${kept}. Check the database server, then retry.`,
    { cause: error },
  );
}

/**
 * The cause as a client may see it: an error the server sent (it has a severity) with
 * its SQLSTATE and message; otherwise the connection's error code alone — its message
 * names the socket path or address (EPERM, ENOENT and ECONNREFUSED alike), which is
 * the operator's (in mailbox.json), not the agent's.
 */
function describeDatabaseError(error: unknown): string {
  const { code, severity } = error as { code?: unknown; severity?: unknown };
  if (typeof severity === 'string' && typeof code === 'string') return `${code}: ${(error as Error).message}`;
  return `${typeof code === 'string' && code !== '' ? code : 'connection lost'}: the database server could not be reached`;
}

/** A read outside a commit: a database failure becomes the mailbox's IO error, not an internal one. */
export function reading<T>(work: Promise<T>): Promise<T> {
  return work.catch((error: unknown) => {
    throw databaseFailure(error, 'read');
  });
}
