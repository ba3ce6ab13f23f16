/**
 * @module
 * What `verify --witness VKEY` checks the call log against: the largest checkpoint of
 * the log cosigned by that witness, from wherever one is — the checkpoint file given,
 * the witness itself (`--witness-url`, its GET /checkpoint), the copy the servers kept
 * in the mailbox (witnessed.ts) — the log's signature and the witness's cosignature
 * both verified. The largest is taken because it covers the most: a log that is that
 * log or an append-only extension of it also extends every smaller one the witness
 * cosigned. None at all is its own problem (`NOT_WITNESSED`), never a pass; with
 * `withinSeconds`, a cosignature older than that is `WITNESS_STALE`.
 */
import { parseCheckpoint } from '../attest/tlog/checkpoint.js';
import { splitNotes } from '../attest/tlog/note.js';
import { parseNoteVerifierKey } from '../attest/tlog/note.js';
import { fetchWitnessedCheckpoint } from '../attest/tlog/witness-client.js';
import { WitnessError } from '../core/errors.js';
import type { Problem } from '../core/problem.js';
import { readWitnessed } from './witnessed.js';

export interface WitnessRequirement {
  /** The witness's cosigner verifier key (`name+hash+base64`, type 0x04). */
  vkey: string;
  /** Ask the witness at this URL for its newest cosigned checkpoint of the log. */
  url?: string;
  /** The cosignature must be at most this old (seconds). */
  withinSeconds?: number;
}

export interface WitnessedCheckpoint {
  witness: string;
  note: string;
  size: number;
  /** The cosignature's time, POSIX seconds. */
  timestamp: number;
  /** Where it came from (a file, a URL, the mailbox's copy). */
  from: string;
}

export type WitnessFinding =
  | { ok: true; checkpoint: WitnessedCheckpoint; problem?: Problem<'WITNESS_STALE'> }
  | { ok: false; code: 'NOT_WITNESSED'; message: string };

/** Finds the checkpoint `req` asks for (see the module comment); `now` in POSIX seconds. */
export async function findWitnessed(
  dir: string,
  logVkey: string,
  origin: string,
  req: WitnessRequirement,
  options: { checkpoint?: string; now?: number } = {},
): Promise<WitnessFinding> {
  const witness = _witnessKey(req.vkey);
  const candidates: Array<{ text: string; from: string }> = [];
  // A kept file may hold several notes (appended as the log grew): each is a candidate.
  if (options.checkpoint !== undefined)
    for (const text of splitNotes(
      options.checkpoint,
      'The checkpoint file',
      'give what `witness mailbox checkpoint DIR` printed, or a note a witness cosigned',
    ))
      candidates.push({ text, from: 'the --checkpoint file' });
  if (req.url !== undefined) {
    const text = await fetchWitnessedCheckpoint(req.url, origin);
    if (text !== undefined) candidates.push({ text, from: req.url });
  }
  const kept = readWitnessed(dir, req.vkey);
  if (kept?.note) candidates.push({ text: kept.note, from: 'the copy kept in the mailbox (witnessed/)' });
  let best: WitnessedCheckpoint | undefined;
  const refused: string[] = [];
  for (const c of candidates) {
    try {
      const cp = parseCheckpoint(c.text, [logVkey, req.vkey]);
      const co = cp.cosignatures.find((s) => s.name === witness && s.verifier.type === 0x04);
      if (cp.origin !== origin || !co || co.timestamp === undefined) continue;
      if (!best || cp.size > best.size || (cp.size === best.size && co.timestamp > best.timestamp))
        best = { witness, note: c.text, size: cp.size, timestamp: co.timestamp, from: c.from };
    } catch (error) {
      if (!(error instanceof WitnessError)) throw error;
      refused.push(`${c.from}: ${error.message}`);
    }
  }
  if (!best) {
    const where = `${options.checkpoint !== undefined ? 'the --checkpoint file, ' : ''}${req.url !== undefined ? `the witness at ${req.url}, ` : ''}the mailbox's kept copies`;
    const why = refused.length > 0 ? ` (${refused.join('; ')})` : '';
    return {
      ok: false,
      code: 'NOT_WITNESSED',
      message: `No checkpoint of ${origin} cosigned by the witness ${witness} was found in ${where}${why}: nothing shows this log was not cut or rolled back. Run the mailbox servers with --witness URL --witness-key ${witness}+…, or give --witness-url.`,
    };
  }
  const now = options.now ?? Math.floor(Date.now() / 1000);
  if (req.withinSeconds !== undefined && now - best.timestamp > req.withinSeconds) {
    const message = `The newest checkpoint cosigned by ${witness} (size ${best.size}, from ${best.from}) was witnessed ${formatAge(now - best.timestamp)} ago, at ${new Date(best.timestamp * 1000).toISOString()}: older than --witnessed-within ${formatAge(req.withinSeconds)}; entries since then are not witnessed.`;
    return { ok: true, checkpoint: best, problem: { code: 'WITNESS_STALE', message } };
  }
  return { ok: true, checkpoint: best };
}

/** 3h 2m, 10m, 45s. */
export function formatAge(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  const d = Math.floor(s / 86400);
  const h = Math.floor((s % 86400) / 3600);
  const m = Math.floor((s % 3600) / 60);
  const parts = [d && `${d}d`, h && `${h}h`, m && `${m}m`, !d && !h && s % 60 ? `${s % 60}s` : 0].filter(Boolean);
  return parts.length > 0 ? parts.join(' ') : '0s';
}

function _witnessKey(vkey: string): string {
  let v: ReturnType<typeof parseNoteVerifierKey>;
  try {
    v = parseNoteVerifierKey(vkey);
  } catch (error) {
    throw new WitnessError(
      'USAGE',
      `--witness ${JSON.stringify(vkey.slice(0, 80))} is not a note verifier key (NAME+HASH+BASE64): ${(error as Error).message}`,
    );
  }
  if (v.type !== 0x04)
    throw new WitnessError(
      'USAGE',
      `--witness ${v.name} is a log key (type 0x01); give the witness's cosigner key, as \`witness anchor serve\` prints it.`,
    );
  return v.name;
}
