/**
 * @module
 * What the mailbox recorded, read the way `witness mailbox verify` reads it: every
 * inbox line and every call-log line with whether its receipt verifies under the
 * mailbox's key. A check compares a snapshot taken before the agent ran with one
 * taken after, so only what happened during the check is judged.
 */
import { readKeyFile, signerFor } from '../attest/index.js';
import { type CallRecord, type Message, readSnapshot, signedBytes, verifyMailbox } from '../mailbox/index.js';

export interface InboxLine {
  at: string;
  message: Message;
}

export interface LogLine {
  at: string;
  record: CallRecord;
  genuine: boolean;
}

export interface Records {
  inbox: InboxLine[];
  log: LogLine[];
  /** `verify` problems as `file:line: kind: message`. */
  problems: string[];
  /** Counts, to tell new lines from old. */
  marks: Map<string, number>;
}

export async function readRecords(mailbox: string, keyPath: string): Promise<Records> {
  const signer = signerFor(readKeyFile(keyPath, { what: 'mailbox signing key', hmac: true }));
  const snap = await readSnapshot(mailbox);
  const marks = new Map<string, number>();
  const log: LogLine[] = [];
  for (const c of snap.calls) {
    marks.set(c.file, c.line);
    const record = _parse<CallRecord>(c.text);
    if (!record || typeof record.seq !== 'number' || !Array.isArray(record.message_ids)) continue;
    let genuine = false;
    try {
      genuine =
        record.receipt?.kid === signer.kid &&
        signer.verify(signedBytes(record as unknown as Record<string, unknown>), record.receipt.sig);
    } catch {
      genuine = false;
    }
    log.push({ at: `${c.file}:${c.line}`, record, genuine });
  }
  const inbox: InboxLine[] = [];
  for (const box of snap.inboxes) {
    for (const l of box.lines) {
      marks.set(box.file, l.line);
      const message = _parse<Message>(l.text);
      if (message && typeof message.id === 'string' && typeof message.body === 'string')
        inbox.push({ at: `${box.file}:${l.line}`, message });
    }
  }
  const report = await verifyMailbox(mailbox, { keyPath });
  return { inbox, log, problems: report.problems.map((p) => `${p.file}:${p.line}: ${p.kind}: ${p.message}`), marks };
}

/** What `after` has that `before` did not: new lines, and problems not reported before. */
export function recordsSince(before: Records, after: Records): Records {
  const isNew = (at: string) => {
    const i = at.lastIndexOf(':');
    return Number(at.slice(i + 1)) > (before.marks.get(at.slice(0, i)) ?? 0);
  };
  const old = new Set(before.problems);
  return {
    inbox: after.inbox.filter((l) => isNew(l.at)),
    log: after.log.filter((l) => isNew(l.at)),
    problems: after.problems.filter((p) => !old.has(p)),
    marks: after.marks,
  };
}

function _parse<T>(text: string): T | undefined {
  try {
    const v = JSON.parse(text) as unknown;
    return typeof v === 'object' && v !== null ? (v as T) : undefined;
  } catch {
    return undefined;
  }
}
