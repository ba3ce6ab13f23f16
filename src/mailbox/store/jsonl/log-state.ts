/**
 * @module
 * What a JSONL store process knows about the shared call log: the head its next
 * line chains to, how much of the file it has read, and the idempotency keys in it.
 * Before each commit it catches up with the lines other processes appended, a page
 * at a time (lines.ts), so memory does not grow with the log.
 */
import { fstatSync, ftruncateSync } from 'node:fs';
import { type CallEntry, type ChainHead, EMPTY_HEAD, lineHash, type sealCall } from '../../call-log.js';
import { scanLines } from '../lines.js';
import { type IdempotentSend, type KnownAck, learnAck, learnIdempotency } from '../ops.js';

export class LogState {
  head: ChainHead = EMPTY_HEAD;
  /** Bytes of calls.jsonl read (and written) so far. */
  size = 0;
  readonly idempotency = new Map<string, IdempotentSend>();
  /** Acknowledged message ids: where the ack line is (checked when used) or that this process sealed it. */
  readonly acks = new Map<string, KnownAck>();

  /** Reads the lines appended since (under the lock); cuts a torn tail left by a crashed writer. */
  catchUp(fd: number): void {
    const size = fstatSync(fd).size;
    if (size < this.size) this.forget(); // shrank under us (a rollback or an edit): start over
    if (size === this.size) return;
    const end = scanLines(
      fd,
      this.size,
      (line) => {
        const record = _parseRecord(line.text);
        // A damaged line is chained over as stored (its hash), as verify does.
        this.head = {
          seq: typeof record?.seq === 'number' ? record.seq : this.head.seq + 1,
          hash: line.hash ?? lineHash(line.text ?? ''),
        };
        if (record) {
          learnIdempotency(this.idempotency, record, { at: line.start });
          learnAck(this.acks, record, { at: line.start });
        }
      },
      { hashLong: true },
    );
    if (end < size) ftruncateSync(fd, end);
    this.size = end;
  }

  /** Takes a line sealed after the current head as the new head. */
  advance(sealed: ReturnType<typeof sealCall>): void {
    this.head = sealed.head;
    learnIdempotency(this.idempotency, sealed.record, { sealed: true });
    learnAck(this.acks, sealed.record, { sealed: true });
  }

  /** Forgets everything: the next catchUp reads the log from the start. */
  forget(): void {
    this.head = EMPTY_HEAD;
    this.size = 0;
    this.idempotency.clear();
    this.acks.clear();
  }
}

function _parseRecord(text: string | undefined): ({ seq?: number; ts?: string } & Partial<CallEntry>) | undefined {
  if (text === undefined) return undefined;
  try {
    const record = JSON.parse(text) as unknown;
    return typeof record === 'object' && record !== null
      ? (record as { seq?: number } & Partial<CallEntry>)
      : undefined;
  } catch {
    return undefined;
  }
}
