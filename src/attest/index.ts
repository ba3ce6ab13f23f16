/**
 * @module
 * Public API of `agent-witness/attest`: release receipts, the verifier's key
 * directory, nonce stores, the three ancestry constructions, the verifier with reason
 * codes, DSSE export, key files and the one Signer/Verifier, domain tags (attest.md).
 * The adversary matrix — code that forges receipts — is not here but in
 * `agent-witness/attest/testing`.
 */
export { checkLink, checkRoot } from './ancestry/chain.js';
export { checkCosignatures, createCosigner, delegationGrant } from './ancestry/dag.js';
export type { Cosigner, CosignGrant } from './ancestry/dag.js';
export { ancestryRoot, proveAncestor, verifyAncestorProof } from './ancestry/merkle.js';
// The tree itself is core's; re-exported for users of the Merkle ancestry.
export {
  inclusionProof,
  leafHash,
  MerkleFrontier,
  merkleRoot,
  nodeHash,
  verifyInclusion,
} from '../core/tlog/merkle.js';
export type { AncestorProof } from './ancestry/merkle.js';
export { DOMAIN_TAGS, signedMessage, taggedBytes } from './domain.js';
export type { DomainTag, RecordKind } from './domain.js';
export { BUNDLE_TYPE, bundleOf, evidenceOf, readEvidenceFile, verifyBundle } from './evidence.js';
export type { EvidenceBundle } from './evidence.js';
export { receiptJsonSchema } from './json-schema.js';
export {
  addKey,
  emptyDirectory,
  KeyDirectory,
  loadKeyDirectory,
  parseDirectory,
  readDirectoryFile,
  revokeKey,
  rotateKey,
  writeDirectoryFile,
} from './key-directory.js';
export type { DirectoryEntry, DirectoryFile, TrustedKey } from './key-directory.js';
export type { RevocationPolicy } from './key-status.js';
export {
  hmacKeyId,
  keyFileOf,
  newHmacKey,
  newSigningKey,
  parseKeyFile,
  publicJwk,
  readKeyFile,
  readPublicJwk,
  writeKeyFile,
} from './keys.js';
export type { HmacKey, KeyFile, KeyMaterial, PublicJwk, ReadKeyOptions, SigningKey } from './keys.js';
export { ed25519Signer, ed25519Verifier, signerFor } from './signature.js';
export type { SignatureAlg, Signer, Verifier } from './signature.js';
export { MemoryNonceStore, openNonceStore, SqliteNonceStore } from './nonce-store.js';
export { NONCE_MIGRATIONS, PostgresNonceStore } from './nonce-store-pg.js';
export { DATABASE_URL_ENV, isPostgresUrl, redactUrl, resolveDatabaseUrl } from './postgres.js';
export type { NonceStore } from './nonce-store.js';
export { ARCHIVE_CODES, codesFor, EVIDENCE_CODES, LOG_CODES, REASON_CODES, TASK_CODES } from './reasons.js';
export type { EvidenceCode, LogCode, Reason, ReasonCode, TaskCode } from './reasons.js';
export {
  CONSTRUCTIONS,
  evidencePath,
  PATH_TYPE,
  isoTime,
  LATEST_TIME,
  MAX_DEPTH,
  parseJsonText,
  parseReceipt,
  RECEIPT_TAGS,
  ReceiptSchema,
  receiptDigest,
  SignatureSchema,
  signingBytes,
  unsignedRecordProblems,
} from './receipt.js';
export type { Construction, PreparedReceipt, Receipt, Signature, UnsignedReceipt } from './receipt.js';
export { createReleaseSigner, MAX_TTL_MS } from './signer.js';
export type { CosignRequest, ReleaseContext, ReleaseSigner, ReleaseSignerOptions } from './signer.js';
export { exportDsse, IN_TOTO_PAYLOAD_TYPE, pae, PREDICATE_TYPE, verifyDsse } from './dsse.js';
export type { DsseEnvelope } from './dsse.js';
export {
  acceptPath,
  checkPath,
  MAX_PATH_LENGTH,
  MAX_REASONS_PER_CODE,
  MAX_SKEW_MS,
  verifyEvidence,
  verifyPath,
} from './verify.js';
export type { PathCheck, VerifyOptions, VerifyResult } from './verify.js';
export { readNamedFile, statNamedFile } from './files.js';
export { checkpointBody, checkpointFor, parseCheckpoint, parseCheckpointBody } from './tlog/checkpoint.js';
export type { LogCheckpoint, SignedCheckpoint, TreeHead } from './tlog/checkpoint.js';
export { CheckpointCheck, checkLogAgainstCheckpoint } from './tlog/check.js';
export type { LogCheck } from './tlog/check.js';
export { cosignatureVerifier, cosigner } from './tlog/cosignature.js';
export type { CosignerOptions } from './tlog/cosignature.js';
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
} from './tlog/note.js';
export type {
  NoteProblem,
  NoteSignature,
  NoteSigner,
  NoteType,
  NoteVerifier,
  OpenedNote,
  OpenNoteOptions,
  VerifiedSignature,
} from './tlog/note.js';
// Consistency and inclusion proofs over leaf hashes (the tree is core's).
export {
  consistencyProofOfHashes,
  EMPTY_ROOT,
  inclusionProofOfHashes,
  rootOfHashes,
  verifyConsistency,
  verifyInclusionOfHash,
} from '../core/tlog/merkle.js';
export { DEFAULT_WITNESS_MAX_REQUEST_BYTES, serveWitness, Witness } from './tlog/witness.js';
export type { WitnessAnswer, WitnessOptions, WitnessServer, WitnessServerOptions } from './tlog/witness.js';
export { submitCheckpoint } from './tlog/witness-client.js';
export type { SubmitOptions, SubmitResult } from './tlog/witness-client.js';
