/**
 * @module
 * What `witness mailbox verify` reads from a PostgreSQL mailbox: the same lines as
 * from the file stores, taken from ONE snapshot of the database (a read-only
 * repeatable-read transaction), so sends committed by live servers while verify
 * reads never show as a message without its receipt. Rows are fetched through
 * server-side cursors a page at a time, so memory does not grow with the mailbox.
 * Nothing here writes: the schema is not migrated, only checked, and SELECT is the
 * one right it needs.
 */
import type { PoolClient } from 'pg';
import { openPool, redactUrl } from '../../../attest/postgres.js';
import { WitnessError } from '../../../core/errors.js';
import type { MailboxConfig } from '../../config.js';
import type { Cursor, Evidence, EvidenceLine, IdempotencyRow, InboxLine } from '../../evidence.js';
import { MAX_LINE_BYTES } from '../lines.js';
import {
  AGENT_COLUMNS,
  type AgentRow,
  agentFromRow,
  assertSameMailbox,
  MAILBOX_GRANTS,
  mailboxDatabaseUrl,
  prepareMailboxDatabase,
} from './db.js';

const PAGE = 1000;
const TEXT = `CASE WHEN octet_length(text) <= ${MAX_LINE_BYTES} THEN text END AS text`;

export async function openPostgresEvidence(config: MailboxConfig, dir?: string): Promise<Evidence> {
  const url = mailboxDatabaseUrl(config);
  const pool = await openPool(url, { purpose: 'mailbox database', max: 1 });
  let client: PoolClient | undefined;
  try {
    await prepareMailboxDatabase(pool, url, {
      grants: MAILBOX_GRANTS.read,
      command: 'reading the mailbox',
      ...(dir !== undefined ? { location: dir } : {}),
    });
    await assertSameMailbox(pool, config, url).catch((error: unknown) => {
      // No tables at all: the database holds no mailbox.
      if ((error as { code?: string }).code === '42P01')
        throw new WitnessError(
          'NOT_FOUND',
          `The database ${redactUrl(url)} holds no mailbox, but mailbox.json (id ${config.id}) names it. Point the mailbox at the right database.`,
        );
      throw error;
    });
    client = await pool.connect();
    await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
  } catch (error) {
    client?.release();
    await pool.end().catch(() => {});
    throw error;
  }
  // The URL names its scheme already: `postgres:` before it printed postgres:postgres:///….
  return _evidence(client, redactUrl(url), async () => {
    await client.query('ROLLBACK').catch(() => {});
    client.release();
    await pool.end();
  });
}

function _evidence(client: PoolClient, where: string, close: () => Promise<void>): Evidence {
  const rows = _cursorReader(client);
  return {
    kind: 'postgres',
    callsFile: `${where}#calls`,
    unreadable: [],
    async agents() {
      return (
        await client.query<AgentRow>(`SELECT ${AGENT_COLUMNS} FROM mailbox_agents a ORDER BY a.position`)
      ).rows.map(agentFromRow);
    },
    async *calls(): AsyncGenerator<EvidenceLine> {
      let line = 0;
      for await (const row of rows<{ text: string | null }>(`SELECT ${TEXT} FROM mailbox_calls ORDER BY seq`)) {
        line++;
        yield { line, end: 0, ...(row.text !== null ? { text: row.text } : {}) };
      }
    },
    async *inboxLines(): AsyncGenerator<InboxLine> {
      for await (const row of rows<{ pos: string; id: string; recipient: string; text: string | null }>(
        `SELECT pos, id, recipient, ${TEXT} FROM mailbox_messages ORDER BY recipient, pos`,
      )) {
        yield {
          agent: row.recipient,
          file: `${where}#messages[${row.recipient}]`,
          line: Number(row.pos),
          end: 0,
          rowId: row.id,
          ...(row.text !== null ? { text: row.text } : {}),
        };
      }
    },
    async *idempotency(): AsyncGenerator<IdempotencyRow> {
      for await (const row of rows<Omit<IdempotencyRow, 'file'>>(
        'SELECT sender, key, id, recipient, sent_at FROM mailbox_idempotency ORDER BY sender, key',
      ))
        yield { ...row, file: `${where}#idempotency` };
    },
    async cursors() {
      const cursors = new Map<string, Cursor>();
      for await (const row of rows<{ agent: string; pos: string }>(
        'SELECT agent, pos FROM mailbox_cursors ORDER BY agent',
      )) {
        cursors.set(row.agent, { file: `${where}#cursors[${row.agent}]`, at: Number(row.pos), unit: 'row' });
      }
      return { cursors, unreadable: [] };
    },
    close,
  };
}

/** Rows of a query, a page at a time, through a server-side cursor of the open transaction. */
function _cursorReader(client: PoolClient): <T>(sql: string) => AsyncGenerator<T> {
  let n = 0;
  return async function* <T>(sql: string): AsyncGenerator<T> {
    const name = `witness_evidence_${n++}`;
    await client.query(`DECLARE ${name} NO SCROLL CURSOR FOR ${sql}`);
    try {
      for (;;) {
        const page = await client.query(`FETCH ${PAGE} FROM ${name}`);
        for (const row of page.rows as T[]) yield row;
        if (page.rows.length < PAGE) return;
      }
    } finally {
      await client.query(`CLOSE ${name}`).catch(() => {});
    }
  };
}
