/**
 * @module
 * C2SP checkpoints (c2sp.org/tlog-checkpoint): a signed note whose text is the log's
 * origin, its size in decimal, the base64 RFC 6962 root at that size, and optional
 * non-empty extension lines. The log signs with its key under the origin as key name;
 * witnesses add cosignatures (cosignature.ts) to the same note.
 *
 * `parseCheckpoint` accepts a checkpoint only when a key named as its origin verified
 * it; signatures by the other known keys (cosigners) are returned beside it.
 */
import { WitnessError } from '../../core/errors.js';
import type { SigningKey } from '../keys.js';
import {
  decodeBase64Strict,
  type NoteProblem,
  type NoteSigner,
  type NoteVerifier,
  type OpenedNote,
  type OpenNoteOptions,
  noteSigner,
  openNote,
  parseNoteVerifierKey,
  signNote,
  type VerifiedSignature,
} from './note.js';

/** A tree head: what a checkpoint says. */
export interface TreeHead {
  origin: string;
  size: number;
  /** The 32-byte root hash. */
  root: Buffer;
}

export interface LogCheckpoint extends TreeHead {
  /** Extension lines (without newlines), usually none. */
  extensions: string[];
}

export interface SignedCheckpoint extends LogCheckpoint {
  /** The whole note as given. */
  note: string;
  /** The note text (the checkpoint body, final newline included). */
  body: string;
  /** The log's own verified signature(s): keys named as the origin. */
  logSignatures: VerifiedSignature[];
  /** Verified signatures by other known keys (cosigners). */
  cosignatures: VerifiedSignature[];
  /** The parsed note, with the signatures of unknown keys. */
  opened: OpenedNote;
}

/** The checkpoint text (note body) of a tree head. */
export function checkpointBody(head: TreeHead & { extensions?: readonly string[] }): string {
  if (!head.origin || head.origin.includes('\n'))
    throw new WitnessError('USAGE', 'A checkpoint origin is one non-empty line.');
  if (!Number.isSafeInteger(head.size) || head.size < 0)
    throw new WitnessError('USAGE', `A checkpoint size is a whole number of leaves, not ${head.size}.`);
  if (head.root.length !== 32)
    throw new WitnessError('USAGE', `A checkpoint root is 32 bytes, not ${head.root.length}.`);
  for (const e of head.extensions ?? [])
    if (!e || e.includes('\n')) throw new WitnessError('USAGE', 'A checkpoint extension is one non-empty line.');
  return [head.origin, String(head.size), head.root.toString('base64'), ...(head.extensions ?? [])]
    .map((l) => `${l}\n`)
    .join('');
}

/**
 * A checkpoint of the log `origin` at `size` with `root`, signed by `key` under the
 * origin as key name.
 * @example checkpointFor('example.com/log', 2, root, readKeyFile('log-key.json'))
 */
export function checkpointFor(
  origin: string,
  size: number,
  root: Uint8Array,
  key: SigningKey | NoteSigner,
  extensions: readonly string[] = [],
): string {
  const signer = 'sign' in key ? key : noteSigner(key, origin);
  if (signer.name !== origin)
    throw new WitnessError(
      'USAGE',
      `A log signs its checkpoints under its origin ${JSON.stringify(origin)}, not ${JSON.stringify(signer.name)}.`,
    );
  return signNote(checkpointBody({ origin, size, root: Buffer.from(root), extensions }), [signer]);
}

/** Parses a checkpoint body strictly (three lines at least: origin, size, root). */
export function parseCheckpointBody(body: string): LogCheckpoint {
  if (!body.endsWith('\n')) throw _malformed('its text does not end with a newline');
  const lines = body.slice(0, -1).split('\n');
  if (lines.length < 3) throw _malformed('it has fewer than three lines (origin, size, root hash)');
  const [origin, sizeText, rootText, ...extensions] = lines as [string, string, string, ...string[]];
  if (origin === '') throw _malformed('its origin line is empty');
  if (!/^(0|[1-9][0-9]*)$/.test(sizeText))
    throw _malformed(
      `its size line ${JSON.stringify(sizeText.slice(0, 40))} is not a decimal number without leading zeroes`,
    );
  const size = Number(sizeText);
  if (!Number.isSafeInteger(size))
    throw _malformed(`its size ${sizeText.slice(0, 40)} is larger than this verifier reads (2^53 − 1)`);
  const root = decodeBase64Strict(rootText);
  if (root === undefined || root.length !== 32) throw _malformed('its root hash line is not the base64 of 32 bytes');
  if (extensions.some((e) => e === '')) throw _malformed('it has an empty extension line');
  return { origin, size, root, extensions };
}

/**
 * Reads a signed checkpoint: the note's signatures are checked against `verifiers`
 * (`NoteVerifier`s or verifier key texts), and one by a key named as the origin must
 * verify. Throws `INVALID_INPUT` with `data.problem` (`MALFORMED`, `BAD_SIGNATURE`,
 * `UNVERIFIED`).
 */
export function parseCheckpoint(
  note: string | Uint8Array,
  verifiers: readonly (NoteVerifier | string)[],
  options: OpenNoteOptions = {},
): SignedCheckpoint {
  const known = verifiers.map((v) => (typeof v === 'string' ? parseNoteVerifierKey(v) : v));
  const opened = openNote(note, known, options);
  const checkpoint = parseCheckpointBody(opened.text);
  const logSignatures = opened.verified.filter((s) => s.name === checkpoint.origin && s.verifier.type === 0x01);
  if (logSignatures.length === 0) {
    throw new WitnessError(
      'INVALID_INPUT',
      `The checkpoint of ${checkpoint.origin} is not signed by a known key of that log (a key named ${checkpoint.origin}); check the log's verifier key.`,
      { data: { problem: 'UNVERIFIED' satisfies NoteProblem, origin: checkpoint.origin } },
    );
  }
  const cosignatures = opened.verified.filter((s) => !logSignatures.includes(s));
  return {
    ...checkpoint,
    note: typeof note === 'string' ? note : Buffer.from(note).toString('utf8'),
    body: opened.text,
    logSignatures,
    cosignatures,
    opened,
  };
}

function _malformed(why: string): WitnessError {
  return new WitnessError('INVALID_INPUT', `Not a checkpoint: ${why}.`, {
    data: { problem: 'MALFORMED' satisfies NoteProblem },
  });
}
