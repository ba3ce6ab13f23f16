/**
 * @module
 * The default store: plain files any tool can read (mailbox.md §1).
 * `inbox/<agent>.jsonl` (one message per line), `cursors/<agent>.json` (how far the
 * agent has read, as a byte offset) and `calls.jsonl` (the signed call log).
 * Several server processes may share one directory: each commit takes the directory
 * lock (lock.ts), catches up with lines other processes appended, writes each file
 * with ONE `write` per group (O_APPEND: no interleaving), fsyncs, and only then
 * answers. A torn last line left by a crash is cut under the lock before appending.
 */
import { closeSync, existsSync, fstatSync, ftruncateSync, mkdirSync, openSync, readFileSync, readSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { WitnessError } from '../../core/errors.js';
import { type CallEntry, type ChainHead, EMPTY_HEAD, lineHash, type Message, sealCall, } from '../call-log.js';
import { syncDir } from '../config.js';
import type { ReceiptSigner } from '../keys.js';
import { acquireLock, type LockIntent, rollBack } from '../lock.js';
import { fdatasyncAsync, fstatSize, readFrom, writeCursor } from './files.js';
import { CommittingStore } from './committing-store.js';
import type { Pending } from './group-commit.js';
import * as ops from './ops.js';
import type { FetchOptions, MailboxStore, } from './types.js';

interface Cursor {
  offset: number;
  delivered: number;
  updated_at: string;
}

/** What one group commit will write. */
interface Batch {
  inbox: Map<string, string[]>;
  log: string[];
  cursors: Map<string, Cursor>;
}

export class JsonlStore extends CommittingStore implements MailboxStore {
  readonly kind = 'jsonl' as const;
  private head: ChainHead = EMPTY_HEAD;
  private logSize = 0;
  private readonly idempotency = new Map<string, ops.IdempotentSend>();
  private readonly fds = new Map<string, number>();

  constructor(dir: string, private readonly signer: ReceiptSigner) {
    super(dir);
    mkdirSync(join(dir, 'inbox'), { recursive: true });
    mkdirSync(join(dir, 'cursors'), { recursive: true });
  }

  hasUnread(agent: string): boolean {
    const inbox = this.inboxPath(agent);
    if (!existsSync(inbox)) return false;
    return fstatSize(inbox) > this.readCursor(agent).offset;
  }

  async close(): Promise<void> {
    await this.committer.flushed();
    for (const fd of this.fds.values()) closeSync(fd);
    this.fds.clear();
  }

  protected async commit(group: Pending<ops.StoreOp, ops.StoreResult>[]): Promise<void> {
    const lock = await acquireLock(this.dir);
    const settle: Array<() => void> = [];
    let intent: LockIntent | undefined;
    try {
      this.agents();
      this.catchUp();
      const batch: Batch = { inbox: new Map(), log: [], cursors: new Map() };
      for (const p of group) {
        try {
          const result = this.apply(p.op, batch);
          settle.push(() => p.resolve(result));
        } catch (error) {
          settle.push(() => p.reject(error));
        }
      }
      intent = this.intentFor(batch);
      lock.setIntent(intent);
      await this.write(batch);
    } catch (error) {
      // A failed write (disk full, I/O error) is undone here, as a crash would be by the next writer.
      if (intent) rollBack(this.dir, intent);
      this.forget(); // our picture of the log may be wrong now: re-read it next time
      throw error;
    } finally {
      lock.release();
    }
    for (const s of settle) s(); // only after the lock is released: see lock.ts
  }

  private apply(op: ops.StoreOp, batch: Batch): ops.StoreResult {
    if (op.kind === 'record') return void this.log(batch, ops.recordEntry(op.agent, op.tool, op.outcome));
    if (op.kind === 'fetch') return this.applyFetch(op.agent, op.options, batch);
    const { from, input } = op;
    try {
      ops.checkRecipient(this.agentList, input.to);
      if (input.idempotencyKey !== undefined) {
        const earlier = this.idempotency.get(ops.idempotencyIndexKey(from, input.idempotencyKey));
        if (earlier) {
          this.log(batch, ops.dedupEntry(from, earlier, input.idempotencyKey));
          return { ...earlier, deduplicated: true };
        }
      }
      const sentAt = new Date().toISOString();
      const message = ops.newMessage(from, input, sentAt);
      const lines = batch.inbox.get(message.to) ?? [];
      lines.push(JSON.stringify(message));
      batch.inbox.set(message.to, lines);
      this.log(batch, ops.sendEntry(message), sentAt);
      return { id: message.id, to: message.to, sent_at: sentAt, deduplicated: false };
    } catch (error) {
      this.log(batch, ops.failureEntry(from, 'send_message', error));
      throw error;
    }
  }

  private applyFetch(agent: string, options: FetchOptions, batch: Batch): Message[] {
    const cursor = batch.cursors.get(agent) ?? this.readCursor(agent);
    const path = this.inboxPath(agent);
    const text = existsSync(path) ? readFrom(path, cursor.offset) : '';
    const messages: Message[] = [];
    let offset = cursor.offset;
    let start = 0;
    while (messages.length < options.limit) {
      const end = text.indexOf('\n', start);
      if (end < 0) break; // a torn tail is not a message
      const raw = text.slice(start, end);
      offset += Buffer.byteLength(raw) + 1;
      start = end + 1;
      try {
        messages.push(JSON.parse(raw) as Message);
      } catch {
        // a damaged line is skipped here and reported by `witness mailbox verify`
      }
    }
    this.log(batch, { agent, tool: options.tool, ok: true, message_ids: messages.map((m) => m.id), ...(options.peek ? { peek: true } : {}) });
    if (!options.peek && offset !== cursor.offset) {
      batch.cursors.set(agent, { offset, delivered: cursor.delivered + messages.length, updated_at: new Date().toISOString() });
    }
    return messages;
  }

  private log(batch: Batch, entry: CallEntry, ts?: string): void {
    const sealed = sealCall(entry, this.head, this.signer, ts);
    batch.log.push(sealed.text);
    this.head = sealed.head;
    ops.learnIdempotency(this.idempotency, sealed.record);
  }

  /** Reads call-log lines other processes appended since our last commit. */
  private catchUp(): void {
    const path = join(this.dir, 'calls.jsonl');
    const fd = this.fd('calls.jsonl');
    let size = fstatSync(fd).size;
    if (size < this.logSize) this.forget(); // shrank under us (a rollback or an edit): start over
    if (size === this.logSize) return;
    const text = readFrom(path, this.logSize);
    const cut = text.lastIndexOf('\n') + 1;
    if (cut < text.length) {
      ftruncateSync(fd, this.logSize + Buffer.byteLength(text.slice(0, cut))); // torn tail of a crashed writer
      size = fstatSync(fd).size;
    }
    for (const raw of text.slice(0, cut).split('\n')) {
      if (raw === '') continue;
      try {
        const record = JSON.parse(raw) as { seq?: number; ts?: string } & Partial<CallEntry>;
        this.head = { seq: typeof record.seq === 'number' ? record.seq : this.head.seq + 1, hash: lineHash(raw) };
        ops.learnIdempotency(this.idempotency, record);
      } catch {
        this.head = { seq: this.head.seq + 1, hash: lineHash(raw) }; // chain over a damaged line as stored
      }
    }
    this.logSize = size;
  }

  private intentFor(batch: Batch): LockIntent {
    const files: Record<string, number> = { 'calls.jsonl': this.logSize };
    for (const agent of batch.inbox.keys()) files[`inbox/${agent}.jsonl`] = this.cleanTail(`inbox/${agent}.jsonl`);
    const restore: Record<string, string | null> = {};
    for (const agent of batch.cursors.keys()) {
      const path = this.cursorPath(agent);
      restore[`cursors/${agent}.json`] = existsSync(path) ? readFileSync(path, 'utf8') : null;
    }
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
      const fd = this.fd(`inbox/${agent}.jsonl`);
      writeSync(fd, `${lines.join('\n')}\n`);
      inboxes.push(fd);
    }
    // fdatasync: an append's data and new size reach the disk; the mtime may wait.
    // Async, so the event loop reads the next requests meanwhile.
    await Promise.all(inboxes.map(fdatasyncAsync));
    if (batch.log.length > 0) {
      const chunk = `${batch.log.join('\n')}\n`;
      const fd = this.fd('calls.jsonl');
      writeSync(fd, chunk);
      this.logSize += Buffer.byteLength(chunk);
      await fdatasyncAsync(fd);
    }
    for (const [agent, cursor] of batch.cursors) writeCursor(this.cursorPath(agent), cursor);
    if (batch.cursors.size > 0) syncDir(join(this.dir, 'cursors'));
  }

  /** Cuts a torn last line (a crash without an intent, e.g. power loss); returns the size. */
  private cleanTail(rel: string): number {
    const fd = this.fd(rel);
    const size = fstatSync(fd).size;
    if (size === 0) return 0;
    const last = Buffer.alloc(1);
    readSync(fd, last, 0, 1, size - 1);
    if (last[0] === 0x0a) return size;
    const text = readFileSync(join(this.dir, rel));
    const keep = text.lastIndexOf(0x0a) + 1;
    ftruncateSync(fd, keep);
    return keep;
  }

  private readCursor(agent: string): Cursor {
    try {
      const c = JSON.parse(readFileSync(this.cursorPath(agent), 'utf8')) as Cursor;
      return typeof c.offset === 'number' ? c : { offset: 0, delivered: 0, updated_at: '' };
    } catch {
      return { offset: 0, delivered: 0, updated_at: '' };
    }
  }

  private forget(): void {
    this.head = EMPTY_HEAD;
    this.logSize = 0;
    this.idempotency.clear();
  }

  private fd(rel: string): number {
    let fd = this.fds.get(rel);
    if (fd === undefined) {
      try {
        fd = openSync(join(this.dir, rel), 'a+', 0o644);
      } catch (cause) {
        throw new WitnessError('IO', `Cannot open ${join(this.dir, rel)}: ${(cause as Error).message}. Check the mailbox folder is writable.`, { cause });
      }
      this.fds.set(rel, fd);
    }
    return fd;
  }

  private inboxPath(agent: string): string {
    return join(this.dir, 'inbox', `${agent}.jsonl`);
  }

  private cursorPath(agent: string): string {
    return join(this.dir, 'cursors', `${agent}.json`);
  }
}
