/**
 * @module
 * The lines a killed signed sweep wrote after its last checkpoint. No signature covers
 * them: anyone who can write the file can edit one, recompute its `content_sha256` and
 * the `prev` digests after it (none needs the key), and a resume that checked only
 * digests and chain would then sign the forgery. So a resume never vouches for them:
 * it cuts them from the file and plays their runs again. A rule-based run replays
 * deterministically from its seed, so its new line is compared with the old one byte
 * for byte (kept when equal, a forgery when not); a model-backed run is not
 * reproducible, so its line is dropped and the run re-run. This module keeps the
 * account of which, for the resume's report.
 */
import type { RunRecord } from '../experiment/record.js';

/** The resume's report on the lines past the last signed checkpoint. */
export interface PastCheckpointReport {
  /** Lines past the last signed checkpoint when the resume opened the file. */
  lines: number;
  /** The first of them (1-based line of the file); absent when there were none. */
  firstLine?: number;
  /** Rule-based runs played again whose line came out byte for byte the same: kept. */
  kept: number;
  /** Rule-based runs played again whose line came out different: the old line was changed after it was written; the replay replaced it. */
  forged: number;
  /** The first forged line (its line number in the file as it was) and its run. */
  firstForged?: { line: number; run: string };
  /** Model-backed runs (or runs with a wall-clock budget): not reproducible, so their lines were dropped and the runs played again. */
  rerun: number;
  /** Lines dropped whose run this session has not played again yet (it was stopped first): the next resume plays them. */
  pending: number;
}

interface _Old {
  line: number;
  run: string;
  contentSha256: string;
  reproducible: boolean;
}

/** The account: filled as the resume reads the file, settled as the sweep writes each run again. */
export class PastCheckpoint {
  readonly #old = new Map<number, _Old>();
  #firstLine: number | undefined;
  #lines = 0;
  #kept = 0;
  #forged = 0;
  #rerun = 0;
  #firstForged: { line: number; run: string } | undefined;

  /** A line past the checkpoint, as read (its content digest already checked against its receipt). */
  add(line: number, record: RunRecord, contentSha256: string): void {
    this.#firstLine ??= line;
    this.#lines++;
    this.#old.set(record.seq, { line, run: record.id, contentSha256, reproducible: isReproducible(record) });
  }

  get lines(): number {
    return this.#lines;
  }

  /** The sweep played the run at `seq` again; its new line's content hashes to `contentSha256`. */
  replayed(seq: number, contentSha256: string): void {
    const old = this.#old.get(seq);
    if (!old) return;
    this.#old.delete(seq);
    if (!old.reproducible) this.#rerun++;
    else if (old.contentSha256 === contentSha256) this.#kept++;
    else {
      this.#forged++;
      this.#firstForged ??= { line: old.line, run: old.run };
    }
  }

  report(): PastCheckpointReport {
    const r: PastCheckpointReport = {
      lines: this.#lines,
      kept: this.#kept,
      forged: this.#forged,
      rerun: this.#rerun,
      pending: this.#old.size,
    };
    if (this.#firstLine !== undefined) r.firstLine = this.#firstLine;
    if (this.#firstForged) r.firstForged = { ...this.#firstForged };
    return r;
  }
}

/**
 * Whether playing the run again gives the same line: rule-based agents are a function
 * of the seed; a model's answers are not, and a wall-clock budget makes the outcome
 * depend on the machine's speed.
 */
export function isReproducible(record: Pick<RunRecord, 'llm' | 'config'>): boolean {
  return record.llm === undefined && record.config.budget?.seconds === undefined;
}
