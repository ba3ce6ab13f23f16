/**
 * @module
 * A recorded stream (docs/attest.md §10): JSON Lines, written by the client as events
 * arrive, in the order they arrived. The first line declares the type and names the
 * stream the client asked for; every other line is a `chunk` (its receipt and bytes),
 * a `checkpoint` or the `final` statement with its evidence. JSON Lines because a
 * recording is appended while the stream runs: a stream cut short leaves a readable
 * file, which the verifier then calls cut.
 *
 * The recorder writes what arrived, as it arrived — it judges nothing, so a damaged
 * event reaches the verifier, which says what is wrong with it.
 */
import { existsSync, statSync } from 'node:fs';
import { z } from 'zod';
import { checkOutputFile } from '../../core/atomic-write.js';
import { WitnessError } from '../../core/errors.js';
import { openJsonlWriter, type FsyncPolicy } from '../../core/jsonl.js';
import { parseJsonText } from '../receipt.js';
import { decodeBase64Strict } from '../tlog/note.js';
import {
  type ChunkReceipt,
  ChunkReceiptSchema,
  RECORDED_STREAM_TYPE,
  type StreamCheckpoint,
  StreamCheckpointSchema,
  type StreamFinal,
  StreamFinalSchema,
  type StreamRef,
  StreamRefSchema,
} from './format.js';
import { type StreamProblem, streamProblem } from './problems.js';

export const RecordingHeaderSchema = z.strictObject({
  type: z.literal(RECORDED_STREAM_TYPE),
  v: z.literal(1),
  ...StreamRefSchema.shape,
});
export type RecordingHeader = z.infer<typeof RecordingHeaderSchema>;

const BASE64 = z
  .string()
  .refine((s) => decodeBase64Strict(s) !== undefined, 'expected standard base64 (RFC 4648 §4, padded)');

export const RecordedLineSchema = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('chunk'), receipt: ChunkReceiptSchema, bytes: BASE64.describe('the chunk bytes') }),
  StreamCheckpointSchema.extend({ type: z.literal('checkpoint') }),
  StreamFinalSchema.extend({ type: z.literal('final') }),
]);

/** One event of a recording, read and checked, with its line. */
export type RecordedEvent = { line: number } & (
  | { type: 'chunk'; receipt: ChunkReceipt; bytes: Buffer }
  | ({ type: 'checkpoint' } & StreamCheckpoint)
  | ({ type: 'final' } & StreamFinal)
);

export interface ReadRecording {
  /** The stream the client asked for, when the first line declares it. */
  header?: StreamRef;
  events: RecordedEvent[];
  /** Lines that could not be read (MALFORMED, NON_CANONICAL), each with its line. */
  problems: StreamProblem[];
}

/** Records the events of one stream as they arrive, one line each, to `write` (default: kept in `lines`). */
export class StreamRecorder {
  readonly lines: string[] = [];
  readonly #write: (line: string) => void;
  constructor(stream: StreamRef, write?: (line: string) => void) {
    this.#write = write ?? ((line) => this.lines.push(line));
    this.#write(JSON.stringify({ type: RECORDED_STREAM_TYPE, v: 1, ...stream }));
  }
  /** A chunk as received, with the receipt that came with it, then the checkpoint that came with it, if any. */
  chunk(bytes: Uint8Array, receipt: unknown, checkpoint?: unknown): void {
    this.#write(JSON.stringify({ type: 'chunk', receipt, bytes: Buffer.from(bytes).toString('base64') }));
    if (checkpoint !== undefined) this.checkpoint(checkpoint);
  }
  checkpoint(checkpoint: unknown): void {
    this.#write(JSON.stringify(_event('checkpoint', checkpoint)));
  }
  final(final: unknown): void {
    this.#write(JSON.stringify(_event('final', final)));
  }
  /** The recording as JSON Lines text. */
  text(): string {
    return this.lines.map((l) => `${l}\n`).join('');
  }
}

/**
 * The line of an event that arrived as an object: its members and the line's type. Anything
 * else (or an object with a `type` of its own) is kept whole under `value`, which no line
 * shape allows: the verifier reports it as MALFORMED rather than the recorder reshaping it.
 */
function _event(type: 'checkpoint' | 'final', value: unknown): Record<string, unknown> {
  const plain = value !== null && typeof value === 'object' && !Array.isArray(value) && !('type' in value);
  return plain ? { ...(value as Record<string, unknown>), type } : { type, value };
}

/**
 * A recorder appending to `path` as events arrive (core's JSONL writer: each line whole
 * in the file before the call returns), so a client that dies mid-stream leaves the
 * events it had. Close it when the stream ends.
 */
export function recordStreamToFile(
  path: string,
  stream: StreamRef,
  options: { fsync?: FsyncPolicy } = {},
): StreamRecorder & { close(): void } {
  checkOutputFile(path);
  // One recording is one stream: appending a second would make the file no recording at all.
  if (existsSync(path) && statSync(path).size > 0)
    throw new WitnessError('USAGE', `${path} already holds a recording; record each stream to a file of its own.`);
  const writer = openJsonlWriter(path, { fsync: options.fsync ?? 'batch' });
  return Object.assign(new StreamRecorder(stream, (line) => writer.appendLine(line)), { close: () => writer.close() });
}

/**
 * Reads a recording: JSON Lines text, or its lines as parsed values. Lines that are not
 * strict JSON of a known shape are problems with their line, never a thrown error.
 */
export function readRecording(recording: string | Uint8Array | readonly unknown[]): ReadRecording {
  const out: ReadRecording = { events: [], problems: [] };
  const values = Array.isArray(recording) ? recording : _parseLines(recording as string | Uint8Array, out.problems);
  values.forEach((value, i) => {
    if (value === undefined) return; // a line that did not parse: already a problem
    const line = i + 1;
    if (i === 0) {
      const header = RecordingHeaderSchema.safeParse(value);
      if (header.success)
        out.header = { session: header.data.session, task: header.data.task, artifact: header.data.artifact };
      else
        out.problems.push(
          _schemaProblem(
            header.error,
            line,
            `a first line {"type": "${RECORDED_STREAM_TYPE}", "v": 1, "session", "task", "artifact"}`,
          ),
        );
      return;
    }
    const parsed = RecordedLineSchema.safeParse(value);
    if (!parsed.success) {
      out.problems.push(_schemaProblem(parsed.error, line, 'a chunk, checkpoint or final line'));
      return;
    }
    const event = parsed.data;
    if (event.type === 'chunk')
      out.events.push({
        type: 'chunk',
        receipt: event.receipt,
        bytes: decodeBase64Strict(event.bytes) as Buffer,
        line,
      });
    else if (event.type === 'checkpoint')
      out.events.push({ type: 'checkpoint', key_id: event.key_id, note: event.note, line });
    else out.events.push({ type: 'final', statement: event.statement, evidence: event.evidence, line });
  });
  return out;
}

/** Each line's strict JSON value, or undefined where it is not (a problem is added). */
function _parseLines(text: string | Uint8Array, problems: StreamProblem[]): unknown[] {
  const source = typeof text === 'string' ? text : Buffer.from(text).toString('utf8');
  const lines = source.split('\n');
  const torn = lines.at(-1) !== '';
  if (!torn) lines.pop();
  return lines.map((raw, i) => {
    if (torn && i === lines.length - 1) {
      problems.push(
        streamProblem('MALFORMED', 'The last line has no newline: the recording was cut while it was written.', {
          line: i + 1,
        }),
      );
      return undefined;
    }
    const fast = _writerForm(raw);
    if (fast !== undefined) return fast;
    const parsed = parseJsonText(raw, `line ${i + 1}`);
    if (parsed.ok) return parsed.value;
    for (const r of parsed.reasons) problems.push(streamProblem(r.code, r.message, { line: i + 1 }));
    return undefined;
  });
}

/**
 * A line in the recorder's own form — JSON.stringify's — has one reading: a repeated key
 * or another spelling of a value would not survive the round trip. Such lines skip the
 * strict parser (≈ a third of the verifier's time); any other goes through it.
 */
function _writerForm(raw: string): unknown {
  try {
    const value: unknown = JSON.parse(raw);
    return JSON.stringify(value) === raw ? value : undefined;
  } catch {
    return undefined;
  }
}

function _schemaProblem(error: z.ZodError, line: number, expected: string): StreamProblem {
  const issue = error.issues[0];
  const where = issue?.path.length ? `${issue.path.join('.')}: ` : '';
  return streamProblem('MALFORMED', `Line ${line} is not ${expected}: ${where}${issue?.message}.`, { line });
}
