/**
 * @module
 * The export format of a mailbox (`witness mailbox export`, `import`): JSON lines
 * that carry every stored record's exact text, so receipts and the hash chain verify
 * the same after a move between stores. In order: a header (format, the mailbox's id
 * and signing key, never a secret), the agents (with their token hashes, so tokens
 * keep working), the call log's lines, each inbox's messages, the read cursors (as a
 * count of records read, which every store can turn into its own position), and an
 * end line with the counts, so a cut-off export is refused rather than imported, and
 * the call log's signed checkpoint (checkpoint.ts: the Ed25519 mailbox key's, or an
 * HMAC mailbox's checkpoint key's, whose public half the header names), so one whose
 * last calls and messages were dropped and its counts rewritten is refused too; and a
 * signed note over the agent and cursor lines (`state`), which no receipt covers.
 */
import type { SignatureAlg } from '../../attest/signature.js';
import type { AgentEntry, MailboxConfig, StoreKind } from '../config.js';

export const EXPORT_FORMAT = 'witness-mailbox-export/1';

export interface ExportHeader {
  format: typeof EXPORT_FORMAT;
  mailbox: {
    id: string;
    created: string;
    signing: { alg: SignatureAlg; kid: string; public_key?: string };
    /** An HMAC mailbox's Ed25519 checkpoint key (its public half): what the end line's checkpoint is signed with. */
    checkpoint_key?: { kid: string; public_key: string };
  };
  source: StoreKind;
  exported_at: string;
}

export interface ExportCounts {
  agents: number;
  calls: number;
  messages: number;
  cursors: number;
}

export type ExportRecord =
  | { agent: AgentEntry }
  | { call: string }
  | { message: string; to: string }
  | { cursor: { agent: string; messages: number } }
  | { end: ExportEnd };

/**
 * The end line: the counts, the call log's signed checkpoint, and `state`, a signed
 * note of the same form (origin `stateOrigin`) over the agent and cursor lines, each
 * line's exact text a leaf: token hashes and read positions are no receipt's, so
 * without it an export edited in transit (a token hash replaced: someone else's token
 * logs in as that agent) would import clean.
 */
export type ExportEnd = ExportCounts & { checkpoint?: string; state?: string };

/** The origin of an export's `state` note: the mailbox's log origin, with this suffix. */
export function stateOrigin(logOrigin: string): string {
  return `${logOrigin}/export-state`;
}

export function exportHeader(config: MailboxConfig): ExportHeader {
  const { alg, kid, public_key } = config.signing;
  const cp = config.checkpoint_key;
  return {
    format: EXPORT_FORMAT,
    mailbox: {
      id: config.id,
      created: config.created,
      signing: { alg, kid, ...(public_key !== undefined ? { public_key } : {}) },
      ...(cp ? { checkpoint_key: { kid: cp.kid, public_key: cp.public_key } } : {}),
    },
    source: config.store,
    exported_at: new Date().toISOString(),
  };
}
