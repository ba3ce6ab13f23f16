/**
 * @module
 * `witness mailbox verify --explain ID`: one message's life traced to its evidence —
 * where its record is stored, and every call-log line that names it (its send
 * receipt, the reads that delivered it, its acknowledgement, status queries), each
 * with its position, whether its signature holds, and whether the chain check found
 * a problem at that line. The states are derived exactly as `message_status` derives
 * them (store/delivery.ts), so an answer a server gave can be checked here.
 */
import type { Verifier } from '../attest/signature.js';
import { type CallRecord, type Message, messageDigest } from './call-log.js';
import { parseCallRecord, isGenuineCall } from './call-check.js';
import type { EvidenceLine, InboxLine } from './evidence.js';
import { type DeliveryStatus, deliveryOf } from './store/delivery.js';

export interface ExplainedReceipt {
  file: string;
  line: number;
  seq?: number;
  tool?: string;
  agent?: string;
  at?: string;
  /** Its receipt is the mailbox key's and its signature holds. */
  genuine: boolean;
  /** The problems verify reported at this line (an empty list: the chain holds here). */
  problems: string[];
}

export interface Explanation {
  id: string;
  /** Where the message's record is, and whether it is the record its send receipt signed. */
  stored?: { file: string; line: number; matches_receipt: boolean };
  /** The state message_status derives from the genuine receipts (undefined: no genuine send receipt). */
  status?: DeliveryStatus;
  receipts: ExplainedReceipt[];
}

/** Collects what verify reads about one message while it streams the mailbox. */
export class Tracer {
  private readonly lines: Array<{ line: number; text: string }> = [];
  private stored: { file: string; line: number; message: Message } | undefined;

  constructor(
    readonly id: string,
    private readonly callsFile: string,
  ) {}

  see(l: EvidenceLine): void {
    if (l.text?.includes(this.id)) this.lines.push({ line: l.line, text: l.text });
  }

  readonly watchInbox = (l: InboxLine, m: Message): void => {
    if (m.id === this.id && !this.stored) this.stored = { file: l.file, line: l.line, message: m };
  };

  explain(
    verifier: Verifier,
    problems: Array<{ file: string; line: number; kind: string; message: string }>,
  ): Explanation {
    const status = deliveryOf(
      this.id,
      this.lines.map((l) => l.text),
      verifier,
    );
    const receipts = this.lines.map(({ line, text }) => this.receipt(line, text, verifier, problems));
    const sendDigest = this.sendDigest(verifier);
    const stored = this.stored && {
      file: this.stored.file,
      line: this.stored.line,
      matches_receipt: sendDigest !== undefined && sendDigest === messageDigest(this.stored.message),
    };
    return { id: this.id, ...(stored ? { stored } : {}), ...(status ? { status } : {}), receipts };
  }

  private receipt(
    line: number,
    text: string,
    verifier: Verifier,
    problems: Array<{ file: string; line: number; kind: string; message: string }>,
  ): ExplainedReceipt {
    const parsed = parseCallRecord(text);
    const r = 'reason' in parsed ? undefined : parsed;
    const here = problems
      .filter((p) => p.file === this.callsFile && p.line === line)
      .map((p) => `${p.kind}: ${p.message}`);
    return {
      file: this.callsFile,
      line,
      ...(r ? { seq: r.seq, tool: r.tool, agent: r.agent, at: r.ts } : {}),
      genuine: r !== undefined && isGenuineCall(r, verifier),
      problems: here,
    };
  }

  /** The digest the genuine send receipt of this message signed. */
  private sendDigest(verifier: Verifier): string | undefined {
    for (const { text } of this.lines) {
      const parsed = parseCallRecord(text);
      if ('reason' in parsed || !isGenuineCall(parsed, verifier)) continue;
      const r: CallRecord = parsed;
      if (r.tool === 'send_message' && r.ok && !r.deduplicated && r.message_ids[0] === this.id) return r.digests?.[0];
    }
    return undefined;
  }
}
