/**
 * @module
 * The PostgreSQL store's driver (`--store postgres://…`), for mailbox servers on
 * several hosts; what an operation means is the engine's (engine.ts). A group of operations is one
 * transaction that first takes the chain lock (a transaction-scoped advisory lock),
 * so a message, its cursor move and its call-log receipt commit together, and the
 * call log's hash chain has one total order across every server process — measured
 * faster than a head row locked FOR UPDATE (NOTES.md, bench/pg-chain-lock.ts).
 * Idempotency keys are unique per sender in the database; the per-agent send rate is
 * a row there too (rate.ts). Commits are synchronous (db.ts): a send
 * is answered only once its transaction is durable. Mail wakes waiters in every
 * process through LISTEN/NOTIFY (listen.ts), with polling as the fallback.
 */
import type { Pool, PoolClient } from 'pg';
import type { Signer } from '../../../attest/signature.js';
import { WitnessError } from '../../../core/errors.js';
import { genuineCall } from '../../call-check.js';
import { type CallRecord, EMPTY_HEAD, lineHash, messageDigest } from '../../call-log.js';
import type { AgentEntry, MailboxConfig } from '../../config.js';
import { DEFAULT_LIMITS, type SendRate } from '../../limits.js';
import { isAckOf } from '../delivery.js';
import type { ReadCursor, Sealed, StoreDriver, StoredRow, StoreTx } from '../driver.js';
import { MailboxEngine } from '../engine.js';
import { CAPPED_TEXT } from '../lines.js';
import type * as ops from '../ops.js';
import {
  AGENT_COLUMNS,
  type AgentRow,
  agentFromRow,
  assertSameMailbox,
  databaseFailure,
  LINES_NAMING,
  MAILBOX_GRANTS,
  mailboxDatabaseUrl,
  openMailboxPool,
  reading,
} from './db.js';
import { GroupWrites } from './group.js';
import { MailListener } from './listen.js';
import { PostgresSendRate } from './rate.js';
import { type Count, type Quota, UnreadTracker } from '../quota.js';

/** The chain lock: one advisory key (in the two-key space, apart from attest's migration lock). */
export const CHAIN_LOCK = [0x5749_544e, 1] as const;

/** Rows after a position, oldest first, a page at a time. */
const AFTER = `SELECT pos, ${CAPPED_TEXT} AS text FROM mailbox_messages WHERE recipient = $1 AND pos > $2 ORDER BY pos LIMIT $3`;
const MATCHING = `SELECT pos, ${CAPPED_TEXT} AS text FROM mailbox_messages WHERE recipient = $1 AND pos > $2 AND strpos(text, $3) > 0 ORDER BY pos LIMIT $4`;

type Db = Pool | PoolClient;

/** The PostgreSQL store: the engine over a database shared by every server process. */
export class PostgresStore extends MailboxEngine {
  private constructor(
    private readonly pg: PostgresDriver,
    signer: Signer,
    quota: Quota,
  ) {
    super(pg, signer, quota);
  }

  get pool(): Pool {
    return this.pg.pool;
  }

  /**
   * Connects (a pool and a listening connection), checks the schema is current and the
   * role has the rights a server (or, `readOnly`, a reader) needs — no DDL: that is
   * `witness mailbox migrate`'s — and that the database holds this mailbox.
   */
  static async open(
    dir: string,
    config: MailboxConfig,
    signer: Signer,
    quota: Quota = DEFAULT_LIMITS,
    readOnly = false,
  ): Promise<PostgresStore> {
    const url = mailboxDatabaseUrl(config);
    const pool = await openMailboxPool(url, {
      grants: readOnly ? MAILBOX_GRANTS.read : MAILBOX_GRANTS.serve,
      command: readOnly ? 'reading the mailbox' : 'serving the mailbox',
      location: dir,
    });
    try {
      await assertSameMailbox(pool, config, url);
      const listener = await MailListener.start(url);
      return new PostgresStore(new PostgresDriver(dir, pool, signer, quota, listener), signer, quota);
    } catch (error) {
      await pool.end().catch(() => {});
      throw error;
    }
  }
}

export class PostgresDriver implements StoreDriver {
  readonly kind = 'postgres' as const;
  private readonly unreadTracker: UnreadTracker;
  /** The agents as last read, and the version they were read at (undefined: read again). */
  private agentsCache: { version: string; list: AgentEntry[] } | undefined;
  private readonly wake = new Set<(agent: string | undefined) => void>();
  private closed = false;

  constructor(
    readonly dir: string,
    readonly pool: Pool,
    private readonly signer: Signer,
    quota: Quota,
    private readonly listener: MailListener,
  ) {
    this.unreadTracker = new UnreadTracker(quota);
    listener.onMail = (agent) => {
      for (const w of this.wake) w(agent);
    };
    listener.onAgents = () => {
      this.agentsCache = undefined;
    };
  }

  failsGroup(error: unknown): boolean {
    return !(error instanceof WitnessError); // our checks throw before an operation keeps anything to write; anything else fails the group
  }

  reading<T>(work: Promise<T>): Promise<T> {
    return reading(work);
  }

  /** Mail for an agent was committed by any server process (LISTEN/NOTIFY); undefined: anyone may have mail. */
  onMail(wake: (agent: string | undefined) => void): () => void {
    this.wake.add(wake);
    return () => this.wake.delete(wake);
  }

  /** The per-agent send rate, shared by every process of this mailbox. */
  sendRate(perMinute: number): SendRate {
    return new PostgresSendRate(this.pool, perMinute);
  }

  /** How often a waiter should poll: rarely while notifications arrive, often while they may be lost. */
  get pollMs(): number {
    return this.listener.listening ? 1000 : 50;
  }

  async agents(): Promise<AgentEntry[]> {
    // Cached only while the listener would hear of a change.
    if (this.agentsCache && this.listener.listening) return this.agentsCache.list;
    return reading(this.readAgents(this.pool));
  }

  cursor(agent: string): Promise<ReadCursor> {
    return _cursor(this.pool, agent);
  }

  readAfter(agent: string, after: number, want: number): Promise<StoredRow[]> {
    return _rowsAfter(this.pool, agent, after, want);
  }

  async linesNaming(id: string): Promise<string[]> {
    return (await this.pool.query<{ text: string }>(LINES_NAMING, [id])).rows.map((r) => r.text);
  }

  async acknowledged(agent: string, ids: string[]): Promise<Set<string>> {
    return new Set((await reading(this.acksIn(this.pool, agent, ids))).keys());
  }

  async inboxMark(agent: string): Promise<string> {
    return (
      await reading(
        this.pool.query<{ mark: string }>(
          'SELECT coalesce(max(pos), 0)::text AS mark FROM mailbox_messages WHERE recipient = $1',
          [agent],
        ),
      )
    ).rows[0]!.mark;
  }

  /** `agent`'s acknowledgements of `ids`: the first genuine ack receipt of each in the call log (found by the log's own index). */
  async acksIn(db: Db, agent: string, ids: string[]): Promise<Map<string, CallRecord>> {
    const rows = await db.query<{ id: string; text: string }>(
      'SELECT i.id, c.text FROM unnest($1::text[]) AS i(id) JOIN mailbox_calls c ON mailbox_call_ids(c.text) @> ARRAY[i.id] ORDER BY c.seq',
      [ids],
    );
    const acks = new Map<string, CallRecord>();
    for (const row of rows.rows) {
      if (acks.has(row.id)) continue;
      const record = genuineCall(row.text, this.signer);
      if (record && isAckOf(record, row.id) && record.agent === agent) acks.set(row.id, record);
    }
    return acks;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.listener.stop();
    await this.pool.end();
  }

  async group(run: (tx: StoreTx) => Promise<void>): Promise<void> {
    const client = await this.pool.connect().catch((error: unknown) => {
      throw databaseFailure(error);
    });
    try {
      const writes = new GroupWrites();
      const { head, agents } = await this.begin(client);
      await run(new _PostgresTx(this, client, writes, this.unreadTracker, head, agents));
      await writes.finish(client);
      await client.query('COMMIT');
    } catch (error) {
      this.unreadTracker.forget();
      await client.query('ROLLBACK').catch(() => {});
      throw databaseFailure(error);
    } finally {
      client.release();
    }
  }

  /**
   * Opens the group's transaction, takes the chain lock, and reads the chain's head
   * and (when it changed) the agent list: one round trip for the three statements.
   */
  private async begin(client: PoolClient): Promise<{ head: Sealed['head']; agents: AgentEntry[] }> {
    const results = (await client.query(
      `BEGIN; SELECT pg_advisory_xact_lock(${CHAIN_LOCK[0]}, ${CHAIN_LOCK[1]}); SELECT m.agents_version::text AS version, c.seq::text AS seq, c.text FROM mailbox_meta m LEFT JOIN LATERAL (SELECT seq, text FROM mailbox_calls ORDER BY seq DESC LIMIT 1) c ON true`,
    )) as unknown as Array<{ rows: Array<{ version: string; seq: string | null; text: string | null }> }>;
    const row = results[2]?.rows[0];
    if (!row)
      throw new WitnessError(
        'CORRUPT',
        'The mailbox database has lost its mailbox_meta row; restore it from a backup.',
      );
    const head =
      row.seq !== null && row.text !== null ? { seq: Number(row.seq), hash: lineHash(row.text) } : EMPTY_HEAD;
    if (this.agentsCache?.version !== row.version) await this.readAgents(client);
    return { head, agents: this.agentsCache!.list };
  }

  private async readAgents(db: Db): Promise<AgentEntry[]> {
    const result = await db.query<AgentRow & { version: string }>(
      `SELECT m.agents_version::text AS version, ${AGENT_COLUMNS} FROM mailbox_meta m LEFT JOIN mailbox_agents a ON true ORDER BY a.position`,
    );
    const list = result.rows.filter((r) => r.name !== null).map(agentFromRow);
    this.agentsCache = { version: result.rows[0]?.version ?? '0', list };
    return list;
  }
}

/**
 * One group's view: its transaction, and the rows kept for the group's multi-row
 * INSERTs (group.ts), flushed before any lookup that must see them.
 */
class _PostgresTx implements StoreTx {
  constructor(
    private readonly driver: PostgresDriver,
    private readonly client: PoolClient,
    private readonly writes: GroupWrites,
    private readonly tracker: UnreadTracker,
    readonly head: Sealed['head'],
    readonly agents: AgentEntry[],
  ) {}

  cursor(agent: string): Promise<ReadCursor> {
    return _cursor(this.client, agent);
  }

  /** A read sees every message sent before it. */
  async readAfter(agent: string, after: number, want: number): Promise<StoredRow[]> {
    await this.writes.flush(this.client);
    return _rowsAfter(this.client, agent, after, want);
  }

  async readMatching(agent: string, needle: string, after: number, want: number): Promise<StoredRow[]> {
    await this.writes.flush(this.client);
    return _rows(
      (await this.client.query<{ pos: string; text: string | null }>(MATCHING, [agent, after, needle, want])).rows,
    );
  }

  async linesNaming(id: string): Promise<string[]> {
    await this.writes.flush(this.client);
    return (await this.client.query<{ text: string }>(LINES_NAMING, [id])).rows.map((r) => r.text);
  }

  /** This group's keyed sends first (sealed here: their digest is known good), then the database's pointer. */
  async keyedSend(from: string, key: string): Promise<ops.IdempotentSend | undefined> {
    const inGroup = this.writes.keyedSend(from, key);
    if (inGroup) return { id: inGroup.id, to: inGroup.to, sent_at: inGroup.sent_at, digest: messageDigest(inGroup) };
    return (
      await this.client.query<ops.IdempotentSend>(
        'SELECT id, recipient AS "to", sent_at FROM mailbox_idempotency WHERE sender = $1 AND key = $2',
        [from, key],
      )
    ).rows[0];
  }

  async findRecord(agent: string, id: string): Promise<StoredRow | undefined> {
    await this.writes.flush(this.client);
    const row = (
      await this.client.query<{ pos: string; text: string | null }>(
        `SELECT pos, ${CAPPED_TEXT} AS text FROM mailbox_messages WHERE id = $1 AND recipient = $2`,
        [id, agent],
      )
    ).rows[0];
    return row && { pos: Number(row.pos), text: row.text ?? undefined };
  }

  receiptLines(earlier: ops.IdempotentSend): Promise<string[]> {
    return this.linesNaming(earlier.id);
  }

  async earlierAck(agent: string, id: string): Promise<{ ts: string; reply?: string } | undefined> {
    const inGroup = this.writes.ackOf(id);
    if (inGroup?.agent === agent) return inGroup;
    return (await this.driver.acksIn(this.client, agent, [id])).get(id);
  }

  /** Unread in the database (the cursor and the inbox's end in one round trip, the count from what changed: quota.ts), plus this group's sends. */
  async unread(to: string): Promise<Count> {
    const known = this.writes.unreadOf(to);
    if (known) return known;
    const row = (
      await this.client.query<{ cursor: string | null; end: string | null }>(
        'SELECT (SELECT pos FROM mailbox_cursors WHERE agent = $1) AS cursor, (SELECT max(pos) FROM mailbox_messages WHERE recipient = $1) AS end',
        [to],
      )
    ).rows[0];
    const cursor = Number(row?.cursor ?? 0);
    const end = Number(row?.end ?? cursor);
    const count = async (after: number, upTo: number): Promise<Count> => {
      const r = (
        await this.client.query<{ messages: string; bytes: string }>(
          'SELECT count(*) AS messages, coalesce(sum(octet_length(text) + 1), 0) AS bytes FROM mailbox_messages WHERE recipient = $1 AND pos > $2 AND pos <= $3',
          [to, after, upTo],
        )
      ).rows[0]!;
      return { messages: Number(r.messages), bytes: Number(r.bytes) };
    };
    const unread = await this.tracker.unreadAsync(to, cursor, Math.max(end, cursor), count);
    this.writes.setUnread(to, unread);
    return unread;
  }

  addMessage(prepared: ops.PreparedSend): void {
    this.writes.addMessage(prepared.message, prepared.text, prepared.bytes);
  }

  addCall(sealed: Sealed): void {
    this.writes.addCall(sealed.record, sealed.text);
  }

  async moveCursor(agent: string, cursor: ReadCursor): Promise<void> {
    this.writes.forgetUnread(agent);
    await this.client.query(
      'INSERT INTO mailbox_cursors (agent, pos, delivered, updated_at) VALUES ($1, $2, $3, $4) ON CONFLICT (agent) DO UPDATE SET pos = EXCLUDED.pos, delivered = EXCLUDED.delivered, updated_at = EXCLUDED.updated_at',
      [agent, cursor.pos, cursor.delivered, new Date().toISOString()],
    );
  }
}

async function _cursor(db: Db, agent: string): Promise<ReadCursor> {
  const row = (
    await db.query<{ pos: string; delivered: string }>('SELECT pos, delivered FROM mailbox_cursors WHERE agent = $1', [
      agent,
    ])
  ).rows[0];
  return row ? { pos: Number(row.pos), delivered: Number(row.delivered) } : { pos: 0, delivered: 0 };
}

async function _rowsAfter(db: Db, agent: string, after: number, want: number): Promise<StoredRow[]> {
  return _rows((await db.query<{ pos: string; text: string | null }>(AFTER, [agent, after, want])).rows);
}

function _rows(rows: Array<{ pos: string; text: string | null }>): StoredRow[] {
  return rows.map((r) => ({ pos: Number(r.pos), text: r.text ?? undefined }));
}
