/**
 * @module
 * Cassettes: every request and reply of a sweep in a JSONL file, so a sweep can be
 * replayed exactly with no model. `openCassetteRecorder` wraps backends and appends one line per
 * successful call; `ReplayBackend` answers from such a file by call key and refuses a
 * request whose prompt or settings differ from the recorded one. The first line is a
 * header carrying what the caller needs to rebuild the sweep (the experiment).
 *
 * Line forms: `{"cassette":1,"meta":{…}}` then `{"key":"<run>/<agent>/r<n>/<kind>/<try>","request":{…},"reply":{…}}`.
 * When a key appears twice (a run interrupted and played again), the later line wins.
 */
import { existsSync, statSync } from 'node:fs';
import { canonicalize } from '../core/canonical-json.js';
import { WitnessError } from '../core/errors.js';
import { type ByteDigest, hashFileInto } from '../core/hash.js';
import { openJsonlWriter, readJsonl } from '../core/jsonl.js';
import { type ChatBackend, type ChatCallOptions, type ChatReply, type ChatRequest, callKeyText } from './types.js';

export const CASSETTE_VERSION = 1;

interface _Entry {
  request: ChatRequest;
  reply: ChatReply;
}

export interface CassetteRecorder {
  /** `inner`, with every successful call appended to the cassette. */
  wrap(inner: ChatBackend): ChatBackend;
  /** SHA-256 and length of the cassette's bytes so far (what a signed transcript names). */
  digest(): ByteDigest;
  /** Makes every byte written so far durable. */
  sync(): void;
  close(): void;
}

/** Opens `path` for recording (appending to an existing cassette); `meta` goes in the header of a new file. */
export function openCassetteRecorder(path: string, meta: Record<string, unknown>): CassetteRecorder {
  const fresh = !existsSync(path) || statSync(path).size === 0;
  const writer = openJsonlWriter(path, { fsync: 'batch' });
  // After the writer cut a torn tail: the bytes already there, then every line appended.
  const hash = hashFileInto(path);
  const append = (value: unknown) => {
    const text = JSON.stringify(value);
    writer.appendLine(text);
    hash.update(`${text}\n`);
  };
  if (fresh) append({ cassette: CASSETTE_VERSION, meta });
  return {
    wrap: (inner) => ({
      async complete(request: ChatRequest, options: ChatCallOptions): Promise<ChatReply> {
        const reply = await inner.complete(request, options);
        append({ key: callKeyText(options.key), request, reply });
        return reply;
      },
      close: () => inner.close(),
    }),
    digest: () => hash.digest(),
    sync: () => writer.sync(),
    close: () => writer.close(),
  };
}

/** Reads a cassette's header `meta`. */
export function readCassetteMeta(path: string): Record<string, unknown> {
  return _load(path).meta;
}

/** Answers from a recorded cassette, never from a model. */
export class ReplayBackend implements ChatBackend {
  private readonly entries: Map<string, _Entry>;
  readonly meta: Record<string, unknown>;
  private readonly path: string;

  constructor(path: string) {
    const loaded = _load(path);
    this.entries = loaded.entries;
    this.meta = loaded.meta;
    this.path = path;
  }

  async complete(request: ChatRequest, { key, signal }: ChatCallOptions): Promise<ChatReply> {
    signal?.throwIfAborted();
    const text = callKeyText(key);
    const entry = this.entries.get(text);
    if (!entry) {
      throw new WitnessError(
        'NOT_FOUND',
        `The cassette ${this.path} has no reply for call ${text}: it was recorded with other settings, or the recording stopped before this call.`,
      );
    }
    if (canonicalize(entry.request) !== canonicalize(request)) {
      throw new WitnessError(
        'INVALID_INPUT',
        `Call ${text} differs from the recording in ${this.path} (${_firstDifference(entry.request, request)}): replay needs the same prompts, prompt pack and sampling settings.`,
      );
    }
    return { ...entry.reply, usage: { ...entry.reply.usage } };
  }

  async close(): Promise<void> {}
}

function _load(path: string): { meta: Record<string, unknown>; entries: Map<string, _Entry> } {
  if (!existsSync(path))
    throw new WitnessError('NOT_FOUND', `Cassette ${path} does not exist. Record one with --record ${path}.`);
  const { records, problems } = readJsonl(path);
  if (problems.length > 0)
    throw new WitnessError('CORRUPT', `Cassette ${path} line ${problems[0]!.line}: ${problems[0]!.message}.`);
  const first = records[0]?.value as { cassette?: unknown; meta?: unknown } | undefined;
  if (!first || first.cassette !== CASSETTE_VERSION || typeof first.meta !== 'object' || first.meta === null) {
    throw new WitnessError(
      'INVALID_INPUT',
      `${path} is not a Witness cassette (version ${CASSETTE_VERSION}): its first line must be {"cassette":${CASSETTE_VERSION},"meta":{…}}.`,
    );
  }
  const entries = new Map<string, _Entry>();
  for (const { value, line } of records.slice(1)) {
    const e = value as { key?: unknown; request?: unknown; reply?: unknown };
    if (typeof e.key !== 'string' || typeof e.request !== 'object' || typeof e.reply !== 'object' || e.reply === null) {
      throw new WitnessError('CORRUPT', `Cassette ${path} line ${line}: expected {key, request, reply}.`);
    }
    entries.set(e.key, { request: e.request as ChatRequest, reply: e.reply as ChatReply });
  }
  return { meta: first.meta as Record<string, unknown>, entries };
}

function _firstDifference(recorded: ChatRequest, now: ChatRequest): string {
  if (recorded.temperature !== now.temperature || recorded.maxTokens !== now.maxTokens) return 'sampling settings';
  if (canonicalize(recorded.schema) !== canonicalize(now.schema)) return 'the JSON schema';
  return 'the prompt text';
}
