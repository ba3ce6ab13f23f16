/**
 * @module
 * Verify's check of what a SQL store keeps beside its signed log to answer retries:
 * the idempotency table. A row is a pointer from (sender, key) to the newest keyed
 * send the log receipts; each must be exactly that (else modified, or orphan when the
 * log receipts no such send), and each keyed send in the log must have its row (else
 * deleted: a retry would be stored as a second message). A row never becomes a truth
 * of its own: the stores check it against the genuine receipt before using it, and
 * verify names every one that differs.
 */
import type { Evidence } from './evidence.js';
import type { InboxReport } from './verify-inbox.js';

/** The newest genuine keyed send per sender and key, as the log receipts it. */
export type KeyedSends = Map<string, KeyedSend>;

export interface KeyedSend {
  sender: string;
  key: string;
  id: string;
  to: string;
  ts: string;
  file: string;
  line: number;
  /** Earlier sends stored under the same key (an honest store answers a retry of a stored one as a duplicate). */
  earlier: string[];
}

/** Learns one genuine, stored keyed send. */
export function learnKeyedSend(keyed: KeyedSends, send: Omit<KeyedSend, 'earlier'>): void {
  const k = `${send.sender}\u0000${send.key}`;
  const before = keyed.get(k);
  keyed.set(k, { ...send, earlier: before ? [...before.earlier, before.id] : [] });
}

/**
 * `stored(id)`: the message is in its inbox as its receipt signed it. A keyed send
 * stored anew while an earlier one under the key is intact means the store did not see
 * the earlier one: its pointer was missing or changed when the retry came (every store).
 */
export async function checkIdempotencyRows(
  evidence: Evidence,
  keyed: KeyedSends,
  stored: (id: string) => boolean,
  report: InboxReport,
): Promise<void> {
  for (const send of keyed.values()) {
    const intact = send.earlier.find(stored);
    if (intact)
      report(
        'modified',
        send.file,
        send.line,
        `message ${send.id} was stored as a new send under ${send.sender}'s key ${JSON.stringify(send.key)}, though message ${intact}, sent under that key before, is stored: a retry must be answered with it. The store's idempotency pointer was missing or changed when the retry came.`,
      );
  }
  if (!evidence.idempotency) return;
  const seen = new Set<string>();
  let file = '';
  for await (const row of evidence.idempotency()) {
    file = row.file;
    const k = `${row.sender}\u0000${row.key}`;
    seen.add(k);
    const send = keyed.get(k);
    const name = `row (sender ${JSON.stringify(row.sender)}, key ${JSON.stringify(row.key)})`;
    if (!send)
      report(
        'orphan',
        row.file,
        0,
        `${name} points at message ${row.id}, but no genuine send_message receipt of ${row.sender} carries that key`,
      );
    else if (send.id !== row.id || send.to !== row.recipient || send.ts !== row.sent_at)
      report(
        'modified',
        row.file,
        0,
        `${name} points at message ${row.id} to ${row.recipient} sent ${row.sent_at}, but ${send.file}:${send.line} receipts that key's send as ${send.id} to ${send.to} at ${send.ts}`,
      );
  }
  for (const [k, send] of keyed) {
    if (!seen.has(k))
      report(
        'deleted',
        file || `${evidence.callsFile.replace(/#calls$/, '')}#idempotency`,
        0,
        `row (sender ${JSON.stringify(send.sender)}, key ${JSON.stringify(send.key)}) is missing: ${send.file}:${send.line} receipts message ${send.id} under that key, and without the row a retry would be stored as a second message`,
      );
  }
}
