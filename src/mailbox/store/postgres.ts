/**
 * @module
 * The PostgreSQL store (`--store postgres://…`, issue 16): the same interface as the
 * file stores, for mailbox servers on several hosts. A group of operations is one
 * transaction that first takes the chain lock (a transaction-scoped advisory lock),
 * so a message, its cursor move and its call-log receipt commit together, and the
 * call log's hash chain has one total order across every server process — measured
 * faster than a head row locked FOR UPDATE (NOTES.md, bench/pg-chain-lock.ts).
 * Idempotency keys are unique per sender in the database; the per-agent send rate is
 * a row there too (postgres-rate.ts). Commits are synchronous (postgres-db.ts): a send
 * is answered only once its transaction is durable. Mail wakes waiters in every
 * process through LISTEN/NOTIFY (postgres-listen.ts), with polling as the fallback.
 */
import type { Pool, PoolClient } from 'pg';
import type { Signer } from '../../attest/signature.js';
import { WitnessError } from '../../core/errors.js';
import { genuineCall } from '../call-check.js';
import { type CallEntry, type CallRecord, type ChainHead, EMPTY_HEAD, lineHash, type Message, sealCall } from '../call-log.js';
import { checkWellFormedText } from '../../core/text.js';
import { type DeliveryStatus, deliveryOf, isAckOf } from './delivery.js';
import type { AgentEntry, MailboxConfig } from '../config.js';
import { DEFAULT_LIMITS, type SendRate } from '../limits.js';
import { CommittingStore } from './committing-store.js';
import type { Pending } from './group-commit.js';
import { CAPPED_TEXT } from './lines.js';
import * as ops from './ops.js';
import { AGENT_COLUMNS, type AgentRow, agentFromRow, assertSameMailbox, databaseFailure, LINES_NAMING, MAILBOX_GRANTS, mailboxDatabaseUrl, openMailboxPool, reading } from './postgres-db.js';
import { PostgresSendRate } from './postgres-rate.js';
import { GroupWrites } from './postgres-group.js';
import { MailListener } from './postgres-listen.js';
import { checkQuota, type Count, type Quota, UnreadTracker } from './quota.js';
import type { AckResult, FetchOptions, MailboxStore, SendInput, SendResult } from './types.js';

/** The chain lock: one advisory key (in the two-key space, apart from attest's migration lock). */
export const CHAIN_LOCK = [0x5749_544e, 1] as const;

/** Unread rows after a position, oldest first, a page at a time. */
const UNREAD = `SELECT pos, ${CAPPED_TEXT} AS text FROM mailbox_messages WHERE recipient = $1 AND pos > $2 ORDER BY pos LIMIT $3`;
const PAGE = 256;

type Db = Pool | PoolClient;

export class PostgresStore extends CommittingStore implements MailboxStore {
  readonly kind = 'postgres' as const;
  private readonly unread: UnreadTracker;
  /** The chain's head, valid inside a commit's transaction. */
  private head: ChainHead = EMPTY_HEAD;
  /** The agents as last read, and the version they were read at (undefined: read again). */
  private agentsCache: { version: string; list: AgentEntry[] } | undefined;
  private readonly wake = new Set<(agent: string | undefined) => void>();
  private closed = false;

  private constructor(
    dir: string,
    readonly pool: Pool,
    private readonly signer: Signer,
    quota: Quota,
    private readonly listener: MailListener,
  ) {
    super(dir);
    this.unread = new UnreadTracker(quota);
    listener.onMail = (agent) => {
      for (const w of this.wake) w(agent);
    };
    listener.onAgents = () => {
      this.agentsCache = undefined;
    };
  }

  /**
   * Connects (a pool and a listening connection), checks the schema is current and the
   * role has the rights a server (or, `readOnly`, a reader) needs — no DDL: that is
   * `witness mailbox migrate`'s — and that the database holds this mailbox.
   */
  static async open(dir: string, config: MailboxConfig, signer: Signer, quota: Quota = DEFAULT_LIMITS, readOnly = false): Promise<PostgresStore> {
    const url = mailboxDatabaseUrl(config);
    const pool = await openMailboxPool(url, { grants: readOnly ? MAILBOX_GRANTS.read : MAILBOX_GRANTS.serve, command: readOnly ? 'reading the mailbox' : 'serving the mailbox', location: dir });
    try {
      await assertSameMailbox(pool, config, url);
      const listener = await MailListener.start(url);
      return new PostgresStore(dir, pool, signer, quota, listener);
    } catch (error) {
      await pool.end().catch(() => {});
      throw error;
    }
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

  override async agents(): Promise<AgentEntry[]> {
    // Cached only while the listener would hear of a change.
    if (this.agentsCache && this.listener.listening) return this.agentsCache.list;
    return reading(this.readAgents(this.pool));
  }

  hasUnread(agent: string): Promise<boolean> {
    return reading(this.unreadExists(agent));
  }

  private async unreadExists(agent: string): Promise<boolean> {
    let after = await this.cursorOf(this.pool, agent).then((c) => c.pos);
    for (;;) {
      const rows = (await this.pool.query<{ pos: string; text: string | null }>(UNREAD, [agent, after, PAGE])).rows;
      if (rows.some((r) => ops.parseMessage(r.text ?? undefined))) return true;
      if (rows.length < PAGE) return false;
      after = Number(rows.at(-1)!.pos);
    }
  }

  async status(id: string): Promise<DeliveryStatus | undefined> {
    const rows = await reading(this.pool.query<{ text: string }>(LINES_NAMING, [id]));
    return deliveryOf(id, rows.rows.map((r) => r.text), this.signer);
  }

  async acknowledged(agent: string, ids: string[]): Promise<Set<string>> {
    return new Set((await reading(this.acksIn(this.pool, agent, ids))).keys());
  }

  inboxSince(agent: string, mark: string, limit: number): Promise<{ messages: Message[]; mark: string }> {
    return reading(this.unreadSince(agent, mark, limit));
  }

  private async unreadSince(agent: string, mark: string, limit: number): Promise<{ messages: Message[]; mark: string }> {
    const after = mark === '' ? String((await this.cursorOf(this.pool, agent)).pos) : mark;
    const rows = (await this.pool.query<{ pos: string; text: string | null }>(UNREAD, [agent, after, limit])).rows;
    const messages = rows.map((r) => ops.parseMessage(r.text ?? undefined)).filter((m): m is Message => m !== undefined);
    return { messages, mark: rows.at(-1)?.pos ?? after };
  }

  async inboxMark(agent: string): Promise<string> {
    return (await reading(this.pool.query<{ mark: string }>('SELECT coalesce(max(pos), 0)::text AS mark FROM mailbox_messages WHERE recipient = $1', [agent]))).rows[0]!.mark;
  }

  /** `agent`'s acknowledgements of `ids`: the first genuine ack receipt of each in the call log (found by the log's own index). */
  private async acksIn(db: Db, agent: string, ids: string[]): Promise<Map<string, CallRecord>> {
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
    await this.committer.flushed();
    if (this.closed) return;
    this.closed = true;
    await this.listener.stop();
    await this.pool.end();
  }

  protected async commit(group: Pending<ops.StoreOp, ops.StoreResult>[]): Promise<void> {
    const client = await this.pool.connect().catch((error: unknown) => {
      throw databaseFailure(error);
    });
    const settle: Array<() => void> = [];
    const writes = new GroupWrites();
    try {
      await this.begin(client);
      for (const p of group) {
        try {
          const result = await this.apply(client, writes, p.op);
          settle.push(() => p.resolve(result));
        } catch (error) {
          // Our checks throw before an operation keeps anything to write; anything else fails the group.
          if (!(error instanceof WitnessError)) throw error;
          const failed = ops.failedCall(p.op, error);
          if (failed) this.log(writes, failed);
          settle.push(() => p.reject(error));
        }
      }
      await writes.finish(client);
      await client.query('COMMIT');
    } catch (error) {
      this.unread.forget();
      await client.query('ROLLBACK').catch(() => {});
      throw databaseFailure(error);
    } finally {
      client.release();
    }
    for (const s of settle) s();
  }

  /**
   * Opens the group's transaction, takes the chain lock, and reads the chain's head
   * and (when it changed) the agent list: one round trip for the three statements.
   */
  private async begin(client: PoolClient): Promise<void> {
    const results = (await client.query(
      `BEGIN; SELECT pg_advisory_xact_lock(${CHAIN_LOCK[0]}, ${CHAIN_LOCK[1]}); SELECT m.agents_version::text AS version, c.seq::text AS seq, c.text FROM mailbox_meta m LEFT JOIN LATERAL (SELECT seq, text FROM mailbox_calls ORDER BY seq DESC LIMIT 1) c ON true`,
    )) as unknown as Array<{ rows: Array<{ version: string; seq: string | null; text: string | null }> }>;
    const row = results[2]?.rows[0];
    if (!row) throw new WitnessError('CORRUPT', 'The mailbox database has lost its mailbox_meta row; restore it from a backup.');
    this.head = row.seq !== null && row.text !== null ? { seq: Number(row.seq), hash: lineHash(row.text) } : EMPTY_HEAD;
    if (this.agentsCache?.version !== row.version) await this.readAgents(client);
    this.agentList = this.agentsCache!.list;
  }

  private async readAgents(db: Db): Promise<AgentEntry[]> {
    const result = await db.query<AgentRow & { version: string }>(`SELECT m.agents_version::text AS version, ${AGENT_COLUMNS} FROM mailbox_meta m LEFT JOIN mailbox_agents a ON true ORDER BY a.position`);
    const list = result.rows.filter((r) => r.name !== null).map(agentFromRow);
    this.agentsCache = { version: result.rows[0]?.version ?? '0', list };
    return list;
  }

  private async apply(client: PoolClient, writes: GroupWrites, op: ops.StoreOp): Promise<ops.StoreResult> {
    if (op.kind === 'record') return void this.log(writes, ops.recordEntry(op.agent, op.tool, op.outcome));
    if (op.kind === 'ack') return this.applyAck(client, writes, op.agent, op.id, op.reply);
    if (op.kind === 'fetch') return this.applyFetch(client, writes, op.agent, op.options);
    return this.applySend(client, writes, op.from, op.input);
  }

  private async applySend(client: PoolClient, writes: GroupWrites, from: string, input: SendInput): Promise<SendResult> {
    ops.checkRecipient(this.agentList, input.to);
    const key = input.idempotencyKey;
    if (key !== undefined) {
      const earlier = writes.keyedSend(from, key) ?? (await this.backedSend(client, from, key));
      if (earlier) {
        this.log(writes, ops.dedupEntry(from, { id: earlier.id, to: earlier.to, sent_at: earlier.sent_at }, key));
        return ops.dedupResult(earlier);
      }
    }
    const parent = input.replyTo === undefined ? undefined : ops.receivedOrRefuse(await this.received(client, writes, from, input.replyTo), from, input.replyTo, 'reply_to');
    const sentAt = new Date().toISOString();
    const { message, text, bytes, entry } = ops.prepareSend(from, input, sentAt, parent);
    await this.checkQuota(client, writes, message.to, bytes);
    writes.addMessage(message, text, bytes);
    this.log(writes, entry, sentAt);
    return { id: message.id, to: message.to, sent_at: sentAt, ...(message.thread ? { thread: message.thread } : {}), deduplicated: false };
  }

  private async applyAck(client: PoolClient, writes: GroupWrites, agent: string, id: string, reply: string | undefined): Promise<AckResult> {
    ops.receivedOrRefuse(await this.received(client, writes, agent, id), agent, id, 'message_id');
    if (reply !== undefined) checkWellFormedText(reply, 'The reply');
    const inGroup = writes.ackOf(id);
    const earlier = inGroup?.agent === agent ? inGroup : (await this.acksIn(client, agent, [id])).get(id);
    const sealed = this.log(writes, ops.ackEntry(agent, id, reply, earlier !== undefined));
    if (earlier) return { id, acknowledged_at: earlier.ts, ...(earlier.reply !== undefined ? { reply: earlier.reply } : {}), deduplicated: true };
    return { id, acknowledged_at: sealed.record.ts, ...(reply !== undefined ? { reply } : {}), deduplicated: false };
  }

  /** The message `id` in `agent`'s inbox (this group's sends included), if it is there. */
  private async received(client: PoolClient, writes: GroupWrites, agent: string, id: string): Promise<Message | undefined> {
    await writes.flush(client);
    const row = (await client.query<{ text: string | null }>(`SELECT ${CAPPED_TEXT} AS text FROM mailbox_messages WHERE id = $1 AND recipient = $2`, [id, agent])).rows[0];
    return ops.recordIs(row?.text ?? undefined, id);
  }

  /**
   * The earlier send under this key, from an earlier commit, when its message is
   * stored and a genuine receipt backs it. The row is only a pointer: one written by
   * someone else, or whose message is gone, is replaced when the send is stored.
   */
  private async backedSend(client: PoolClient, from: string, key: string): Promise<Message | undefined> {
    const earlier = (await client.query<ops.IdempotentSend>('SELECT id, recipient AS "to", sent_at FROM mailbox_idempotency WHERE sender = $1 AND key = $2', [from, key])).rows[0];
    return earlier && (await this.backs(client, from, key, earlier));
  }

  /** The earlier send's message, when it is stored and a genuine send receipt backs it (ops.storedDedup, ops.receiptBacks). */
  private async backs(client: PoolClient, from: string, key: string, earlier: ops.IdempotentSend): Promise<Message | undefined> {
    const row = (await client.query<{ text: string }>('SELECT text FROM mailbox_messages WHERE id = $1 AND recipient = $2', [earlier.id, earlier.to])).rows[0];
    const stored = ops.storedDedup(from, key, earlier, row?.text);
    if (!stored) return undefined;
    const calls = await client.query<{ text: string }>(LINES_NAMING, [stored.id]);
    const backed = calls.rows.some((c) => {
      const record = genuineCall(c.text, this.signer);
      return record !== undefined && ops.receiptBacks(record, stored);
    });
    return backed ? stored : undefined;
  }

  /** Refuses a send that would pass the recipient's quota, counting this group's earlier sends (GroupWrites). */
  private async checkQuota(client: PoolClient, writes: GroupWrites, to: string, bytes: number): Promise<void> {
    if (!this.unread.active) return;
    let unread = writes.unreadOf(to);
    if (!unread) {
      unread = await this.unreadInDatabase(client, to);
      writes.setUnread(to, unread);
    }
    checkQuota(this.unread.quota, to, unread, bytes);
  }

  /** What `to` has unread in the database: the cursor and the inbox's end in one round trip, the count from what changed (quota.ts). */
  private async unreadInDatabase(client: PoolClient, to: string): Promise<Count> {
    const row = (
      await client.query<{ cursor: string | null; end: string | null }>('SELECT (SELECT pos FROM mailbox_cursors WHERE agent = $1) AS cursor, (SELECT max(pos) FROM mailbox_messages WHERE recipient = $1) AS end', [to])
    ).rows[0];
    const cursor = Number(row?.cursor ?? 0);
    const end = Number(row?.end ?? cursor);
    const count = async (after: number, upTo: number): Promise<Count> => {
      const r = (
        await client.query<{ messages: string; bytes: string }>(
          'SELECT count(*) AS messages, coalesce(sum(octet_length(text) + 1), 0) AS bytes FROM mailbox_messages WHERE recipient = $1 AND pos > $2 AND pos <= $3',
          [to, after, upTo],
        )
      ).rows[0]!;
      return { messages: Number(r.messages), bytes: Number(r.bytes) };
    };
    return this.unread.unreadAsync(to, cursor, Math.max(end, cursor), count);
  }

  private async applyFetch(client: PoolClient, writes: GroupWrites, agent: string, options: FetchOptions): Promise<Message[]> {
    await writes.flush(client); // a read sees every message sent before it
    if (options.thread !== undefined) return this.applyThreadRead(client, writes, agent, options, options.thread);
    const cursor = await this.cursorOf(client, agent);
    const messages: Message[] = [];
    let skipped = 0;
    let last = cursor.pos;
    while (messages.length < options.limit) {
      const rows = (await client.query<{ pos: string; text: string | null }>(UNREAD, [agent, last, Math.min(PAGE, options.limit - messages.length + 8)])).rows;
      for (const row of rows) {
        const m = ops.parseMessage(row.text ?? undefined);
        if (m) messages.push(m);
        else skipped++; // damaged: skipped, counted in the receipt, and reported by verify
        last = Number(row.pos);
        if (messages.length >= options.limit) break;
      }
      if (rows.length === 0 || messages.length >= options.limit) break;
    }
    if (options.quietIfEmpty && messages.length === 0) return messages;
    this.log(writes, ops.fetchEntry(agent, options.tool, messages, skipped, options.peek));
    if (!options.peek && last !== cursor.pos) {
      writes.forgetUnread(agent);
      await client.query(
        'INSERT INTO mailbox_cursors (agent, pos, delivered, updated_at) VALUES ($1, $2, $3, $4) ON CONFLICT (agent) DO UPDATE SET pos = EXCLUDED.pos, delivered = EXCLUDED.delivered, updated_at = EXCLUDED.updated_at',
        [agent, last, cursor.delivered + messages.length, new Date().toISOString()],
      );
    }
    return messages;
  }

  /** Every message of `agent`'s inbox in one conversation, read or not; a peek (nothing moves). */
  private async applyThreadRead(client: PoolClient, writes: GroupWrites, agent: string, options: FetchOptions, thread: string): Promise<Message[]> {
    const rows = await client.query<{ text: string | null }>(`SELECT ${CAPPED_TEXT} AS text FROM mailbox_messages WHERE recipient = $1 AND strpos(text, $2) > 0 ORDER BY pos`, [agent, thread]);
    const messages: Message[] = [];
    for (const row of rows.rows) {
      const m = ops.parseMessage(row.text ?? undefined);
      if (m && ops.threadOf(m) === thread && messages.length < options.limit) messages.push(m);
    }
    this.log(writes, ops.fetchEntry(agent, options.tool, messages, 0, true));
    return messages;
  }

  private async cursorOf(db: Db, agent: string): Promise<{ pos: number; delivered: number }> {
    const row = (await db.query<{ pos: string; delivered: string }>('SELECT pos, delivered FROM mailbox_cursors WHERE agent = $1', [agent])).rows[0];
    return row ? { pos: Number(row.pos), delivered: Number(row.delivered) } : { pos: 0, delivered: 0 };
  }

  private log(writes: GroupWrites, entry: CallEntry, ts?: string): ReturnType<typeof sealCall> {
    const sealed = sealCall(entry, this.head, this.signer, ts);
    writes.addCall(sealed.record, sealed.text);
    this.head = sealed.head;
    return sealed;
  }
}
