/**
 * @module
 * A message's delivery state, read from the call log and nothing else:
 * `stored` (its send receipt), `read` (the first receipt that showed it to its
 * recipient: a read, a peek, a read of the inbox resource, a channel push),
 * `acknowledged` (the recipient's ack_message
 * receipt, with its reply). Only genuine lines count — parsed strictly, signed by
 * the mailbox's key — so an edited store cannot make a message look read. Each state
 * carries the receipt that proves it: its seq, time and the SHA-256 of its exact
 * line (what the hash chain links), and the line itself when it concerns no other
 * message (a read receipt lists the recipient's other mail, which stays private).
 */
import type { Verifier } from '../../attest/signature.js';
import { genuineCall } from '../call-check.js';
import { type CallRecord, lineHash, READ_TOOLS } from '../call-log.js';

export type DeliveryState = 'stored' | 'read' | 'acknowledged';

/** The receipt behind one state. */
export interface DeliveryReceipt {
  at: string;
  seq: number;
  /** SHA-256 of the call-log line's exact text. */
  line_sha256: string;
  /** The signed line itself, when it names no other message. */
  line?: string;
}

export interface DeliveryStatus {
  id: string;
  from: string;
  to: string;
  sent_at: string;
  state: DeliveryState;
  stored: DeliveryReceipt;
  read?: DeliveryReceipt;
  acknowledged?: DeliveryReceipt & { reply?: string };
}

/**
 * The status of message `id` from the call-log lines that mention it, in log order
 * (other lines are passed over); undefined when no genuine send receipt stores it.
 * With `asker`, only a send receipt naming it as sender or recipient is looked at,
 * and that is decided before any signature is checked: another pair's message
 * answers as fast as a made-up id, and the same (undefined).
 */
export function deliveryOf(
  id: string,
  lines: Iterable<string>,
  verifier: Verifier,
  asker?: string,
): DeliveryStatus | undefined {
  let status: DeliveryStatus | undefined;
  for (const text of lines) {
    if (!text.includes(id)) continue;
    if (!status && asker !== undefined && !_claimsSendWith(text, id, asker)) continue;
    const r = genuineCall(text, verifier);
    if (!r?.ok || !r.message_ids.includes(id)) continue;
    if (!status) {
      if (isSendOf(r, id))
        status = { id, from: r.agent, to: r.to![0]!, sent_at: r.ts, state: 'stored', stored: _receipt(r, text, true) };
      continue;
    }
    if (r.agent !== status.to) continue; // only the recipient reads or acknowledges
    if (!status.read && READ_TOOLS.includes(r.tool)) status.read = _receipt(r, text, r.message_ids.length === 1);
    if (!status.acknowledged && isAckOf(r, id))
      status.acknowledged = { ..._receipt(r, text, true), ...(r.reply !== undefined ? { reply: r.reply } : {}) };
  }
  if (status) status.state = status.acknowledged ? 'acknowledged' : status.read ? 'read' : 'stored';
  return status;
}

/** The send receipt that stored `id` (not a deduplicated retry's). */
export function isSendOf(r: CallRecord, id: string): boolean {
  return (
    r.tool === 'send_message' &&
    r.ok &&
    r.deduplicated !== true &&
    r.message_ids.length === 1 &&
    r.message_ids[0] === id &&
    typeof r.to?.[0] === 'string'
  );
}

/** The first acknowledgement of `id` (a repeated ack is marked deduplicated). */
export function isAckOf(r: CallRecord, id: string): boolean {
  return (
    r.tool === 'ack_message' && r.ok && r.deduplicated !== true && r.message_ids.length === 1 && r.message_ids[0] === id
  );
}

/** Does this line, unchecked, claim to be the send of `id` by or to `asker`? (A cheap parse: the signature is checked after.) */
function _claimsSendWith(text: string, id: string, asker: string): boolean {
  let r: Partial<CallRecord>;
  try {
    r = JSON.parse(text) as Partial<CallRecord>;
  } catch {
    return false;
  }
  return r?.tool === 'send_message' && r.message_ids?.[0] === id && (r.agent === asker || r.to?.[0] === asker);
}

function _receipt(r: CallRecord, text: string, withLine: boolean): DeliveryReceipt {
  return { at: r.ts, seq: r.seq, line_sha256: lineHash(text), ...(withLine ? { line: text } : {}) };
}
