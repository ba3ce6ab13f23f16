/**
 * @module
 * The mailbox page's data: a mailbox folder (JSONL, SQLite or PostgreSQL), followed
 * live. Messages come from the store's own follower (the one `witness mailbox tail`
 * uses, store-kinds.ts), new call-log lines from the reader the witness submitter uses;
 * when the log grows, each shown message's delivery state is derived again by
 * `deliveryOf` (what `message_status` answers), the verdict is `verifyMailbox`'s (what
 * `witness mailbox verify --witness` reports for every witness the servers submit to)
 * and the newest witnessed checkpoint is `findWitnessed`'s. The viewer decides nothing:
 * it shows what those functions return.
 */
import { existsSync } from 'node:fs';
import { ed25519Verifier, signerFor, type Verifier } from '../attest/signature.js';
import type { Message } from '../mailbox/call-log.js';
import type { CallLogReader } from '../mailbox/call-log-reader.js';
import { mailboxOrigin, mailboxVerifierKey } from '../mailbox/checkpoint.js';
import { type AgentEntry, loadKey, type MailboxConfig, readAgents, readConfig } from '../mailbox/config.js';
import { openEvidence } from '../mailbox/evidence.js';
import { type DeliveryStatus, deliveryOf } from '../mailbox/store/delivery.js';
import { type Follower, storeKind } from '../mailbox/store-kinds.js';
import { type VerifyReport, verifyMailbox } from '../mailbox/verify.js';
import { findWitnessed } from '../mailbox/verify-witness.js';
import { listWitnessed } from '../mailbox/witnessed.js';

/** Messages kept for the page, newest last; older ones are counted, not shown. */
export const MAX_SHOWN_MESSAGES = 5000;
/** Messages read from the follower per poll (tail's page). */
const PER_POLL = 1000;
/**
 * How long a new message with no send receipt read yet is held back from the page. A
 * store writes the inbox line before the receipt that acknowledges it, so a poll can
 * fall between the two: shown at once, an honest send would read "no genuine send
 * receipt" for a moment. Past this, it is shown as it is.
 */
const RECEIPT_GRACE_MS = 2000;

export interface MailboxMessage extends Message {
  /** The state `message_status` derives; null when no genuine send receipt stores it. */
  status: DeliveryStatus | null;
}

export interface WitnessedView {
  witness: string;
  url: string;
  /** The newest checkpoint of the log this witness cosigned, as verify finds it (null: none, `problem` says why). */
  checkpoint: { size: number; witnessed_at: string; from: string } | null;
  problem: string | null;
  last: { at: string; ok: boolean; status?: number; size: number; message: string } | null;
}

export interface MailboxSnapshot {
  dir: string;
  id: string;
  store: string;
  agents: Array<Pick<AgentEntry, 'name' | 'created'> & { description: string | null }>;
  messages: MailboxMessage[];
  /** Messages stored before the first shown one (beyond MAX_SHOWN_MESSAGES). */
  older: number;
  verify: Pick<VerifyReport, 'ok' | 'calls' | 'messages' | 'problems' | 'warnings' | 'key'> & {
    at: string;
    witnesses: string[];
  };
  witnessed: WitnessedView[];
  /** False in a bundle: a snapshot, not followed. */
  live: boolean;
}

/** What changed since the last update: new or changed messages, and the new verdict when it was taken again. */
export interface MailboxUpdate {
  messages: MailboxMessage[];
  verify?: MailboxSnapshot['verify'];
  witnessed?: WitnessedView[];
  older: number;
}

export interface MailboxFeedOptions {
  /** How often the follower and the log reader are asked (default 200 ms, as tail). */
  pollMs?: number;
}

export class MailboxFeed {
  readonly #messages = new Map<string, MailboxMessage>();
  /** New messages not yet shown, with when they were first read (RECEIPT_GRACE_MS). */
  readonly #held = new Map<string, { message: Message; since: number }>();
  readonly #listeners = new Set<(u: MailboxUpdate) => void>();
  #older = 0;
  #verify!: MailboxSnapshot['verify'];
  #witnessed: WitnessedView[] = [];
  #timer: NodeJS.Timeout | undefined;
  #busy: Promise<void> = Promise.resolve();
  #closed = false;

  private constructor(
    readonly dir: string,
    readonly config: MailboxConfig,
    private readonly verifier: Verifier,
    private readonly follower: Follower,
    private readonly log: CallLogReader,
    private readonly pollMs: number,
  ) {}

  /** Reads the mailbox once (every message, their states, the verdict); `follow()` then keeps it current. */
  static async open(dir: string, options: MailboxFeedOptions = {}): Promise<MailboxFeed> {
    const config = readConfig(dir);
    const parts = storeKind(config.store);
    const follower = await parts.follow(dir, config, undefined, PER_POLL);
    const log = await parts.callLog(dir, config).catch(async (error: unknown) => {
      await follower.close();
      throw error;
    });
    const feed = new MailboxFeed(dir, config, _verifier(config), follower, log, options.pollMs ?? 200);
    try {
      await feed.#poll(true);
    } catch (error) {
      await feed.close();
      throw error;
    }
    return feed;
  }

  /** Polls the follower and the log every `pollMs` until closed; listeners hear each change. */
  follow(): void {
    if (this.#timer || this.#closed) return;
    const tick = () => {
      this.#busy = this.#poll(false)
        .catch(() => undefined) // a failed poll (a database outage) is tried again on the next tick
        .finally(() => {
          if (!this.#closed) this.#timer = setTimeout(tick, this.pollMs);
        });
    };
    this.#timer = setTimeout(tick, this.pollMs);
  }

  onUpdate(listener: (u: MailboxUpdate) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  async snapshot(live = true): Promise<MailboxSnapshot> {
    return {
      dir: this.dir,
      id: this.config.id,
      store: this.config.store,
      agents: await this.#agents(),
      messages: [...this.#messages.values()],
      older: this.#older,
      verify: this.#verify,
      witnessed: this.#witnessed,
      live,
    };
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#timer);
    await this.#busy;
    await this.follower.close();
    await this.log.close();
  }

  /** One round: new messages, and when the call log grew, every state, the verdict and the witnesses again. */
  async #poll(first: boolean): Promise<void> {
    const fresh: Message[] = [];
    for (;;) {
      const batch = await this.follower.next(false);
      fresh.push(...batch);
      if (batch.length === 0) break;
    }
    const read = await this.log.read();
    const grew = read.leaves.length > 0 || read.rewound;
    if (!first && fresh.length === 0 && !grew && this.#held.size === 0) return;
    const now = Date.now();
    for (const m of fresh) this.#held.set(m.id, { message: m, since: now });
    const candidates = [...this.#held.values()].map((h) => h.message);
    for (const m of candidates.sort((a, b) => a.sent_at.localeCompare(b.sent_at)))
      this.#messages.set(m.id, { ...m, status: null });
    const changed = (await this.#statuses(new Set(candidates.map((m) => m.id)))).filter((m) =>
      this.#show(m, first, now),
    );
    while (this.#messages.size > MAX_SHOWN_MESSAGES) {
      this.#messages.delete(this.#messages.keys().next().value as string);
      this.#older++;
    }
    if (first || grew) {
      this.#verify = await this.#verdict();
      this.#witnessed = await this.#witnesses();
    }
    if (first) return;
    const update: MailboxUpdate = {
      messages: changed,
      older: this.#older,
      ...(grew ? { verify: this.#verify, witnessed: this.#witnessed } : {}),
    };
    for (const l of this.#listeners) l(update);
  }

  /**
   * Whether a message just read goes to the page now: yes once its send receipt is read,
   * on the first read (a snapshot shows what is there), or once RECEIPT_GRACE_MS has
   * passed; otherwise it is held back for the next poll.
   */
  #show(m: MailboxMessage, first: boolean, now: number): boolean {
    const held = this.#held.get(m.id);
    if (!held) return true;
    if (m.status === null && !first && now - held.since < RECEIPT_GRACE_MS) {
      this.#messages.delete(m.id);
      return false;
    }
    this.#held.delete(m.id);
    return true;
  }

  /**
   * Every kept message's state from one pass over the call log (the lines that name
   * it, in log order, through `deliveryOf`); returns the messages that are new or
   * whose state changed.
   */
  async #statuses(fresh: Set<string>): Promise<MailboxMessage[]> {
    const lines = new Map<string, string[]>();
    for (const id of this.#messages.keys()) lines.set(id, []);
    const evidence = await openEvidence(this.dir, this.config);
    try {
      for await (const l of evidence.calls()) {
        if (l.text === undefined || l.torn) continue;
        for (const id of _ids(l.text)) lines.get(id)?.push(l.text);
      }
    } finally {
      await evidence.close();
    }
    const changed: MailboxMessage[] = [];
    for (const [id, m] of this.#messages) {
      const status = deliveryOf(id, lines.get(id) ?? [], this.verifier) ?? null;
      if (fresh.has(id) || JSON.stringify(status) !== JSON.stringify(m.status)) {
        m.status = status;
        changed.push(m);
      }
    }
    return changed;
  }

  /** `witness mailbox verify DIR --witness VKEY` for each witness the servers submit to. */
  async #verdict(): Promise<MailboxSnapshot['verify']> {
    const witnesses = listWitnessed(this.dir).map((w) => w.vkey);
    const report = await verifyMailbox(this.dir, { witnesses: witnesses.map((vkey) => ({ vkey })) });
    const { ok, calls, messages, problems, warnings, key } = report;
    return {
      ok,
      calls,
      messages,
      problems: problems.map((p) => ({ ...p, file: _relative(this.dir, p.file) })),
      warnings,
      key,
      at: new Date().toISOString(),
      witnesses: witnesses.map((v) => v.split('+')[0] ?? v),
    };
  }

  async #witnesses(): Promise<WitnessedView[]> {
    const records = listWitnessed(this.dir);
    if (records.length === 0) return [];
    const logKey = mailboxVerifierKey(this.dir);
    const origin = mailboxOrigin(this.config);
    const out: WitnessedView[] = [];
    for (const r of records) {
      const found = await findWitnessed(this.dir, logKey, origin, { vkey: r.vkey });
      out.push({
        witness: r.vkey.split('+')[0] ?? r.vkey,
        url: r.url,
        checkpoint: found.ok
          ? {
              size: found.checkpoint.size,
              witnessed_at: new Date(found.checkpoint.timestamp * 1000).toISOString(),
              from: found.checkpoint.from,
            }
          : null,
        problem: found.ok ? null : `${found.code}: ${found.message}`,
        last: r.last ?? null,
      });
    }
    return out;
  }

  async #agents(): Promise<MailboxSnapshot['agents']> {
    let agents: AgentEntry[];
    if (storeKind(this.config.store).inFolder) agents = readAgents(this.dir);
    else {
      const evidence = await openEvidence(this.dir, this.config);
      try {
        agents = await evidence.agents();
      } finally {
        await evidence.close();
      }
    }
    return agents.map((a) => ({ name: a.name, created: a.created, description: a.description ?? null }));
  }
}

/** The key receipts are checked with: the mailbox's key file, or (Ed25519, file absent) the public key mailbox.json records, as verify does. */
function _verifier(config: MailboxConfig): Verifier {
  if (!existsSync(config.signing.key_path) && config.signing.alg === 'ed25519' && config.signing.public_key)
    return ed25519Verifier(config.signing.kid, config.signing.public_key);
  return signerFor(loadKey(config));
}

/** The message ids a call-log line names (a superset filter: deliveryOf checks each line itself). */
function _ids(text: string): string[] {
  try {
    const ids = (JSON.parse(text) as { message_ids?: unknown }).message_ids;
    return Array.isArray(ids) ? ids.filter((x): x is string => typeof x === 'string') : [];
  } catch {
    return [];
  }
}

function _relative(dir: string, file: string): string {
  return file.startsWith(`${dir}/`) ? file.slice(dir.length + 1) : file;
}
