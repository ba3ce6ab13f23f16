/**
 * @module
 * The mailbox store's algorithm, written once over a driver (driver.ts): a send
 * (known recipient, idempotency, quota, the message and its receipt), a read (unread
 * mail or one thread), an acknowledgement (with its reply), a record of any other
 * call, and a message's status. Operations are funnelled through one group committer
 * (group-commit.ts), so concurrent calls share the driver's lock and its fsync or
 * transaction. Each operation makes every check BEFORE it adds anything: a refused
 * one leaves nothing in the group but its failure receipt, on every driver.
 */
import type { Signer } from '../../attest/signature.js';
import { WitnessError } from '../../core/errors.js';
import { checkWellFormedText } from '../../core/text.js';
import { genuineCall } from '../call-check.js';
import {
  type CallEntry,
  type ChainHead,
  type Message,
  messageDigest,
  READ_TOOLS,
  sealCall,
  type ToolName,
} from '../call-log.js';
import type { AgentEntry } from '../config.js';
import type { SendRate } from '../limits.js';
import { type DeliveryStatus, deliveryOf } from './delivery.js';
import type { Sealed, StoreDriver, StoreReads, StoredRow, StoreTx } from './driver.js';
import { GroupCommitter, type Pending } from './group-commit.js';
import * as ops from './ops.js';
import { checkQuota, type Quota } from './quota.js';
import type { AckResult, CallOutcome, FetchOptions, MailboxStore, SendInput, SendResult } from './types.js';

/** Records read per round trip when a read cannot say how many it needs (damaged records are passed over). */
const PAGE = 256;

export class MailboxEngine implements MailboxStore {
  private readonly committer = new GroupCommitter<ops.StoreOp, ops.StoreResult>((group) => this.commit(group));
  private readonly receiptListeners = new Set<(count: number) => void>();

  constructor(
    protected readonly driver: StoreDriver,
    private readonly signer: Signer,
    private readonly quota: Quota,
  ) {}

  get kind() {
    return this.driver.kind;
  }

  get dir(): string {
    return this.driver.dir;
  }

  get pollMs(): number | undefined {
    return this.driver.pollMs;
  }

  agents(): Promise<AgentEntry[]> {
    return this.driver.agents();
  }

  send(from: string, input: SendInput): Promise<SendResult> {
    return this.committer.submit({ kind: 'send', from, input }) as Promise<SendResult>;
  }

  fetch(agent: string, options: FetchOptions): Promise<Message[]> {
    return this.committer.submit({ kind: 'fetch', agent, options }) as Promise<Message[]>;
  }

  ack(agent: string, id: string, reply?: string): Promise<AckResult> {
    return this.committer.submit({
      kind: 'ack',
      agent,
      id,
      ...(reply !== undefined ? { reply } : {}),
    }) as Promise<AckResult>;
  }

  async record(agent: string, tool: ToolName, outcome: CallOutcome): Promise<void> {
    await this.committer.submit({ kind: 'record', agent, tool, outcome });
  }

  /**
   * A message's delivery state from the call log's genuine receipts. With `asker`,
   * only a message it sent or received has one: the access check comes before any
   * signature is checked, so another pair's real id costs what a made-up one does.
   */
  status(id: string, asker?: string): Promise<DeliveryStatus | undefined> {
    return this.reading(async () => deliveryOf(id, await this.driver.linesNaming(id), this.signer, asker));
  }

  acknowledged(agent: string, ids: string[]): Promise<Set<string>> {
    return this.driver.acknowledged(agent, ids);
  }

  inboxMark(agent: string): Promise<string> {
    return this.driver.inboxMark(agent);
  }

  /** Counts only complete, readable records: a waiter polling this never fetches for nothing. */
  hasUnread(agent: string): Promise<boolean> {
    return this.reading(async () => {
      const cursor = await this.driver.cursor(agent);
      return (await _unreadAfter(this.driver, agent, cursor.pos, 1)).messages.length > 0;
    });
  }

  inboxSince(agent: string, mark: string, limit: number): Promise<{ messages: Message[]; mark: string }> {
    return this.reading(async () => {
      const after = mark === '' ? (await this.driver.cursor(agent)).pos : Number(mark);
      const { messages, last } = await _unreadAfter(this.driver, agent, after, limit);
      return { messages, mark: String(last) };
    });
  }

  onMail(wake: (agent: string | undefined) => void): () => void {
    return this.driver.onMail ? this.driver.onMail(wake) : () => {};
  }

  onReceipts(listener: (count: number) => void): () => void {
    this.receiptListeners.add(listener);
    return () => this.receiptListeners.delete(listener);
  }

  sendRate(perMinute: number): SendRate | undefined {
    return this.driver.sendRate?.(perMinute); // undefined: one bucket per agent in this process (server.ts)
  }

  async close(): Promise<void> {
    await this.committer.flushed();
    await this.driver.close();
  }

  private reading<T>(work: () => Promise<T>): Promise<T> {
    return this.driver.reading ? this.driver.reading(work()) : work();
  }

  /** Applies a group in one driver commit; answers each operation only once the commit is durable. */
  private async commit(group: Pending<ops.StoreOp, ops.StoreResult>[]): Promise<void> {
    const settle: Array<() => void> = [];
    let chain: _Chain | undefined;
    await this.driver.group(async (tx) => {
      settle.length = 0;
      chain = new _Chain(tx, this.signer);
      for (const p of group) {
        try {
          const result = await this.apply(tx, chain, p.op);
          settle.push(() => p.resolve(result));
        } catch (error) {
          if (this.driver.failsGroup(error)) throw error;
          const failed = ops.failedCall(p.op, error);
          if (failed) await chain.append(failed);
          settle.push(() => p.reject(error));
        }
      }
    });
    for (const s of settle) s();
    const appended = chain?.appended ?? 0;
    if (appended === 0) return;
    for (const listener of this.receiptListeners) {
      try {
        listener(appended);
      } catch {
        // The commit is durable and answered: a listener's failure is its own, never the commit's.
      }
    }
  }

  private apply(tx: StoreTx, chain: _Chain, op: ops.StoreOp): Promise<ops.StoreResult> {
    if (op.kind === 'record') return chain.append(ops.recordEntry(op.agent, op.tool, op.outcome)).then(() => undefined);
    if (op.kind === 'ack') return this.applyAck(tx, chain, op.agent, op.id, op.reply);
    if (op.kind === 'fetch')
      return op.options.thread !== undefined
        ? this.applyThreadRead(tx, chain, op.agent, op.options, op.options.thread)
        : this.applyFetch(tx, chain, op.agent, op.options);
    return this.applySend(tx, chain, op.from, op.input);
  }

  private async applySend(tx: StoreTx, chain: _Chain, from: string, input: SendInput): Promise<SendResult> {
    ops.checkRecipient(tx.agents, input.to);
    if (input.idempotencyKey !== undefined) {
      const earlier = await tx.keyedSend(from, input.idempotencyKey);
      // Only a stored message with a genuine receipt makes this a duplicate; a forged
      // or orphaned index entry is passed over and the message stored (it never was).
      const stored = earlier && (await this.backs(tx, from, input.idempotencyKey, earlier));
      if (earlier && stored) {
        await chain.append(ops.dedupEntry(from, earlier, input.idempotencyKey));
        return ops.dedupResult(stored);
      }
    }
    const parent =
      input.replyTo === undefined
        ? undefined
        : ops.receivedOrRefuse(await this.received(tx, from, input.replyTo), from, input.replyTo, 'reply_to');
    const sentAt = new Date().toISOString();
    const prepared = ops.prepareSend(from, input, sentAt, parent);
    if (this.quota.maxUnreadMessages > 0 || this.quota.maxUnreadBytes > 0)
      checkQuota(this.quota, input.to, await tx.unread(input.to), prepared.bytes);
    const sealed = chain.seal(prepared.entry, sentAt);
    // Nothing below can throw a refusal: the message and its receipt join the group together.
    await tx.addMessage(prepared);
    await chain.add(sealed);
    const { message } = prepared;
    return {
      id: message.id,
      to: message.to,
      sent_at: message.sent_at,
      ...(message.thread ? { thread: message.thread } : {}),
      deduplicated: false,
    };
  }

  /** The earlier send's message, when it is stored and its receipt genuine (ops.storedDedup, ops.receiptBacks). */
  private async backs(
    tx: StoreTx,
    from: string,
    key: string,
    earlier: ops.IdempotentSend,
  ): Promise<Message | undefined> {
    const row = await tx.findRecord(earlier.to, earlier.id);
    const stored = ops.storedDedup(from, key, earlier, row?.text);
    if (!stored) return undefined;
    if (earlier.digest !== undefined) return earlier.digest === messageDigest(stored) ? stored : undefined; // sealed by this process
    for (const text of await tx.receiptLines(earlier)) {
      const record = genuineCall(text, this.signer);
      if (record && ops.receiptBacks(record, stored)) return stored;
    }
    return undefined;
  }

  private async received(tx: StoreTx, agent: string, id: string): Promise<Message | undefined> {
    return ops.recordIs((await tx.findRecord(agent, id))?.text, id);
  }

  private async applyAck(
    tx: StoreTx,
    chain: _Chain,
    agent: string,
    id: string,
    reply: string | undefined,
  ): Promise<AckResult> {
    const row = await tx.findRecord(agent, id);
    ops.receivedOrRefuse(ops.recordIs(row?.text, id), agent, id, 'message_id');
    if (reply !== undefined) checkWellFormedText(reply, 'The reply');
    if (!(await this.wasRead(tx, agent, id, row!.pos))) {
      throw new WitnessError(
        'USAGE',
        `message_id ${JSON.stringify(id)} has not been read yet: acknowledge a message only after reading it. Call check_inbox (or wait_for_message) first, then ack_message.`,
      );
    }
    const earlier = await tx.earlierAck(agent, id);
    const sealed = await chain.append(ops.ackEntry(agent, id, reply, earlier !== undefined));
    if (earlier)
      return {
        id,
        acknowledged_at: earlier.ts,
        ...(earlier.reply !== undefined ? { reply: earlier.reply } : {}),
        deduplicated: true,
      };
    return { id, acknowledged_at: sealed.record.ts, ...(reply !== undefined ? { reply } : {}), deduplicated: false };
  }

  /**
   * Was message `id` (at inbox position `pos`) shown to `agent`? Behind its read
   * cursor it was (only a read receipt moves the cursor); otherwise a genuine read
   * receipt of the agent's must name it (a peek, a thread read, a push).
   */
  private async wasRead(tx: StoreTx, agent: string, id: string, pos: number): Promise<boolean> {
    if (pos <= (await tx.cursor(agent)).pos) return true;
    for (const text of await tx.linesNaming(id)) {
      if (!text.includes(id)) continue;
      const r = genuineCall(text, this.signer);
      if (r?.ok && r.agent === agent && READ_TOOLS.includes(r.tool) && r.message_ids.includes(id)) return true;
    }
    return false;
  }

  private async applyFetch(tx: StoreTx, chain: _Chain, agent: string, options: FetchOptions): Promise<Message[]> {
    const cursor = await tx.cursor(agent);
    const { messages, skipped, last } =
      options.limit > 0
        ? await _unreadAfter(tx, agent, cursor.pos, options.limit)
        : { messages: [], skipped: 0, last: cursor.pos };
    if (options.quietIfEmpty && messages.length === 0) return messages;
    await chain.append(ops.fetchEntry(agent, options.tool, messages, skipped, options.peek));
    if (!options.peek && last !== cursor.pos)
      await tx.moveCursor(agent, { pos: last, delivered: cursor.delivered + messages.length });
    return messages;
  }

  /** Every message of `agent`'s inbox in one conversation, read or not; a peek (nothing moves). */
  private async applyThreadRead(
    tx: StoreTx,
    chain: _Chain,
    agent: string,
    options: FetchOptions,
    thread: string,
  ): Promise<Message[]> {
    const messages: Message[] = [];
    for (let after = 0; messages.length < options.limit; ) {
      const rows = await tx.readMatching(agent, thread, after, PAGE);
      for (const row of rows) {
        const m = ops.parseMessage(row.text);
        if (m && ops.threadOf(m) === thread && messages.length < options.limit) messages.push(m);
        after = row.pos;
      }
      if (rows.length < PAGE) break;
    }
    await chain.append(ops.fetchEntry(agent, options.tool, messages, 0, true));
    return messages;
  }
}

/**
 * Up to `limit` readable messages after `after`, the damaged records passed over
 * (counted: a read's receipt says how many), and the position of the last record looked at.
 */
async function _unreadAfter(
  reads: StoreReads,
  agent: string,
  after: number,
  limit: number,
): Promise<{ messages: Message[]; skipped: number; last: number }> {
  const messages: Message[] = [];
  let skipped = 0;
  let last = after;
  for (;;) {
    const want = Math.min(PAGE, limit - messages.length + 8);
    const rows: StoredRow[] = await reads.readAfter(agent, last, want);
    for (const row of rows) {
      const m = ops.parseMessage(row.text);
      if (m) messages.push(m);
      else skipped++; // damaged: skipped, counted in the receipt, and reported by verify
      last = row.pos;
      if (messages.length >= limit) return { messages, skipped, last };
    }
    if (rows.length < want) return { messages, skipped, last };
  }
}

/** The group's call-log lines: each sealed after the one before, starting from the driver's head. */
class _Chain {
  private head: ChainHead;
  /** Lines added to the call log in this commit. */
  appended = 0;

  constructor(
    private readonly tx: StoreTx,
    private readonly signer: Signer,
  ) {
    this.head = tx.head;
  }

  seal(entry: CallEntry, ts?: string): Sealed {
    return sealCall(entry, this.head, this.signer, ts);
  }

  async add(sealed: Sealed): Promise<void> {
    await this.tx.addCall(sealed);
    this.head = sealed.head;
    this.appended++;
  }

  async append(entry: CallEntry, ts?: string): Promise<Sealed> {
    const sealed = this.seal(entry, ts);
    await this.add(sealed);
    return sealed;
  }
}
