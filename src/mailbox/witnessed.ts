/**
 * @module
 * Where a mailbox keeps what its witnesses answered: `DIR/witnessed/<witness>.json`,
 * one file per witness (every store kind: the folder is the one place every server of
 * the mailbox and its verifier both see). Each holds the newest cosigned checkpoint
 * (the note, with the witness's cosignature) and the last answer, refusals included,
 * which `witness mailbox status DIR` shows. Written with the one atomic write; a file
 * is only replaced by one whose checkpoint is at least as large, so two servers
 * sharing the folder never move it backwards. What is kept here rolls back with the
 * folder: a verifier that distrusts the folder asks the witness itself
 * (`--witness-url`).
 */
import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseNoteVerifierKey } from '../attest/tlog/note.js';
import { writeFileAtomic } from '../core/atomic-write.js';
import { sha256Hex } from '../core/hash.js';

export const WITNESSED_DIR = 'witnessed';

/** The last answer of a witness to a submission. */
export interface WitnessAnswerRecord {
  at: string;
  ok: boolean;
  /** HTTP status, absent for a network error. */
  status?: number;
  /** The checkpoint size submitted. */
  size: number;
  message: string;
}

export interface WitnessedRecord {
  /** The witness's cosigner verifier key (`name+hash+base64`). */
  vkey: string;
  url: string;
  /** The newest cosigned checkpoint: its size and the note with the cosignature. */
  size?: number;
  note?: string;
  last?: WitnessAnswerRecord;
}

/** The file of the witness named by `vkey` (its name made file-safe, and its key hash so two keys of one name differ). */
export function witnessedPath(dir: string, vkey: string): string {
  const name = parseNoteVerifierKey(vkey)
    .name.replace(/[^A-Za-z0-9._-]/g, '_')
    .slice(0, 80);
  return join(dir, WITNESSED_DIR, `${name}-${sha256Hex(vkey).slice(0, 8)}.json`);
}

export function readWitnessed(dir: string, vkey: string): WitnessedRecord | undefined {
  return _read(witnessedPath(dir, vkey));
}

/** Every witness record in the folder. */
export function listWitnessed(dir: string): WitnessedRecord[] {
  const folder = join(dir, WITNESSED_DIR);
  if (!existsSync(folder)) return [];
  return readdirSync(folder)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .flatMap((f) => _read(join(folder, f)) ?? []);
}

/** Records an answer; with `cosigned`, also the new newest checkpoint (never a smaller one than kept). */
export function recordWitnessAnswer(
  dir: string,
  vkey: string,
  url: string,
  last: WitnessAnswerRecord,
  cosigned?: { size: number; note: string },
): void {
  const path = witnessedPath(dir, vkey);
  const kept = _read(path);
  const record: WitnessedRecord = { ...kept, vkey, url, last };
  if (cosigned && cosigned.size >= (kept?.size ?? 0)) Object.assign(record, cosigned);
  mkdirSync(join(dir, WITNESSED_DIR), { recursive: true });
  writeFileAtomic(path, `${JSON.stringify(record, null, 2)}\n`);
}

function _read(path: string): WitnessedRecord | undefined {
  try {
    const value = JSON.parse(readFileSync(path, 'utf8')) as WitnessedRecord;
    return value && typeof value.vkey === 'string' ? value : undefined;
  } catch {
    return undefined;
  }
}
