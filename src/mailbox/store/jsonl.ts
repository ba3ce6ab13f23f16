/**
 * @module
 * The default store: plain files any tool can read (mailbox.md §1).
 * `inbox/<agent>.jsonl` (one message per line), `cursors/<agent>.json` (how far the
 * agent has read, as a byte offset) and `calls.jsonl` (the signed call log).
 * Several server processes may share one directory: each commit takes the directory
 * lock (lock.ts), catches up with lines other processes appended, writes each file
 * with ONE `write` per group (O_APPEND: no interleaving; a short write is finished
 * or failed, never taken as whole), fsyncs, and only then answers. A commit that
 * fails (disk full, I/O error) is rolled back to the intent it recorded and answers
 * every caller of its group with the error. A torn last line left by a crash is cut
 * under the lock before appending. Files are read a page at a time (lines.ts).
 */
import { closeSync, fstatSync, mkdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { syncFolder } from '../../core/atomic-write.js';
import { WitnessError } from '../../core/errors.js';
import { genuineCall } from '../call-check.js';
import { type CallEntry, type CallRecord, type Message, messageDigest, sealCall } from '../call-log.js';
import { checkWellFormedText } from '../../core/text.js';
import { type DeliveryStatus, deliveryOf, isAckOf } from './delivery.js';
import type { Signer } from '../../attest/signature.js';
import { DEFAULT_LIMITS } from '../limits.js';
import { acquireLock, type LockHandle } from '../lock.js';
import { type LockIntent, rollBack } from '../rollback.js';
import { CommittingStore } from './committing-store.js';
import { fdatasyncAsync, openInside, READ, writeAll, writeFailure } from './files.js';
import { FolderWatch } from './file-watch.js';
import type { Pending } from './group-commit.js';
import { type Cursor, cursorRel, hasMessageAfter, inboxRel, JsonlFiles, LOG } from './jsonl-files.js';
import { countLines, scanLines } from './lines.js';
import { LogState } from './log-state.js';
import * as ops from './ops.js';
import { type Count, checkQuota, type Quota, UnreadTracker } from './quota.js';
import type { AckResult, FetchOptions, MailboxStore, SendInput, SendResult } from './types.js';

/** What one group commit will write. */
interface Batch {
  inbox: Map<string, string[]>;
  log: string[];
  cursors: Map<string, Cursor>;
  /** Cursors read during this group (each file is read once per group). */
  seen: Map<string, Cursor>;
  /** Lines and bytes this group adds to each inbox, for the quota. */
  pending: Map<string, Count>;
}

type Sealed = ReturnType<typeof sealCall>;

export class JsonlStore extends CommittingStore implements MailboxStore {
  readonly kind = 'jsonl' as const;
  private readonly log = new LogState();
  private readonly files: JsonlFiles;
  private readonly unread: UnreadTracker;
  private readonly inboxWatch: FolderWatch;
  /** Set when a failed commit could not be undone: the lock stays held until this process ends, and recovery finishes the undo. */
  private broken: WitnessError | undefined;

  constructor(dir: string, private readonly signer: Signer, quota: Quota = DEFAULT_LIMITS) {
    super(dir);
    mkdirSync(join(dir, 'inbox'), { recursive: true });
    mkdirSync(join(dir, 'cursors'), { recursive: true });
    this.files = new JsonlFiles(dir);
    this.unread = new UnreadTracker(quota);
    this.inboxWatch = new FolderWatch(join(dir, 'inbox'));
  }

  async hasUnread(agent: string): Promise<boolean> {
    return hasMessageAfter(this.dir, inboxRel(agent), this.files.readCursor(agent).offset);
  }

  /** The log's lines that mention `id`, read without the lock (only whole lines: a write in progress is not one). */
  async status(id: string): Promise<DeliveryStatus | undefined> {
    const fd = openInside(this.dir, LOG, READ);
    if (fd === undefined) return undefined;
    try {
      const mentions: string[] = [];
      scanLines(fd, 0, (line) => {
        if (line.text?.includes(id)) mentions.push(line.text);
      });
      return deliveryOf(id, mentions, this.signer);
    } finally {
      closeSync(fd);
    }
  }

  async acknowledged(agent: string, ids: string[]): Promise<Set<string>> {
    const acked = new Set<string>();
    for (const id of ids) {
      const known = this.log.acks.get(id);
      if (known && this.ackBacks(known, agent, id)) acked.add(id);
    }
    return acked;
  }

  async inboxMark(agent: string): Promise<string> {
    return String(statSync(join(this.dir, inboxRel(agent)), { throwIfNoEntry: false })?.size ?? 0);
  }

  async inboxSince(agent: string, mark: string, limit: number): Promise<{ messages: Message[]; mark: string }> {
    const fd = openInside(this.dir, inboxRel(agent), READ);
    if (fd === undefined) return { messages: [], mark };
    try {
      const messages: Message[] = [];
      const end = scanLines(fd, mark === '' ? this.files.readCursor(agent).offset : Number(mark), (line) => {
        const m = ops.parseMessage(line.text);
        if (m) messages.push(m);
        return messages.length < limit;
      });
      return { messages, mark: String(end) };
    } finally {
      closeSync(fd);
    }
  }

  /** A send to `agent` by any process on this machine changes inbox/<agent>.jsonl: that wakes its waiters here. */
  onMail(wake: (agent: string | undefined) => void): () => void {
    return this.inboxWatch.listen((file) => wake(file?.endsWith('.jsonl') ? file.slice(0, -'.jsonl'.length) : undefined));
  }

  async close(): Promise<void> {
    await this.committer.flushed();
    this.inboxWatch.stop();
    this.files.close();
  }

  protected async commit(group: Pending<ops.StoreOp, ops.StoreResult>[]): Promise<void> {
    if (this.broken) throw this.broken;
    // Taking the lock may first undo a dead writer's commit, which can fail on a full disk too.
    const lock = await acquireLock(this.dir, this.signer).catch((error: unknown) => {
      throw writeFailure(error, this.dir);
    });
    let settle: Array<() => void>;
    try {
      settle = await this.commitLocked(group, lock);
    } catch (error) {
      this.forget(); // our picture of the files may be wrong now: re-read them next time
      if (!this.broken) lock.release();
      throw writeFailure(error, this.dir);
    }
    lock.release();
    for (const s of settle) s(); // only after the lock is released: see lock.ts
  }

  private async commitLocked(group: Pending<ops.StoreOp, ops.StoreResult>[], lock: LockHandle): Promise<Array<() => void>> {
    this.files.newCommit();
    this.agentsNow();
    this.log.catchUp(this.files.fd(LOG));
    const batch: Batch = { inbox: new Map(), log: [], cursors: new Map(), seen: new Map(), pending: new Map() };
    const settle: Array<() => void> = [];
    for (const p of group) {
      try {
        const result = this.apply(p.op, batch);
        settle.push(() => p.resolve(result));
      } catch (error) {
        settle.push(() => p.reject(error));
      }
    }
    const intent = this.intentFor(batch);
    lock.setIntent({ files: intent.files, to: this.log.head.seq }); // if this fails nothing was written yet
    try {
      await this.write(batch);
    } catch (error) {
      this.undo(intent, error);
      throw error;
    }
    return settle;
  }

  /** Rolls a failed write back; if even that fails, keeps the lock so recovery does it after this process ends. */
  private undo(intent: LockIntent, cause: unknown): void {
    try {
      rollBack(this.dir, intent);
    } catch (error) {
      this.broken = new WitnessError('IO', `A failed write to the mailbox ${this.dir} (${(cause as Error).message}) could not be undone (${(error as Error).message}). This server keeps the mailbox locked so that nothing builds on it: stop it, free space or repair the disk, and run \`witness mailbox recover ${this.dir}\`.`, { cause: error });
    }
  }

  /**
   * Applies one operation to the batch. Each adds its lines only once nothing more
   * can throw, so a refused operation leaves nothing in the batch but its failure
   * receipt.
   */
  private apply(op: ops.StoreOp, batch: Batch): ops.StoreResult {
    if (op.kind === 'record') return void this.append(batch, ops.recordEntry(op.agent, op.tool, op.outcome));
    try {
      if (op.kind === 'ack') return this.applyAck(op.agent, op.id, op.reply, batch);
      return op.kind === 'fetch' ? this.applyFetch(op.agent, op.options, batch) : this.applySend(op.from, op.input, batch);
    } catch (error) {
      const failed = ops.failedCall(op, error);
      if (failed) this.append(batch, failed);
      throw error;
    }
  }

  private applySend(from: string, input: SendInput, batch: Batch): SendResult {
    ops.checkRecipient(this.agentList, input.to);
    if (input.idempotencyKey !== undefined) {
      const earlier = this.log.idempotency.get(ops.idempotencyIndexKey(from, input.idempotencyKey));
      // Only a stored message with a genuine receipt makes this a duplicate; a forged
      // or orphaned index entry is passed over and the message stored (it never was).
      const stored = earlier && this.backs(from, input.idempotencyKey, earlier, batch);
      if (earlier && stored) {
        this.append(batch, ops.dedupEntry(from, earlier, input.idempotencyKey));
        return ops.dedupResult(stored);
      }
    }
    const parent = input.replyTo === undefined ? undefined : ops.receivedOrRefuse(this.received(from, input.replyTo, batch), from, input.replyTo, 'reply_to');
    const sentAt = new Date().toISOString();
    const prepared = ops.prepareSend(from, input, sentAt, parent);
    this.checkQuota(batch, input.to, prepared.bytes); // opens the inbox: a planted link fails this send only
    const sealed = this.seal(prepared.entry, sentAt);
    // Nothing below can throw: the message and its receipt join the batch together.
    const { message } = prepared;
    const lines = batch.inbox.get(message.to) ?? [];
    lines.push(prepared.text);
    batch.inbox.set(message.to, lines);
    const pending = batch.pending.get(message.to) ?? { messages: 0, bytes: 0 };
    batch.pending.set(message.to, { messages: pending.messages + 1, bytes: pending.bytes + prepared.bytes });
    this.push(batch, sealed);
    return { id: message.id, to: message.to, sent_at: message.sent_at, ...(message.thread ? { thread: message.thread } : {}), deduplicated: false };
  }

  private applyAck(agent: string, id: string, reply: string | undefined, batch: Batch): AckResult {
    ops.receivedOrRefuse(this.received(agent, id, batch), agent, id, 'message_id');
    if (reply !== undefined) checkWellFormedText(reply, 'The reply');
    const known = this.log.acks.get(id);
    const earlier = known && this.ackBacks(known, agent, id) ? this.earlierAck(known) : undefined;
    const sealed = this.seal(ops.ackEntry(agent, id, reply, earlier !== undefined));
    this.push(batch, sealed);
    if (earlier) return { id, acknowledged_at: earlier.ts, ...(earlier.reply !== undefined ? { reply: earlier.reply } : {}), deduplicated: true };
    return { id, acknowledged_at: sealed.record.ts, ...(reply !== undefined ? { reply } : {}), deduplicated: false };
  }

  /** The message `id` in `agent`'s inbox (this batch's lines, then the file), if it is there. */
  private received(agent: string, id: string, batch: Batch): Message | undefined {
    let found: Message | undefined;
    for (const text of batch.inbox.get(agent) ?? []) found ??= ops.recordIs(text, id);
    if (!found) {
      scanLines(this.files.fd(inboxRel(agent)), 0, (line) => {
        found = ops.recordIs(line.text, id);
        return found?.id !== id;
      });
    }
    return found?.id === id ? found : undefined;
  }

  /** A known ack of `id` is `agent`'s, and genuine: sealed by this process, or its line checked now. */
  private ackBacks(known: ops.KnownAck, agent: string, id: string): boolean {
    if ('sealed' in known) return known.agent === agent;
    const record = this.lineAt(known.at);
    return record !== undefined && isAckOf(record, id) && record.agent === agent;
  }

  private earlierAck(known: ops.KnownAck): { ts: string; reply?: string } | undefined {
    if ('sealed' in known) return known;
    const record = this.lineAt(known.at);
    return record && { ts: record.ts, ...(record.reply !== undefined ? { reply: record.reply } : {}) };
  }

  /** The genuine call record at byte `at` of the log, if it is one. */
  private lineAt(at: number): CallRecord | undefined {
    let text: string | undefined;
    scanLines(this.files.fd(LOG), at, (line) => {
      text = line.text;
      return false;
    });
    return genuineCall(text, this.signer);
  }

  /** The earlier send's message, when it is stored (on disk or in this batch) and its receipt genuine (ops.storedDedup, ops.receiptBacks). */
  private backs(from: string, key: string, earlier: ops.IdempotentSend, batch: Batch): Message | undefined {
    let stored: Message | undefined;
    const find = (text: string | undefined) => {
      if (text?.includes(earlier.id)) stored = ops.storedDedup(from, key, earlier, text);
      return stored === undefined;
    };
    for (const text of batch.inbox.get(earlier.to) ?? []) if (!find(text)) break;
    if (!stored) scanLines(this.files.fd(inboxRel(earlier.to)), 0, (line) => find(line.text));
    const message: Message | undefined = stored;
    if (!message) return undefined;
    if (earlier.digest !== undefined) return earlier.digest === messageDigest(message) ? message : undefined; // sealed by this process
    const record = earlier.at === undefined ? undefined : this.lineAt(earlier.at);
    return record !== undefined && ops.receiptBacks(record, message) ? message : undefined;
  }

  private checkQuota(batch: Batch, to: string, bytes: number): void {
    const fd = this.files.fd(inboxRel(to));
    if (!this.unread.active) return;
    const size = fstatSync(fd).size;
    const stored = this.unread.unread(to, this.cursorOf(batch, to).offset, size, (from, end) => ({ messages: countLines(fd, from, end), bytes: end - from }));
    const pending = batch.pending.get(to) ?? { messages: 0, bytes: 0 };
    checkQuota(this.unread.quota, to, { messages: stored.messages + pending.messages, bytes: stored.bytes + pending.bytes }, bytes);
  }

  private applyFetch(agent: string, options: FetchOptions, batch: Batch): Message[] {
    if (options.thread !== undefined) return this.applyThreadRead(agent, options, options.thread, batch);
    const cursor = this.cursorOf(batch, agent);
    const fd = this.files.fd(inboxRel(agent));
    const messages: Message[] = [];
    let skipped = 0;
    let offset = cursor.offset;
    if (options.limit > 0) {
      scanLines(fd, cursor.offset, (line) => {
        const m = ops.parseMessage(line.text);
        if (m) messages.push(m);
        else skipped++; // damaged: skipped, counted in the receipt, and reported by verify
        offset = line.end;
        return messages.length < options.limit;
      });
    }
    if (options.quietIfEmpty && messages.length === 0) return messages;
    this.append(batch, ops.fetchEntry(agent, options.tool, messages, skipped, options.peek));
    if (!options.peek && offset !== cursor.offset) {
      batch.cursors.set(agent, { offset, delivered: cursor.delivered + messages.length, updated_at: new Date().toISOString() });
    }
    return messages;
  }

  /** Every message of `agent`'s inbox in one conversation, read or not; a peek (nothing moves). */
  private applyThreadRead(agent: string, options: FetchOptions, thread: string, batch: Batch): Message[] {
    const messages: Message[] = [];
    scanLines(this.files.fd(inboxRel(agent)), 0, (line) => {
      const m = line.text?.includes(thread) ? ops.parseMessage(line.text) : undefined;
      if (m && ops.threadOf(m) === thread) messages.push(m);
      return messages.length < options.limit;
    });
    this.append(batch, ops.fetchEntry(agent, options.tool, messages, 0, true));
    return messages;
  }

  private cursorOf(batch: Batch, agent: string): Cursor {
    const moved = batch.cursors.get(agent) ?? batch.seen.get(agent);
    if (moved) return moved;
    const cursor = this.files.readCursor(agent);
    batch.seen.set(agent, cursor);
    return cursor;
  }

  private seal(entry: CallEntry, ts?: string): Sealed {
    return sealCall(entry, this.log.head, this.signer, ts);
  }

  private push(batch: Batch, sealed: Sealed): void {
    batch.log.push(sealed.text);
    this.log.advance(sealed);
  }

  private append(batch: Batch, entry: CallEntry, ts?: string): void {
    this.push(batch, this.seal(entry, ts));
  }

  private intentFor(batch: Batch): LockIntent {
    const files: Record<string, number> = { [LOG]: this.log.size };
    for (const agent of batch.inbox.keys()) files[inboxRel(agent)] = this.files.cleanTail(inboxRel(agent));
    const restore: Record<string, string | null> = {};
    for (const agent of batch.cursors.keys()) restore[cursorRel(agent)] = this.files.cursorText(agent);
    return { files, restore };
  }

  /**
   * Inbox lines first, synced, and only then their receipts: after a power loss a
   * durable receipt always has its durable inbox line, and an inbox line whose
   * receipt did not land is cut on recovery (lock.ts). Cursors move last.
   */
  private async write(batch: Batch): Promise<void> {
    const inboxes: number[] = [];
    for (const [agent, lines] of batch.inbox) {
      const fd = this.files.fd(inboxRel(agent));
      writeAll(fd, Buffer.from(`${lines.join('\n')}\n`));
      inboxes.push(fd);
    }
    // fdatasync: an append's data and new size reach the disk; the mtime may wait.
    // Async, so the event loop reads the next requests meanwhile; all settle before
    // any failure is acted on (a rollback must not race a sync).
    const synced = await Promise.allSettled(inboxes.map(fdatasyncAsync));
    for (const s of synced) if (s.status === 'rejected') throw s.reason;
    if (batch.log.length > 0) {
      const chunk = Buffer.from(`${batch.log.join('\n')}\n`);
      const fd = this.files.fd(LOG);
      writeAll(fd, chunk);
      await fdatasyncAsync(fd);
      this.log.size += chunk.length;
    }
    for (const [agent, cursor] of batch.cursors) this.files.writeCursor(agent, cursor);
    if (batch.cursors.size > 0) syncFolder(join(this.dir, 'cursors'));
  }

  private forget(): void {
    this.log.forget();
    this.unread.forget();
  }
}
