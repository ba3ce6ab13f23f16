/**
 * @module
 * The default store's driver: plain files any tool can read (mailbox.md §1).
 * `inbox/<agent>.jsonl` (one message per line), `cursors/<agent>.json` (how far the
 * agent has read, as a byte offset) and `calls.jsonl` (the signed call log).
 * Several server processes may share one directory: each commit takes the directory
 * lock (lock.ts), catches up with lines other processes appended, writes each file
 * with ONE `write` per group (O_APPEND: no interleaving; a short write is finished
 * or failed, never taken as whole), fsyncs, and only then answers. A commit that
 * fails (disk full, I/O error) is rolled back to the intent it recorded and answers
 * every caller of its group with the error. A torn last line left by a crash is cut
 * under the lock before appending. Files are read a page at a time (lines.ts).
 * What a send or a read means is the engine's (engine.ts).
 */
import { closeSync, fdatasyncSync, fstatSync, mkdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Signer } from '../../../attest/signature.js';
import { syncFolder } from '../../../core/atomic-write.js';
import { WitnessError } from '../../../core/errors.js';
import { genuineCall } from '../../call-check.js';
import type { CallRecord } from '../../call-log.js';
import { DEFAULT_LIMITS } from '../../limits.js';
import { acquireLock, type LockHandle } from './lock.js';
import { type LockIntent, rollBack } from './rollback.js';
import { AgentsFile } from '../agents-file.js';
import { isAckOf } from '../delivery.js';
import type { ReadCursor, Sealed, StoreDriver, StoredRow, StoreTx } from '../driver.js';
import { MailboxEngine } from '../engine.js';
import { FolderWatch } from '../file-watch.js';
import { openInside, READ, writeAll, writeFailure } from '../files.js';
import { type Cursor, cursorRel, inboxRel, JsonlFiles, LOG } from './files.js';
import { countLines, scanLines } from '../lines.js';
import { LogState } from './log-state.js';
import * as ops from '../ops.js';
import { type Count, type Quota, UnreadTracker } from '../quota.js';

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

/** The JSONL store: the engine over files. */
export class JsonlStore extends MailboxEngine {
  constructor(dir: string, signer: Signer, quota: Quota = DEFAULT_LIMITS) {
    super(new JsonlDriver(dir, signer, quota), signer, quota);
  }
}

export class JsonlDriver implements StoreDriver {
  readonly kind = 'jsonl' as const;
  private readonly log = new LogState();
  private readonly files: JsonlFiles;
  private readonly unreadTracker: UnreadTracker;
  private readonly inboxWatch: FolderWatch;
  private readonly agentsFile: AgentsFile;
  /** Set when a failed commit could not be undone: the lock stays held until this process ends, and recovery finishes the undo. */
  private broken: WitnessError | undefined;

  constructor(
    readonly dir: string,
    private readonly signer: Signer,
    quota: Quota,
  ) {
    mkdirSync(join(dir, 'inbox'), { recursive: true });
    mkdirSync(join(dir, 'cursors'), { recursive: true });
    this.files = new JsonlFiles(dir);
    this.unreadTracker = new UnreadTracker(quota);
    this.inboxWatch = new FolderWatch(join(dir, 'inbox'));
    this.agentsFile = new AgentsFile(dir);
  }

  async agents() {
    return this.agentsFile.now();
  }

  failsGroup(): boolean {
    return false; // any error of one operation is that operation's: it gets a failure receipt
  }

  cursor(agent: string): ReadCursor {
    const c = this.files.readCursor(agent);
    return { pos: c.offset, delivered: c.delivered };
  }

  /** Only whole lines: a write in progress is not one. */
  readAfter(agent: string, after: number, want: number): StoredRow[] {
    return _reading(this.dir, inboxRel(agent), (fd) => _rowsAfter(fd, after, want));
  }

  /** The log's lines that mention `id`, read without the lock. */
  linesNaming(id: string): string[] {
    return _reading(this.dir, LOG, (fd) => _linesNaming(fd, id)) ?? [];
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

  /** A send to `agent` by any process on this machine changes inbox/<agent>.jsonl: that wakes its waiters here. */
  onMail(wake: (agent: string | undefined) => void): () => void {
    return this.inboxWatch.listen((file) =>
      wake(file?.endsWith('.jsonl') ? file.slice(0, -'.jsonl'.length) : undefined),
    );
  }

  async close(): Promise<void> {
    this.inboxWatch.stop();
    this.files.close();
  }

  async group(run: (tx: StoreTx) => Promise<void>): Promise<void> {
    if (this.broken) throw this.broken;
    // Taking the lock may first undo a dead writer's commit, which can fail on a full disk too.
    const lock = await acquireLock(this.dir, this.signer).catch((error: unknown) => {
      throw writeFailure(error, this.dir);
    });
    try {
      await this.groupLocked(run, lock);
    } catch (error) {
      this.forget(); // our picture of the files may be wrong now: re-read them next time
      if (!this.broken) lock.release();
      throw writeFailure(error, this.dir);
    }
    lock.release(); // the engine answers only after this: see lock.ts
  }

  private async groupLocked(run: (tx: StoreTx) => Promise<void>, lock: LockHandle): Promise<void> {
    this.files.newCommit();
    const agents = this.agentsFile.now();
    this.log.catchUp(this.files.fd(LOG));
    const batch: Batch = { inbox: new Map(), log: [], cursors: new Map(), seen: new Map(), pending: new Map() };
    await run(new _JsonlTx(this, batch, agents));
    const intent = this.intentFor(batch);
    lock.setIntent({ files: intent.files, to: this.log.head.seq }); // if this fails nothing was written yet
    try {
      await this.write(batch);
    } catch (error) {
      this.undo(intent, error);
      throw error;
    }
  }

  /** Rolls a failed write back; if even that fails, keeps the lock so recovery does it after this process ends. */
  private undo(intent: LockIntent, cause: unknown): void {
    try {
      rollBack(this.dir, intent);
    } catch (error) {
      this.broken = new WitnessError(
        'IO',
        `A failed write to the mailbox ${this.dir} (${(cause as Error).message}) could not be undone (${(error as Error).message}). This server keeps the mailbox locked so that nothing builds on it: stop it, free space or repair the disk, and run \`witness mailbox recover ${this.dir}\`.`,
        { cause: error },
      );
    }
  }

  /** @internal for the group's view (_JsonlTx) */
  get state() {
    return { log: this.log, files: this.files, unread: this.unreadTracker };
  }

  /** A known ack of `id` is `agent`'s, and genuine: sealed by this process, or its line checked now. */
  ackBacks(known: ops.KnownAck, agent: string, id: string): boolean {
    if ('sealed' in known) return known.agent === agent;
    const record = this.lineAt(known.at);
    return record !== undefined && isAckOf(record, id) && record.agent === agent;
  }

  /** The text of the call-log line at byte `at`. */
  lineTextAt(at: number): string | undefined {
    let text: string | undefined;
    scanLines(this.files.fd(LOG), at, (line) => {
      text = line.text;
      return false;
    });
    return text;
  }

  /** The genuine call record at byte `at` of the log, if it is one. */
  lineAt(at: number): CallRecord | undefined {
    return genuineCall(this.lineTextAt(at), this.signer);
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
    // Synchronous, as SQLite's commit is: the loop waits for the disk (~0.3 ms here),
    // and the requests that came meanwhile are read at once and join the next group.
    // Through the thread pool each sync cost a hand-off both ways and each request a
    // wake-up of its own: ~20% more server CPU per send and ~15% fewer sends
    // (bench/mailbox-ab.ts). A failed sync throws before anything else is written.
    for (const fd of inboxes) fdatasyncSync(fd);
    if (batch.log.length > 0) {
      const chunk = Buffer.from(`${batch.log.join('\n')}\n`);
      const fd = this.files.fd(LOG);
      writeAll(fd, chunk);
      fdatasyncSync(fd);
      this.log.size += chunk.length;
    }
    for (const [agent, cursor] of batch.cursors) this.files.writeCursor(agent, cursor);
    if (batch.cursors.size > 0) syncFolder(join(this.dir, 'cursors'));
  }

  private forget(): void {
    this.log.forget();
    this.unreadTracker.forget();
  }
}

/** One group's view: the files as of the lock, plus this batch's lines. */
class _JsonlTx implements StoreTx {
  readonly head;

  constructor(
    private readonly driver: JsonlDriver,
    private readonly batch: Batch,
    readonly agents: ReturnType<AgentsFile['now']>,
  ) {
    this.head = driver.state.log.head;
  }

  private get files() {
    return this.driver.state.files;
  }

  cursor(agent: string): ReadCursor {
    const c = this.cursorOf(agent);
    return { pos: c.offset, delivered: c.delivered };
  }

  private cursorOf(agent: string): Cursor {
    const moved = this.batch.cursors.get(agent) ?? this.batch.seen.get(agent);
    if (moved) return moved;
    const cursor = this.files.readCursor(agent);
    this.batch.seen.set(agent, cursor);
    return cursor;
  }

  readAfter(agent: string, after: number, want: number): StoredRow[] {
    return _rowsAfter(this.files.fd(inboxRel(agent)), after, want);
  }

  readMatching(agent: string, needle: string, after: number, want: number): StoredRow[] {
    const rows: StoredRow[] = [];
    scanLines(this.files.fd(inboxRel(agent)), after, (line) => {
      if (line.text?.includes(needle)) rows.push({ pos: line.end, text: line.text });
      return rows.length < want;
    });
    return rows;
  }

  linesNaming(id: string): string[] {
    return [..._linesNaming(this.files.fd(LOG), id), ...this.batch.log.filter((text) => text.includes(id))];
  }

  keyedSend(from: string, key: string): ops.IdempotentSend | undefined {
    return this.driver.state.log.idempotency.get(ops.idempotencyIndexKey(from, key));
  }

  /** This batch's lines first (not yet at any position of the file), then the file. */
  findRecord(agent: string, id: string): StoredRow | undefined {
    for (const text of this.batch.inbox.get(agent) ?? [])
      if (ops.recordIs(text, id)?.id === id) return { pos: Number.POSITIVE_INFINITY, text };
    let found: StoredRow | undefined;
    scanLines(this.files.fd(inboxRel(agent)), 0, (line) => {
      if (ops.recordIs(line.text, id)?.id === id) found = { pos: line.end, text: line.text };
      return found === undefined;
    });
    return found;
  }

  receiptLines(earlier: ops.IdempotentSend): string[] {
    const text = earlier.at === undefined ? undefined : this.driver.lineTextAt(earlier.at);
    return text === undefined ? [] : [text];
  }

  earlierAck(agent: string, id: string): { ts: string; reply?: string } | undefined {
    const known = this.driver.state.log.acks.get(id);
    if (!known || !this.driver.ackBacks(known, agent, id)) return undefined;
    if ('sealed' in known) return known;
    const record = this.driver.lineAt(known.at);
    return record && { ts: record.ts, ...(record.reply !== undefined ? { reply: record.reply } : {}) };
  }

  unread(to: string): Count {
    const fd = this.files.fd(inboxRel(to));
    const size = fstatSync(fd).size;
    const stored = this.driver.state.unread.unread(to, this.cursorOf(to).offset, size, (from, end) => ({
      messages: countLines(fd, from, end),
      bytes: end - from,
    }));
    const pending = this.batch.pending.get(to) ?? { messages: 0, bytes: 0 };
    return { messages: stored.messages + pending.messages, bytes: stored.bytes + pending.bytes };
  }

  addMessage(prepared: ops.PreparedSend): void {
    const to = prepared.message.to;
    this.files.fd(inboxRel(to)); // opens the inbox: a planted link fails this send only, before anything is kept
    const lines = this.batch.inbox.get(to) ?? [];
    lines.push(prepared.text);
    this.batch.inbox.set(to, lines);
    const pending = this.batch.pending.get(to) ?? { messages: 0, bytes: 0 };
    this.batch.pending.set(to, { messages: pending.messages + 1, bytes: pending.bytes + prepared.bytes });
  }

  addCall(sealed: Sealed): void {
    this.batch.log.push(sealed.text);
    this.driver.state.log.advance(sealed);
  }

  moveCursor(agent: string, cursor: ReadCursor): void {
    this.batch.cursors.set(agent, {
      offset: cursor.pos,
      delivered: cursor.delivered,
      updated_at: new Date().toISOString(),
    });
  }
}

function _rowsAfter(fd: number, after: number, want: number): StoredRow[] {
  const rows: StoredRow[] = [];
  scanLines(fd, after, (line) => {
    rows.push({ pos: line.end, text: line.text });
    return rows.length < want;
  });
  return rows;
}

function _linesNaming(fd: number, id: string): string[] {
  const mentions: string[] = [];
  scanLines(fd, 0, (line) => {
    if (line.text?.includes(id)) mentions.push(line.text);
  });
  return mentions;
}

/** Runs `read` on a read-only descriptor of a mailbox file; an absent file reads as nothing. */
function _reading<T>(dir: string, rel: string, read: (fd: number) => T[]): T[] {
  const fd = openInside(dir, rel, READ);
  if (fd === undefined) return [];
  try {
    return read(fd);
  } finally {
    closeSync(fd);
  }
}
