/**
 * @module
 * What one group commit of the PostgreSQL store writes, kept until the group ends
 * and then sent as one multi-row INSERT per table (arrays through `unnest`), plus one
 * notification per recipient — a handful of round trips per group instead of
 * several per send. Sends of the group are counted against their recipient's quota
 * here, and its keyed sends answer retries within the same group. A read in the
 * group flushes first, so it sees every message sent before it.
 */
import type { PoolClient } from 'pg';
import type { CallRecord, Message } from '../../call-log.js';
import { isAckOf } from '../delivery.js';
import { idempotencyIndexKey } from '../ops.js';
import { MAIL_CHANNEL } from './db.js';
import type { Count } from '../quota.js';

export class GroupWrites {
  private messages = { id: [] as string[], recipient: [] as string[], text: [] as string[] };
  private calls = { seq: [] as number[], text: [] as string[] };
  /** This group's first acknowledgements, by message id. */
  private readonly acks = new Map<string, { agent: string; ts: string; reply?: string }>();
  private keys = {
    sender: [] as string[],
    key: [] as string[],
    id: [] as string[],
    recipient: [] as string[],
    sentAt: [] as string[],
  };
  private readonly recipients = new Set<string>();
  /** This group's keyed sends, by sender and key: sealed here, so a retry needs no receipt check. */
  private readonly keyed = new Map<string, Message>();
  /** Unread mail per recipient as of now: the database's at first use, plus this group's sends. */
  private readonly unread = new Map<string, Count>();

  addMessage(message: Message, text: string, bytes: number): void {
    this.messages.id.push(message.id);
    this.messages.recipient.push(message.to);
    this.messages.text.push(text);
    this.recipients.add(message.to);
    const unread = this.unread.get(message.to);
    if (unread) this.unread.set(message.to, { messages: unread.messages + 1, bytes: unread.bytes + bytes });
    if (message.idempotency_key === undefined) return;
    this.keyed.set(idempotencyIndexKey(message.from, message.idempotency_key), message);
    for (const [column, value] of [
      ['sender', message.from],
      ['key', message.idempotency_key],
      ['id', message.id],
      ['recipient', message.to],
      ['sentAt', message.sent_at],
    ] as const)
      this.keys[column].push(value);
  }

  addCall(record: CallRecord, text: string): void {
    this.calls.seq.push(record.seq);
    this.calls.text.push(text);
    if (isAckOf(record, record.message_ids[0] ?? ''))
      this.acks.set(record.message_ids[0]!, {
        agent: record.agent,
        ts: record.ts,
        ...(record.reply !== undefined ? { reply: record.reply } : {}),
      });
  }

  /** An acknowledgement of `id` made in this group. */
  ackOf(id: string): { agent: string; ts: string; reply?: string } | undefined {
    return this.acks.get(id);
  }

  keyedSend(from: string, key: string): Message | undefined {
    return this.keyed.get(idempotencyIndexKey(from, key));
  }

  unreadOf(agent: string): Count | undefined {
    return this.unread.get(agent);
  }

  setUnread(agent: string, count: Count): void {
    this.unread.set(agent, count);
  }

  /** A read moved `agent`'s cursor: its unread count is read again when next needed. */
  forgetUnread(agent: string): void {
    this.unread.delete(agent);
  }

  /** Writes what is kept, in order (messages get their positions in send order). */
  async flush(client: PoolClient): Promise<void> {
    if (this.messages.id.length > 0) {
      await client.query(
        'INSERT INTO mailbox_messages (id, recipient, text) SELECT id, recipient, text FROM unnest($1::text[], $2::text[], $3::text[]) WITH ORDINALITY AS m(id, recipient, text, n) ORDER BY n',
        [this.messages.id, this.messages.recipient, this.messages.text],
      );
      this.messages = { id: [], recipient: [], text: [] };
    }
    if (this.keys.sender.length > 0) {
      await client.query(
        'INSERT INTO mailbox_idempotency (sender, key, id, recipient, sent_at) SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[]) ON CONFLICT (sender, key) DO UPDATE SET id = EXCLUDED.id, recipient = EXCLUDED.recipient, sent_at = EXCLUDED.sent_at',
        [this.keys.sender, this.keys.key, this.keys.id, this.keys.recipient, this.keys.sentAt],
      );
      this.keys = { sender: [], key: [], id: [], recipient: [], sentAt: [] };
    }
    if (this.calls.seq.length > 0) {
      await client.query('INSERT INTO mailbox_calls (seq, text) SELECT * FROM unnest($1::bigint[], $2::text[])', [
        this.calls.seq,
        this.calls.text,
      ]);
      this.calls = { seq: [], text: [] };
    }
  }

  /** Flushes, and tells every listening process of the new mail — delivered when the transaction commits, not before. */
  async finish(client: PoolClient): Promise<void> {
    await this.flush(client);
    if (this.recipients.size > 0)
      await client.query('SELECT pg_notify($1, r) FROM unnest($2::text[]) AS r', [MAIL_CHANNEL, [...this.recipients]]);
  }
}
