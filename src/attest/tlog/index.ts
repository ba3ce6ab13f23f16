/**
 * @module
 * Transparency-log formats: what makes a log's completeness checkable. A hash chain
 * proves order, not that nothing was cut off the end; a checkpoint (the log's size and
 * Merkle root, signed) held by someone else — a witness that cosigns it only after a
 * consistency proof — does. Formats are C2SP's, readable by Go's
 * golang.org/x/mod/sumdb/note and sumdb/tlog (test/attest/tlog-go.test.ts runs them).
 *
 * The API, in the order a log uses it:
 *
 * ```ts
 * import { checkpointFor, parseCheckpoint, checkLogAgainstCheckpoint, consistencyProofOfHashes,
 *   verifyConsistency, leafHash, MerkleFrontier, noteVerifierKey } from '../attest/tlog/index.js';
 *
 * // Writing: hash each entry once, keep a frontier, sign its root now and then.
 * const frontier = new MerkleFrontier();
 * frontier.appendLeafHash(leafHash(lineBytes));
 * const note = checkpointFor(origin, frontier.size, frontier.root(), signingKey); // key file, name = origin
 * const vkey = noteVerifierKey(origin, Buffer.from(signingKey.publicKey, 'base64url')); // give to verifiers
 *
 * // Reading: verify the note, then the log against it (TRUNCATED / INCONSISTENT codes).
 * const cp = parseCheckpoint(note, [vkey]); // throws INVALID_INPUT, data.problem MALFORMED | BAD_SIGNATURE | UNVERIFIED
 * const check = await checkLogAgainstCheckpoint(leafHashes, cp); // {ok} | {code:'TRUNCATED', firstMissing} | {code:'INCONSISTENT', size}
 *
 * // Between two checkpoints (what a witness checks):
 * const proof = consistencyProofOfHashes(allLeafHashes, oldSize);
 * verifyConsistency(oldSize, newSize, oldRoot, newRoot, proof); // boolean
 * ```
 *
 * Cosignatures (`cosigner`, `cosignatureVerifier`) are cosignature/v1. A witness
 * (`Witness`, `serveWitness`; CLI `witness anchor serve`) cosigns a checkpoint only
 * after a consistency proof from the last one it cosigned; a log submits with
 *
 * ```ts
 * const r = await submitCheckpoint(witnessUrl, note, { oldSize: lastCosignedSize, leafHashes, witnessKeys: [witnessVkey] });
 * if (r.ok) keep(r.note); // the checkpoint with the witness's cosignature appended
 * ```
 */
export { checkpointBody, checkpointFor, parseCheckpoint, parseCheckpointBody } from './checkpoint.js';
export type { LogCheckpoint, SignedCheckpoint, TreeHead } from './checkpoint.js';
export { CheckpointCheck, checkLogAgainstCheckpoint } from './check.js';
export type { LogCheck } from './check.js';
export { cosignatureVerifier, cosigner } from './cosignature.js';
export type { CosignerOptions } from './cosignature.js';
export {
  cosignedMessage,
  isValidKeyName,
  MAX_NOTE_SIGNATURES,
  NOTE_TYPE,
  noteKeyId,
  noteSignatureLine,
  noteSigner,
  noteVerifierKey,
  noteVerifierOf,
  openNote,
  parseNoteVerifierKey,
  signatureLines,
  signNote,
  splitNotes,
} from './note.js';
export type {
  NoteProblem,
  NoteSignature,
  NoteSigner,
  NoteType,
  NoteVerifier,
  OpenedNote,
  OpenNoteOptions,
  VerifiedSignature,
} from './note.js';
export {
  consistencyProof,
  consistencyProofOfHashes,
  EMPTY_ROOT,
  inclusionProof,
  inclusionProofOfHashes,
  leafHash,
  MerkleFrontier,
  merkleRoot,
  nodeHash,
  rootOfHashes,
  verifyConsistency,
  verifyInclusion,
  verifyInclusionOfHash,
} from '../../core/tlog/merkle.js';
export { MerkleTree } from '../../core/tlog/tree.js';
export { DEFAULT_WITNESS_MAX_REQUEST_BYTES, MAX_PROOF_LINES, serveWitness, Witness } from './witness.js';
export type { WitnessAnswer, WitnessOptions, WitnessServer, WitnessServerOptions } from './witness.js';
export { fetchWitnessedCheckpoint, submitCheckpoint } from './witness-client.js';
export type { SubmitOptions, SubmitResult } from './witness-client.js';
export { SqliteWitnessState } from './witness-store.js';
export type { StoredCheckpoint, WitnessDecision, WitnessState } from './witness-store.js';
export { PostgresWitnessState, WITNESS_MIGRATIONS } from './witness-store-pg.js';
