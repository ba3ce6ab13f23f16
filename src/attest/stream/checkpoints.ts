/**
 * @module
 * A stream's checkpoints, as the verifier sees them: each a C2SP note the releasing
 * runtime signed mid-stream, read with a key of the verifier's own directory, then
 * recomputed against the chunks received. A checkpoint proves the chunks before it even
 * when the stream is cut later; and one the final tree does not extend (another root
 * at its size, or more chunks than the stream ended with) shows the runtime showed the
 * client something it did not end up signing.
 */
import { WitnessError } from '../../core/errors.js';
import type { MerkleTree } from '../../core/tlog/tree.js';
import type { KeyDirectory, TrustedKey } from '../key-directory.js';
import { keyProblem, type RevocationPolicy } from '../key-status.js';
import { parseCheckpoint, parseCheckpointBody } from '../tlog/checkpoint.js';
import { NOTE_TYPE, type NoteProblem, type NoteVerifier, noteVerifierOf } from '../tlog/note.js';
import type { StreamCheckpoint } from './format.js';
import { type StreamProblem, streamProblem } from './problems.js';

/** A checkpoint whose signature verified: the tree head it signs. */
export interface CheckedHead {
  line: number;
  size: number;
  root: Buffer;
  /** Who signed it: the key of the verifier's directory, and its deployer. */
  keyId: string;
  deployer: string;
}

export interface CheckpointKeys {
  /** The stream's origin: a checkpoint of another is not this stream's. */
  origin: string;
  directory: KeyDirectory;
  now: number;
  revocation: RevocationPolicy;
  /**
   * The final receipt's deployer and issue time, when it arrived: its runtime signs the
   * checkpoints too. Without it, the first checkpoint that verifies names the deployer
   * every other one must be.
   */
  releaser?: { deployer: string; issuedAt: number };
}

/** The heads of the checkpoints whose signatures verify under a trusted key; the others as problems. */
export function readCheckpoints(
  checkpoints: readonly (StreamCheckpoint & { line: number })[],
  keys: CheckpointKeys,
): { heads: CheckedHead[]; problems: StreamProblem[] } {
  const heads: CheckedHead[] = [];
  const problems: StreamProblem[] = [];
  const verifiers = new Map<string, NoteVerifier>();
  let deployer = keys.releaser?.deployer;
  for (const cp of checkpoints) {
    const at = { line: cp.line };
    const key = keys.directory.get(cp.key_id);
    if (!key) {
      problems.push(
        streamProblem(
          'UNKNOWN_KEY',
          `The checkpoint on line ${cp.line} is signed by key ${cp.key_id}, which is not in the verifier's key directory.`,
          at,
        ),
      );
      continue;
    }
    const trust = _keyProblems(key, cp.line, keys, deployer);
    problems.push(...trust);
    const verifier = verifiers.get(key.kid) ?? _noteVerifier(keys.origin, key);
    verifiers.set(key.kid, verifier);
    const read = _readNote(cp.note, verifier, keys.origin, cp.line);
    if ('problem' in read) problems.push(read.problem);
    else if (trust.length === 0) {
      heads.push({ line: cp.line, ...read, keyId: key.kid, deployer: key.deployer });
      deployer ??= key.deployer;
    }
  }
  return { heads, problems };
}

/**
 * Each verified head against the chunks received: the tree of the first `size` chunks
 * (those that lead without a break) must have its root. Returns how many chunks the
 * checkpoints prove: the largest size that matched.
 */
export function checkHeads(
  heads: readonly CheckedHead[],
  tree: MerkleTree,
  signedSize: number | null,
): { proven: number; provenBy?: CheckedHead; problems: StreamProblem[] } {
  let proven = 0;
  let provenBy: CheckedHead | undefined;
  const problems: StreamProblem[] = [];
  for (const head of heads) {
    const at = { line: head.line };
    if (signedSize !== null && head.size > signedSize) {
      problems.push(
        streamProblem(
          'TRUNCATED',
          `The checkpoint on line ${head.line} signs ${head.size} chunks, but the final receipt ends the stream at ${signedSize}: chunks the client was shown were rolled back.`,
          at,
        ),
      );
    } else if (head.size <= tree.size) {
      if (tree.root(head.size).equals(head.root)) {
        if (head.size > proven) [proven, provenBy] = [head.size, head];
      } else
        problems.push(
          streamProblem(
            'INCONSISTENT',
            `The first ${head.size} chunks received do not have the root the checkpoint on line ${head.line} signed for ${head.size}: a chunk among them was changed, dropped, inserted or reordered, or the stream forked after the checkpoint.`,
            at,
          ),
        );
    }
    // A head past the chunks that lead without a break cannot be recomputed: the gap is reported as missing.
  }
  return provenBy ? { proven, provenBy, problems } : { proven, problems };
}

function _keyProblems(key: TrustedKey, line: number, keys: CheckpointKeys, deployer?: string): StreamProblem[] {
  const out: StreamProblem[] = [];
  if (deployer !== undefined && key.deployer !== deployer)
    out.push(
      streamProblem(
        'WRONG_DEPLOYER',
        `The checkpoint on line ${line} is signed by ${key.kid} of ${key.deployer}, but the stream is ${deployer}'s (${keys.releaser ? 'its final receipt' : 'its first checkpoint'}): one runtime releases a stream.`,
        { line },
      ),
    );
  // A checkpoint carries no time of its own; it comes before the final receipt (or, in a cut stream, before now).
  const problem = keyProblem(key, keys.releaser?.issuedAt ?? keys.now, keys.now, keys.revocation);
  if (problem) out.push(streamProblem(problem.code, `Checkpoint on line ${line}: ${problem.message}`, { line }));
  return out;
}

function _noteVerifier(origin: string, key: TrustedKey): NoteVerifier {
  const x = key.key.export({ format: 'jwk' }).x as string;
  return noteVerifierOf(origin, NOTE_TYPE.ed25519, Buffer.from(x, 'base64url'));
}

function _readNote(
  note: string,
  verifier: NoteVerifier,
  origin: string,
  line: number,
): { size: number; root: Buffer } | { problem: StreamProblem } {
  try {
    const cp = parseCheckpoint(note, [verifier]);
    return { size: cp.size, root: cp.root };
  } catch (error) {
    if (!(error instanceof WitnessError)) throw error;
    const kind = (error.data as { problem?: NoteProblem } | undefined)?.problem;
    const declared = _declaredOrigin(note);
    if (declared !== undefined && declared !== origin)
      return {
        problem: streamProblem(
          'STREAM_MISMATCH',
          `The checkpoint on line ${line} is of ${declared}, not of this stream (${origin}).`,
          { line },
        ),
      };
    const code = kind === 'MALFORMED' ? 'MALFORMED' : 'BAD_SIGNATURE';
    return { problem: streamProblem(code, `The checkpoint on line ${line}: ${error.message}`, { line }) };
  }
}

/** The origin line of a note's checkpoint text, if it reads as one. */
function _declaredOrigin(note: string): string | undefined {
  const end = note.lastIndexOf('\n\n');
  try {
    return end < 0 ? undefined : parseCheckpointBody(note.slice(0, end + 1)).origin;
  } catch {
    return undefined;
  }
}
