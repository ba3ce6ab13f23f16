/**
 * @module
 * A transparency-log witness (c2sp.org/tlog-witness): `add-checkpoint` over HTTP. For
 * each log it is configured with (a verifier key whose name is the log's origin) it
 * keeps the newest checkpoint it cosigned (witness-store.ts) and cosigns a new one only
 * when the log's signature verifies and a consistency proof from the stored size does:
 * so it never cosigns a rollback or a fork, across restarts too. The answer is a
 * timestamped cosignature/v1 line.
 *
 * Status codes are the spec's: 400 a malformed request (or an old size above the
 * checkpoint's), 403 no signature by the log's key verifies, 404 an unknown origin,
 * 409 the old size is not the stored one (body: the stored size, `text/x.tlog.size`)
 * or the same size with another root, 422 the consistency proof fails. Bodies are
 * plain text, never the request echoed.
 *
 * The protocol has no read; `GET /checkpoint?origin=O` is this witness's own: the
 * newest checkpoint it cosigned for O with the cosignature it answered then (its
 * timestamp is when it was witnessed, not when it was read), so a verifier can ask the
 * witness itself — a log whose database was rolled back also lost any checkpoint kept
 * in it. 404 when it holds none for O (or O is not one of its logs).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { WitnessError } from '../../core/errors.js';
import { type FrontRequest, serveFront, TEXT_ERRORS } from '../../core/http-front.js';
import { requestLimit } from '../../core/http-server.js';
import { EMPTY_ROOT, verifyConsistency } from '../../core/tlog/merkle.js';
import { parseCheckpoint } from './checkpoint.js';
import {
  decodeBase64Strict,
  type NoteProblem,
  type NoteSigner,
  type NoteVerifier,
  parseNoteVerifierKey,
  signatureLines,
} from './note.js';
import { isPostgresUrl } from '../postgres.js';
import { SqliteWitnessState, type WitnessState } from './witness-store.js';

/** The spec's limit on consistency proof lines. */
export const MAX_PROOF_LINES = 63;
/** A request is an old size, ≤ 63 hashes and a checkpoint: a few KB. */
export const DEFAULT_WITNESS_MAX_REQUEST_BYTES = 64 * 1024;

export interface WitnessAnswer {
  status: number;
  contentType: string;
  body: string;
}

export interface WitnessOptions {
  /** The logs' verifier keys (`origin+hash+base64`): the key name is the log's origin. */
  logs: readonly (string | NoteVerifier)[];
  /** The witness's cosigner (`cosigner(key, name)`). */
  cosigner: NoteSigner;
  /** The witness's state: a SQLite file path, or a `postgres://` URL (several witness hosts sharing it). */
  state: string;
}

/** The protocol without the HTTP: answers one add-checkpoint body. */
export class Witness {
  readonly #logs: Map<string, NoteVerifier[]>;
  readonly #cosigner: NoteSigner;
  readonly #store: WitnessState;

  /** Opens the state (SQLite or PostgreSQL) and returns the witness. */
  static async open(options: WitnessOptions): Promise<Witness> {
    const logs = Witness.#verifiers(options.logs);
    const store = isPostgresUrl(options.state)
      ? await (await import('./witness-store-pg.js')).PostgresWitnessState.open(options.state)
      : new SqliteWitnessState(options.state);
    return new Witness(logs, options.cosigner, store);
  }

  static #verifiers(logs: WitnessOptions['logs']): Map<string, NoteVerifier[]> {
    const out = new Map<string, NoteVerifier[]>();
    for (const log of logs) {
      const v = typeof log === 'string' ? parseNoteVerifierKey(log) : log;
      if (v.type !== 0x01)
        throw new WitnessError(
          'USAGE',
          `The log key ${v.name} is a cosigner key (type 0x04); a log signs its checkpoints with an Ed25519 note key (type 0x01).`,
        );
      out.set(v.name, [...(out.get(v.name) ?? []), v]);
    }
    if (out.size === 0)
      throw new WitnessError(
        'USAGE',
        'A witness needs at least one log: give --log ORIGIN+HASH+KEY (the verifier key the log publishes).',
      );
    return out;
  }

  private constructor(logs: Map<string, NoteVerifier[]>, cosigner: NoteSigner, store: WitnessState) {
    this.#logs = logs;
    this.#cosigner = cosigner;
    this.#store = store;
  }

  get cosignerKey(): string {
    return this.#cosigner.verifierKey;
  }

  get origins(): string[] {
    return [...this.#logs.keys()];
  }

  /** The newest checkpoint cosigned for `origin`: its note carries the cosignature this witness answered. */
  async latest(origin: string): Promise<{ size: number; root: Buffer; note: string } | undefined> {
    return this.#store.latest(origin);
  }

  /** `GET /checkpoint?origin=…`: the newest cosigned checkpoint of a log, as a note (200), or 404. */
  async readCheckpoint(origin: string | null): Promise<WitnessAnswer> {
    if (!origin) return _text(400, 'Name the log: GET /checkpoint?origin=ORIGIN (the first line of its checkpoints).');
    if (!this.#logs.has(origin))
      return _text(404, `Unknown log ${JSON.stringify(origin.slice(0, 200))}: this witness is not configured for it.`);
    const latest = await this.#store.latest(origin);
    if (!latest) return _text(404, `This witness has cosigned no checkpoint of ${origin} yet.`);
    return { status: 200, contentType: 'text/plain; charset=utf-8', body: latest.note };
  }

  async addCheckpoint(body: Buffer): Promise<WitnessAnswer> {
    const request = _parseRequest(body);
    if ('status' in request) return request;
    const { oldSize, proof, note } = request;
    const end = note.indexOf('\n');
    if (end <= 0) return _text(400, 'The checkpoint must begin with its origin line.');
    const origin = note.slice(0, end);
    const keys = this.#logs.get(origin);
    if (!keys)
      return _text(404, `Unknown log ${JSON.stringify(origin.slice(0, 200))}: this witness is not configured for it.`);
    let checkpoint: ReturnType<typeof parseCheckpoint>;
    try {
      checkpoint = parseCheckpoint(note, keys);
    } catch (error) {
      if (!(error instanceof WitnessError) || error.code !== 'INVALID_INPUT') throw error;
      const problem = error.data?.problem as NoteProblem | undefined;
      return _text(problem === 'MALFORMED' || problem === undefined ? 400 : 403, error.message);
    }
    if (oldSize > checkpoint.size)
      return _text(400, `The old size ${oldSize} is larger than the checkpoint's size ${checkpoint.size}.`);
    const text = body.toString('utf8');
    return this.#store.update(origin, (current) => {
      const stored = current?.size ?? 0;
      if (oldSize !== stored) return { result: _conflict(stored) };
      if (current && checkpoint.size === current.size) {
        if (!checkpoint.root.equals(current.root)) {
          return { result: _conflict(stored), refused: { reason: 'same size, another root (a fork)', request: text } };
        }
      } else if (!verifyConsistency(oldSize, checkpoint.size, current?.root ?? EMPTY_ROOT, checkpoint.root, proof)) {
        return {
          refused: { reason: 'consistency proof does not verify', request: text },
          result: _text(
            422,
            `The consistency proof from size ${oldSize} to ${checkpoint.size} does not verify against the checkpoint this witness holds: the log is not an append-only extension of it (a fork or a rollback), or the proof is wrong.`,
          ),
        };
      }
      // The cosignature is made before the commit, the answer sent after it: a crash in
      // between loses an answer, never the state it vouches for.
      const lines = signatureLines(checkpoint.body, [this.#cosigner]);
      // Kept with its cosignature, so GET /checkpoint shows when it was witnessed.
      return {
        store: { origin, size: checkpoint.size, root: checkpoint.root, note: note + lines },
        result: _text(200, lines),
      };
    });
  }

  async close(): Promise<void> {
    await this.#store.close();
  }
}

/** `old N`, proof lines, a blank line, the checkpoint (c2sp.org/tlog-witness "add-checkpoint"). */
function _parseRequest(body: Buffer): { oldSize: number; proof: Buffer[]; note: string } | WitnessAnswer {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(body);
  } catch {
    return _text(400, 'The request body is not UTF-8 text.');
  }
  const blank = text.indexOf('\n\n');
  if (blank < 0)
    return _text(400, 'The request body must be "old SIZE", proof lines, a blank line, then the checkpoint.');
  const [oldLine = '', ...proofLines] = text.slice(0, blank).split('\n');
  const old = /^old (0|[1-9][0-9]*)$/.exec(oldLine);
  if (!old || !Number.isSafeInteger(Number(old[1])))
    return _text(400, 'The first line must be "old SIZE" (decimal, no leading zeroes).');
  if (proofLines.length > MAX_PROOF_LINES)
    return _text(400, `At most ${MAX_PROOF_LINES} consistency proof lines are allowed.`);
  const proof: Buffer[] = [];
  for (const line of proofLines) {
    const hash = decodeBase64Strict(line);
    if (hash === undefined || hash.length !== 32)
      return _text(400, 'Each consistency proof line must be the base64 of one 32-byte hash.');
    proof.push(hash);
  }
  const oldSize = Number(old[1]);
  if (oldSize === 0 && proof.length > 0)
    return _text(400, 'The consistency proof must be empty when the old size is 0.');
  return { oldSize, proof, note: text.slice(blank + 2) };
}

function _text(status: number, body: string): WitnessAnswer {
  return { status, contentType: 'text/plain; charset=utf-8', body: body.endsWith('\n') ? body : `${body}\n` };
}

function _conflict(size: number): WitnessAnswer {
  return { status: 409, contentType: 'text/x.tlog.size', body: `${size}\n` };
}

export interface WitnessServerOptions {
  host?: string;
  port?: number;
  allowedHosts?: string[];
  allowedOrigins?: string[];
  maxRequestBytes?: number;
}

export interface WitnessServer {
  url: string;
  close(): Promise<void>;
}

/** Serves `witness` at POST /add-checkpoint (the submission prefix is the server's root) and GET /checkpoint?origin=…. */
export async function serveWitness(witness: Witness, options: WitnessServerOptions = {}): Promise<WitnessServer> {
  const limit = requestLimit(options.maxRequestBytes, DEFAULT_WITNESS_MAX_REQUEST_BYTES);
  const http = await serveFront(
    { what: 'the witness', ...options, limit, errors: TEXT_ERRORS, keepAliveTimeout: 60_000 },
    (req, res, request) => _route(witness, req, res, request),
  );
  return { url: http.url, close: () => http.close() };
}

/** After the front's Host/Origin guard: the two endpoints, then the body. */
async function _route(
  witness: Witness,
  req: IncomingMessage,
  res: ServerResponse,
  request: FrontRequest,
): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://witness');
  if (url.pathname === '/checkpoint') {
    if (req.method !== 'GET')
      return request.refuse(405, 'METHOD_NOT_ALLOWED', 'checkpoint takes GET.', { Allow: 'GET' });
    return _send(res, await witness.readCheckpoint(url.searchParams.get('origin')));
  }
  if (req.url !== '/add-checkpoint')
    return request.refuse(
      404,
      'NOT_FOUND',
      'Not found: this witness answers POST /add-checkpoint and GET /checkpoint?origin=ORIGIN.',
    );
  if (req.method !== 'POST')
    return request.refuse(405, 'METHOD_NOT_ALLOWED', 'add-checkpoint takes POST.', { Allow: 'POST' });
  const body = await request.bytes();
  if (body === undefined) return;
  _send(res, await witness.addCheckpoint(body));
}

function _send(res: ServerResponse, answer: WitnessAnswer, headers: Record<string, string> = {}): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  res.writeHead(answer.status, {
    ...headers,
    'Content-Type': answer.contentType,
    'Content-Length': Buffer.byteLength(answer.body),
  });
  res.end(answer.body);
}
