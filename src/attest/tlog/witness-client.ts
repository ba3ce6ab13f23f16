/**
 * @module
 * The client side of c2sp.org/tlog-witness: a log (the mailbox, a signed sweep) submits
 * its new checkpoint with a consistency proof from the size the witness last cosigned,
 * and gets back cosignature lines. A 409 names the witness's size: the log builds a
 * proof from there and submits again (`submitCheckpoint` does that once when given the
 * log's leaf hashes).
 */
import { WitnessError } from '../../core/errors.js';
import { type HttpTextReply, httpText } from '../../core/http-client.js';
import { consistencyProofOfHashes } from '../../core/tlog/merkle.js';
import { type NoteVerifier, openNote, parseNoteVerifierKey } from './note.js';

export type SubmitResult =
  | {
      ok: true /** The cosignature lines, `— NAME BASE64\n` each. */;
      cosignatures: string /** The checkpoint note with them appended. */;
      note: string;
    }
  | { ok: false; status: number /** On 409: the size the witness holds. */; witnessSize?: number; message: string };

export interface SubmitOptions {
  /** The size the witness last cosigned for this log (0 the first time). */
  oldSize: number;
  /** The consistency proof from `oldSize` to the checkpoint's size. */
  proof?: readonly Uint8Array[];
  /** The log's leaf hashes (at least the checkpoint's size): on a 409 the proof is rebuilt from the witness's size and sent once more. */
  leafHashes?: readonly Uint8Array[];
  /** When given, a 200 answer must hold a valid cosignature by one of these (verifier key texts or verifiers), else the result is not ok. */
  witnessKeys?: readonly (string | NoteVerifier)[];
  /** Abort after this many ms (default 10 s). */
  timeoutMs?: number;
}

/**
 * Submits `checkpoint` (a signed checkpoint note) to the witness at `url` (its
 * submission prefix, e.g. http://127.0.0.1:4500).
 * @example await submitCheckpoint('http://127.0.0.1:4500', note, { oldSize: 0, leafHashes })
 */
export async function submitCheckpoint(url: string, checkpoint: string, options: SubmitOptions): Promise<SubmitResult> {
  let proof =
    options.proof ??
    (options.leafHashes
      ? consistencyProofOfHashes(options.leafHashes.slice(0, _size(checkpoint)), options.oldSize)
      : []);
  let result = await _post(url, checkpoint, options.oldSize, proof, options.timeoutMs ?? 10_000);
  if (
    !result.ok &&
    result.witnessSize !== undefined &&
    options.leafHashes &&
    result.witnessSize !== options.oldSize &&
    result.witnessSize <= _size(checkpoint)
  ) {
    proof = consistencyProofOfHashes(options.leafHashes.slice(0, _size(checkpoint)), result.witnessSize);
    result = await _post(url, checkpoint, result.witnessSize, proof, options.timeoutMs ?? 10_000);
  }
  if (result.ok && options.witnessKeys) {
    const keys = options.witnessKeys.map((k) => (typeof k === 'string' ? parseNoteVerifierKey(k) : k));
    try {
      openNote(`${checkpoint.slice(0, checkpoint.indexOf('\n\n') + 1)}\n${result.cosignatures}`, keys);
    } catch (error) {
      if (!(error instanceof WitnessError)) throw error;
      return {
        ok: false,
        status: 200,
        message: `The witness answered, but not with a valid cosignature by a key given: ${error.message}`,
      };
    }
  }
  return result;
}

async function _post(
  url: string,
  checkpoint: string,
  oldSize: number,
  proof: readonly Uint8Array[],
  timeoutMs: number,
): Promise<SubmitResult> {
  const body = `old ${oldSize}\n${proof.map((p) => `${Buffer.from(p).toString('base64')}\n`).join('')}\n${checkpoint}`;
  let res: HttpTextReply;
  try {
    res = await httpText(`${url.replace(/\/+$/, '')}/add-checkpoint`, {
      method: 'POST',
      body,
      headers: { 'Content-Type': 'text/plain; charset=utf-8' },
      timeoutMs,
    });
  } catch (cause) {
    throw new WitnessError(
      'IO',
      `Cannot reach the witness at ${url}: ${(cause as Error).message}. Check the URL and that it runs (witness anchor serve).`,
      { cause },
    );
  }
  const text = res.text;
  if (res.status === 200) {
    if (!/^(— \S+ \S+\n)+$/.test(text))
      return { ok: false, status: 200, message: 'The witness answered 200 without cosignature lines.' };
    return { ok: true, cosignatures: text, note: checkpoint + text };
  }
  if (
    res.status === 409 &&
    (res.headers['content-type'] ?? '').startsWith('text/x.tlog.size') &&
    /^(0|[1-9][0-9]*)\n$/.test(text)
  ) {
    const witnessSize = Number(text.trim());
    return {
      ok: false,
      status: 409,
      witnessSize,
      message: `The witness holds size ${witnessSize} for this log; submit with a proof from there.`,
    };
  }
  return { ok: false, status: res.status, message: text.trim().slice(0, 500) || `HTTP ${res.status}` };
}

function _size(checkpoint: string): number {
  return Number(checkpoint.split('\n')[1]);
}

/**
 * Asks the witness at `url` for the newest checkpoint of `origin` it cosigned (its
 * `GET /checkpoint?origin=…`, docs/witness.md): the note with its cosignature, or
 * undefined when it holds none. The caller verifies it (`parseCheckpoint`).
 * @example const note = await fetchWitnessedCheckpoint('http://127.0.0.1:4500', 'witness.mailbox/mb_…')
 */
export async function fetchWitnessedCheckpoint(
  url: string,
  origin: string,
  options: { timeoutMs?: number } = {},
): Promise<string | undefined> {
  let res: HttpTextReply;
  try {
    res = await httpText(`${url.replace(/\/+$/, '')}/checkpoint?origin=${encodeURIComponent(origin)}`, {
      timeoutMs: options.timeoutMs ?? 10_000,
    });
  } catch (cause) {
    throw new WitnessError(
      'IO',
      `Cannot reach the witness at ${url}: ${(cause as Error).message}. Check the URL and that it runs (witness anchor serve).`,
      { cause },
    );
  }
  const text = res.text;
  if (res.status === 404) return undefined;
  if (res.status !== 200)
    throw new WitnessError(
      'IO',
      `The witness at ${url} answered ${res.status} to GET /checkpoint: ${text.trim().slice(0, 300)}`,
    );
  if (text.length > 65536)
    throw new WitnessError(
      'INVALID_INPUT',
      `The witness at ${url} answered GET /checkpoint with over 64 KiB, which is not a checkpoint.`,
    );
  return text;
}
