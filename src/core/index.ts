/**
 * @module
 * Public API of `agent-witness/core`: the primitives every part of Witness shares.
 */
export { syncFolder, writeAll, writeFileAtomic } from './atomic-write.js';
export type { AtomicWriteOptions, WriteAllOptions } from './atomic-write.js';
export { decodeBase64urlStrict } from './base64url.js';
export { canonicalBytes, canonicalize } from './canonical-json.js';
export { ERROR_CODES, exitCodeFor, isWitnessError, WitnessError } from './errors.js';
export type { WitnessErrorCode, WitnessErrorOptions } from './errors.js';
export { canonicalSha256Hex, sha256, sha256Hex } from './hash.js';
export { openJsonlWriter, parseJsonl, readJsonl } from './jsonl.js';
export type { FsyncPolicy, JsonlContents, JsonlLine, JsonlProblem, JsonlWriter, JsonlWriterOptions } from './jsonl.js';
export { pickProblem, problemWithin } from './problem.js';
export type { Problem } from './problem.js';
export { Rng } from './rng.js';
export {
  generateEd25519KeyPair,
  keyIdFor,
  privateKeyObject,
  publicKeyObject,
  signEd25519,
  verifyEd25519,
} from './ed25519.js';
export type { Ed25519KeyPair } from './ed25519.js';
export { checkPrivateFile, readableByOthers } from './private-file.js';
export { parseStrictJson } from './strict-json.js';
export type { StrictJsonOptions } from './strict-json.js';
export { checkWellFormedText, checkWellFormedValue, loneSurrogateIndex } from './text.js';
export { hostCheck, isLoopbackOrigin, LOOPBACK_HOSTS, requestGuard } from './http-guard.js';
export type { RequestGuardOptions } from './http-guard.js';
export {
  closeServer,
  INTERNAL_ERROR_MESSAGE,
  listen,
  MAX_REQUEST_BYTES_FLAG,
  parseErrorMessage,
  readBody,
  requestLimit,
  sendJson,
  sendJsonRpcError,
  tooLargeMessage,
} from './http-server.js';
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
} from './tlog/merkle.js';
