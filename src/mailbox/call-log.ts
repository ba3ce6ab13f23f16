/**
 * @module
 * The call log (mailbox.md §1): one line per tool call — `seq, ts, agent, tool,
 * message_ids, ok, error?, prev` — never a message body. Each line carries
 * `prev` = SHA-256 of the previous line's exact text (a hash chain: an edit, a
 * deletion or a swap breaks it) and a receipt = the server key's signature (attest's
 * one Signer) over the line without its receipt. Send lines also carry `to` and a
 * digest of each message record, so an edited inbox line is caught too.
 *
 * Line formats: `v: 2` (written now) signs attest's call-log domain tag followed by
 * the RFC 8785 form of the line, so a call-log signature can never pass for a receipt
 * or any other record the same key signs; `v: 1` (written before, still verified)
 * signed the RFC 8785 form alone.
 */
import { DOMAIN_TAGS, taggedBytes } from '../attest/domain.js';
import type { SignatureAlg, Signer } from '../attest/signature.js';
import { canonicalBytes, canonicalize } from '../core/canonical-json.js';
import { canonicalSha256Hex, sha256Hex } from '../core/hash.js';

export const TOOL_NAMES = [
  'list_agents',
  'send_message',
  'check_inbox',
  'wait_for_message',
  'whoami',
  'message_status',
  'ack_message',
] as const;
export type MailboxToolName = (typeof TOOL_NAMES)[number];
/**
 * What the server gives an agent without a tool call, logged like a call: a read of
 * the `mailbox://inbox` resource, and a message pushed into a Claude Code session as
 * a channel event. Both deliver bodies without moving the read cursor (a peek).
 */
export const SERVER_EVENTS = ['read_resource', 'channel_push'] as const;
export type ServerEvent = (typeof SERVER_EVENTS)[number];
/** The receipts that show messages to their recipient: a message they list was read (a peek too). */
export const READ_TOOLS: readonly string[] = ['check_inbox', 'wait_for_message', ...SERVER_EVENTS];
/** The reads that move the read cursor past what they list (unless they are a peek). */
export const CURSOR_TOOLS: readonly string[] = ['check_inbox', 'wait_for_message'];
/**
 * The `tool` of a call that named no tool of this server (an unknown name, or a
 * `tools/call` without one): such a call is refused and logged like any other, and
 * its error message quotes the name as given (JSON-escaped, cut at 100 characters).
 */
export const UNKNOWN_TOOL = 'unknown_tool';
/** The `tool` field of a call-log line: a mailbox tool without any --tool-prefix, a server event, or UNKNOWN_TOOL. */
export type ToolName = MailboxToolName | ServerEvent | typeof UNKNOWN_TOOL;

/** The `prev` of the first line. */
export const GENESIS = '0'.repeat(64);

/** A message as stored in `inbox/<to>.jsonl`. */
export interface Message {
  id: string;
  from: string;
  to: string;
  body: string;
  sent_at: string;
  /** The conversation: the id of its first message (absent on messages stored before threads). */
  thread?: string;
  /** The message this one answers (one its sender received). */
  reply_to?: string;
  idempotency_key?: string;
}

/** What a store records about one tool call, before sealing. */
export interface CallEntry {
  agent: string;
  tool: ToolName;
  ok: boolean;
  message_ids: string[];
  /** send_message: the recipient of each id. */
  to?: string[];
  /** send_message: SHA-256 of each message record's canonical form. */
  digests?: string[];
  idempotency_key?: string;
  /** send_message: true when a retried key returned an earlier message; ack_message: when the message was already acknowledged. */
  deduplicated?: boolean;
  /**
   * check_inbox: true when the read was a peek (the cursor did not move). Absent on
   * every other read, and on every line written before this field existed: verify
   * then counts a peek as a delivery.
   */
  peek?: boolean;
  /** check_inbox / wait_for_message: damaged inbox records passed over (not messages). */
  skipped?: number;
  /** ack_message: the recipient's short answer, signed with the acknowledgement. */
  reply?: string;
  error?: { code: string; message: string };
}

/** The line format written now; `LEGACY_LINE_VERSION` lines are still verified. */
export const LINE_VERSION = 2;
export const LEGACY_LINE_VERSION = 1;

/** The signature a call-log line carries (outside the signed bytes). */
export interface CallReceipt {
  alg: SignatureAlg;
  kid: string;
  sig: string;
}

export interface CallRecord extends CallEntry {
  v: typeof LINE_VERSION | typeof LEGACY_LINE_VERSION;
  seq: number;
  ts: string;
  prev: string;
  receipt: CallReceipt;
}

/** Position in the chain: what the next line continues from. */
export interface ChainHead {
  seq: number;
  hash: string;
}

export const EMPTY_HEAD: ChainHead = { seq: 0, hash: GENESIS };

/** Seals `entry` after `head`: returns the line's text (no newline) and the new head. */
export function sealCall(
  entry: CallEntry,
  head: ChainHead,
  signer: Signer,
  ts = new Date().toISOString(),
): { text: string; record: CallRecord; head: ChainHead } {
  const unsigned = { v: LINE_VERSION as typeof LINE_VERSION, seq: head.seq + 1, ts, ...entry, prev: head.hash };
  const receipt: CallReceipt = {
    alg: signer.alg,
    kid: signer.kid,
    sig: signer.sign(taggedBytes(DOMAIN_TAGS.callLogLine, canonicalize(unsigned))),
  };
  const record: CallRecord = { ...unsigned, receipt };
  const text = JSON.stringify(record);
  return { text, record, head: { seq: record.seq, hash: lineHash(text) } };
}

/** The chain hash of one stored line: SHA-256 of its exact text, so any byte change shows. */
export function lineHash(text: string): string {
  return sha256Hex(text);
}

/**
 * The bytes a line's receipt signs: the canonical line without `receipt`, behind the
 * call-log domain tag — except on a `v: 1` line, which signed it untagged. (A line
 * whose `v` is edited no longer matches either: `v` is inside the signed bytes.)
 */
export function signedBytes(record: Record<string, unknown>): Buffer {
  const { receipt: _receipt, ...rest } = record;
  return rest.v === LEGACY_LINE_VERSION
    ? canonicalBytes(rest)
    : taggedBytes(DOMAIN_TAGS.callLogLine, canonicalize(rest));
}

export function messageDigest(message: Message): string {
  return canonicalSha256Hex(message);
}
