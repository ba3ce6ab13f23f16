/**
 * @module
 * `witness mailbox tail` on a PostgreSQL mailbox: messages after the last position
 * seen, a page per poll, read without any lock or cursor move.
 */
import { openPool } from '../../../attest/postgres.js';
import type { Message } from '../../call-log.js';
import type { MailboxConfig } from '../../config.js';
import { CAPPED_TEXT } from '../lines.js';
import { parseMessage } from '../ops.js';
import { MAILBOX_GRANTS, mailboxDatabaseUrl, prepareMailboxDatabase, reading } from './db.js';

export async function followPostgres(
  config: MailboxConfig,
  agent: string | undefined,
  perPoll: number,
): Promise<{ next(skip: boolean): Promise<Message[]>; close(): Promise<void> }> {
  const url = mailboxDatabaseUrl(config);
  const pool = await openPool(url, { purpose: 'mailbox database', max: 1 });
  await prepareMailboxDatabase(pool, url, {
    grants: MAILBOX_GRANTS.read.filter((g) => g.object === 'witness_schema' || g.object === 'mailbox_messages'),
    command: '`witness mailbox tail`',
  }).catch(async (error: unknown) => {
    await pool.end().catch(() => {});
    throw error;
  });
  let last = 0;
  return {
    async next(skip) {
      if (skip) {
        last = Number(
          (await reading(pool.query<{ last: string }>('SELECT coalesce(max(pos), 0) AS last FROM mailbox_messages')))
            .rows[0]!.last,
        );
        return [];
      }
      const rows = (
        await reading(
          pool.query<{ pos: string; text: string | null }>(
            `SELECT pos, ${CAPPED_TEXT} AS text FROM mailbox_messages WHERE pos > $1 AND ($2::text IS NULL OR recipient = $2) ORDER BY pos LIMIT $3`,
            [last, agent ?? null, perPoll],
          ),
        )
      ).rows;
      const out: Message[] = [];
      for (const r of rows) {
        last = Number(r.pos);
        const m = parseMessage(r.text ?? undefined);
        if (m) out.push(m);
      }
      return out;
    },
    close: () => pool.end(),
  };
}
