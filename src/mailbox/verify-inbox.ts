/**
 * @module
 * Cross-checks what is stored against the verified receipts, streaming the inboxes:
 * every inbox line must be a message with a `send_message` receipt for its id,
 * recipient and digest (else orphan, modified, forged or reordered); every
 * acknowledged or delivered id must be stored (else deleted); and each agent's read
 * cursor must agree with the read receipts: every message before it delivered by a
 * read that was not a peek (else skipped: an edited cursor would hide it from the
 * agent for ever), none delivered after it (else a warning: it will be delivered
 * again), and, for a JSONL inbox, at a line boundary within the file.
 */
import { parseStrictJson } from '../core/strict-json.js';
import { type Message, messageDigest } from './call-log.js';
import type { Cursor, Evidence, InboxLine } from './evidence.js';

export type InboxProblemKind = 'forged' | 'modified' | 'reordered' | 'deleted' | 'corrupt' | 'orphan' | 'skipped';
export type InboxReport = (kind: InboxProblemKind, file: string, line: number, message: string) => void;

/** What the verified receipts say, gathered while streaming the call log. */
export interface Receipts {
  sends: Map<
    string,
    { to: string; digest: string | undefined; file: string; line: number; seq: number; found: boolean }
  >;
  reads: Array<{ ids: string[]; agent: string; file: string; line: number }>;
  /** Reads that moved the cursor (not peeks): agent → message id → where its receipt is. */
  delivered: Map<string, Map<string, string>>;
}

/** Checks every inbox line and cursor; returns how many message lines there are. */
export async function checkInboxes(
  evidence: Evidence,
  receipts: Receipts,
  report: InboxReport,
  warn: (warning: string) => void,
  watch?: (l: InboxLine, m: Message) => void,
): Promise<number> {
  const { cursors, unreadable } = await evidence.cursors();
  for (const u of unreadable) report('corrupt', u.file, 0, `not a read cursor (${u.why})`);
  const stored = new Map<string, string>();
  let count = 0;
  let inbox: _InboxState | undefined;
  const finish = () => {
    if (inbox) inbox.finish(report, warn);
    inbox = undefined;
  };
  for await (const l of evidence.inboxLines()) {
    if (inbox?.agent !== l.agent) {
      finish();
      inbox = new _InboxState(l.agent, l.file, cursors.get(l.agent), receipts.delivered.get(l.agent));
      cursors.delete(l.agent);
    }
    if (l.torn) {
      report(
        'corrupt',
        l.file,
        l.line,
        'unterminated last line (an interrupted write); starting a server or `witness mailbox recover` cuts it',
      );
      continue;
    }
    if (l.text === '') continue;
    count++;
    const m = _message(l, report);
    if (m && watch) watch(l, m);
    inbox.see(l, m, stored, receipts, report);
  }
  finish();
  for (const [agent, cursor] of cursors)
    new _InboxState(agent, '', cursor, receipts.delivered.get(agent)).finish(report, warn);
  for (const [id, send] of receipts.sends) {
    if (!send.found)
      report(
        'deleted',
        send.file,
        send.line,
        `message ${id} to ${send.to} has its send receipt here but is missing from that inbox`,
      );
  }
  for (const r of receipts.reads) {
    for (const id of r.ids)
      if (!stored.has(id))
        report('deleted', r.file, r.line, `message ${id} delivered to ${r.agent} here is in no inbox`);
  }
  return count;
}

/** The line as a message record, or undefined (reported as corrupt). Parsed strictly: a repeated key is refused. */
function _message(l: InboxLine, report: InboxReport): Message | undefined {
  if (l.text === undefined) {
    report('corrupt', l.file, l.line, 'not a message record (a line of more than 64 MiB)');
    return undefined;
  }
  try {
    const m = parseStrictJson(l.text, { what: 'the line' }) as Record<string, unknown> | null;
    if (typeof m !== 'object' || m === null || Array.isArray(m)) throw new Error('not a JSON object');
    if (typeof m.id !== 'string' || typeof m.body !== 'string') throw new Error('no id or body'); // other fields are checked by the signed digest
    return m as unknown as Message;
  } catch (error) {
    report('corrupt', l.file, l.line, `not a message record (${(error as Error).message})`);
    return undefined;
  }
}

/** One inbox being read: send order, and where its cursor stands. */
class _InboxState {
  private lastSeq = 0;
  private lastEnd = 0;
  private atBoundary: boolean;
  private behind: string | undefined;

  constructor(
    readonly agent: string,
    private readonly file: string,
    private readonly cursor: Cursor | undefined,
    private readonly delivered: Map<string, string> = new Map(),
  ) {
    this.atBoundary = cursor === undefined || cursor.unit === 'row' || cursor.at === 0;
  }

  see(
    l: InboxLine,
    m: Message | undefined,
    stored: Map<string, string>,
    receipts: Receipts,
    report: InboxReport,
  ): void {
    this.lastEnd = l.end;
    if (this.cursor?.unit === 'byte' && l.end === this.cursor.at) this.atBoundary = true;
    if (!m) return;
    const send = receipts.sends.get(m.id);
    if (stored.has(m.id))
      report('forged', l.file, l.line, `message ${m.id} is stored twice (first in ${stored.get(m.id)})`);
    else if (!send)
      report(
        'orphan',
        l.file,
        l.line,
        `message ${m.id} has no verified send_message receipt in the call log (written without the server?)`,
      );
    else if (send.to !== this.agent)
      report(
        'modified',
        l.file,
        l.line,
        `message ${m.id} is in ${this.agent}'s inbox, but ${send.file}:${send.line} signed its send to ${send.to}: it was moved between inboxes`,
      );
    else if (send.digest !== undefined && send.digest !== messageDigest(m))
      // The receipt signs the message's digest, not each field: which one changed cannot be told, only that one did.
      report(
        'modified',
        l.file,
        l.line,
        `message ${m.id} differs from what ${send.file}:${send.line} signed: a field of the stored message (its sender, body, time, thread or any other) was changed`,
      );
    else if (send.seq < this.lastSeq)
      report('reordered', l.file, l.line, `message ${m.id} was sent before the message above it`);
    if (l.rowId !== undefined && l.rowId !== m.id && !stored.has(m.id))
      report(
        'modified',
        l.file,
        l.line,
        `the row's id column says ${JSON.stringify(l.rowId)} but its text (what the receipt signed) is message ${m.id}: the column was changed, and the server looks messages up by it (acknowledgements and replies to ${m.id} would fail)`,
      );
    if (send && !stored.has(m.id)) {
      send.found = true;
      this.lastSeq = Math.max(this.lastSeq, send.seq);
    }
    stored.set(m.id, `${l.file}:${l.line}`);
    this.checkCursor(l, m, report);
  }

  private checkCursor(l: InboxLine, m: Message, report: InboxReport): void {
    if (!this.cursor) return;
    const before = this.cursor.unit === 'byte' ? l.end <= this.cursor.at : l.line <= this.cursor.at;
    const receipt = this.delivered.get(m.id);
    if (before && receipt === undefined) {
      report(
        'skipped',
        l.file,
        l.line,
        `message ${m.id} is before ${this.agent}'s read cursor (${this.cursor.file}) but no read receipt delivered it: the cursor was moved past it, and ${this.agent} would never get it`,
      );
    }
    if (!before && receipt !== undefined && this.behind === undefined)
      this.behind = `${m.id}, which ${receipt} delivered`;
  }

  finish(report: InboxReport, warn: (warning: string) => void): void {
    const c = this.cursor;
    if (!c) return;
    if (c.unit === 'byte' && !this.atBoundary) {
      const where =
        c.at > this.lastEnd
          ? `past the end of ${this.agent}'s inbox (${this.lastEnd} bytes)`
          : `into the middle of a line of ${this.agent}'s inbox`;
      report(
        'modified',
        c.file,
        0,
        `the read cursor points to byte ${c.at}, ${where}: the server only ever moves it to a line boundary`,
      );
    }
    if (c.unit === 'row' && this.file === '' && c.at > 0)
      report(
        'modified',
        c.file,
        0,
        `the read cursor of ${this.agent} points to row ${c.at}, but ${this.agent} has no message`,
      );
    if (this.behind !== undefined) {
      warn(
        `the read cursor of ${this.agent} (${c.file}) sits before message ${this.behind}: messages already delivered will be delivered again. A power loss between a read's receipt and its cursor write leaves this; otherwise the cursor was moved back.`,
      );
    }
  }
}
