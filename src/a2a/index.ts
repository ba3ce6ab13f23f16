/**
 * @module
 * Public API of `agent-witness/a2a` (docs/a2a.md): A2A v1.0 agents with attested
 * results — signed Agent Cards checked against your own key directory, the child
 * agent on `@a2a-js/sdk` answering with Tasks whose artifacts carry receipts, kept in a
 * durable task store, the parent's fail-closed co-signing service, the MCP evidence
 * tool, the parent's delegation, following its answer and the one check of it (a
 * Message, or a Task's artifacts), the delegation record, experiment E12 with its
 * re-verification, and streamed results: the mapping of chunk receipts onto
 * artifact-update events, the child's streamed release and the parent's check of a
 * recorded stream with the answer.
 */
export { policyBackend, serveChildAgent } from './agent.js';
export type { AgentBackend, ChildAgent, ChildAgentOptions } from './agent.js';
export { COMPLETED_STATE, verifyAnswer, verifyMessageAnswer, verifyTaskArtifacts } from './answer.js';
export type { AnswerCheck, AnswerExpectation, AnswerProblem, WireAnswer } from './answer.js';
export { ARTIFACT_BYTES_TYPE, artifactBytes, artifactText } from './artifact.js';
export type { ArtifactRecord, TaskRef, WireArtifact } from './artifact.js';
export {
  buildAgentCard,
  CARD_PATH,
  cardDeployer,
  cardPayload,
  declaresStreaming,
  fetchAgentCard,
  JSONRPC_PATH,
  parseCardText,
  signAgentCard,
  verifyAgentCard,
} from './card.js';
export type {
  BuildCardOptions,
  CardJson,
  CardReason,
  CardReasonCode,
  CardSignature,
  CardVerifyResult,
} from './card.js';
export {
  CosignService,
  httpCosign,
  httpGrant,
  readAdminTokenFile,
  STREAMED_GRANT_EDGES,
  serveCosigner,
} from './cosigner.js';
export type { CosignerServer, CosignerServerOptions, Grant } from './cosigner.js';
export { conditionParts, E12_CONDITIONS, E12_KIND, runE12 } from './e12.js';
export { formatE12Summary, LATENCY_PARTS, pairedMedian, summarise } from './e12-summary.js';
export type { E12Condition, E12Forgery, E12Options, E12Results, E12Summary, E12Trial } from './e12.js';
export {
  E12_PROBLEM_CODES,
  isE12Results,
  trialAnswer,
  trialBytes,
  verifyE12Results,
  verifyTrial,
} from './e12-verify.js';
export type { E12Problem, E12ProblemCode, E12VerifyOptions, E12VerifyResult } from './e12-verify.js';
export type { ServerAccessOptions } from './access.js';
export {
  ATTESTED_RESULTS_EXTENSION,
  CONDITIONS,
  DELEGATION_KEY,
  ERROR_KEY,
  EVIDENCE_KEY,
  TIMINGS_KEY,
} from './metadata.js';
export type { ChildTimings, Condition, Delegation } from './metadata.js';
export { followAnswer, wireAnswer } from './follow.js';
export type { FollowedChild } from './follow.js';
export { llmBackend, openAiCompatibleBackend } from './llm-backend.js';
export { delegate, delegationOf, delegationRequest, discoverChild, signTask } from './parent.js';
export type { DelegationResult, DiscoveredChild, Latency, ParentOptions } from './parent.js';
export { DEFAULT_SEND_TIMEOUT_MS, sendTask } from './send.js';
export type { SendTaskOptions, SendTaskResult } from './send.js';
export {
  DELEGATION_RECORD_TYPE,
  DelegationRecordSchema,
  delegationRecordJsonSchema,
  verifyDelegationRecord,
} from './delegation-record.js';
export type { DelegationRecord, RecordVerifyOptions, RecordVerifyResult } from './delegation-record.js';
export {
  CHUNK_KEY,
  chunkBytes,
  chunkMetadata,
  readArtifactUpdate,
  recordArtifactUpdate,
  STREAM_CHECKPOINT_KEY,
  STREAM_FINAL_KEY,
  streamedParts,
  streamedText,
  streamOfEvent,
} from './stream.js';
export type { ArtifactUpdateJson, ReadArtifactUpdate } from './stream.js';
export { checkStreams, receiveStream, verifyStreamedAnswer } from './stream-answer.js';
export type { ReceivedStream, ReceiveStreamOptions, StreamsCheck } from './stream-answer.js';
export { cutAnswer, DEFAULT_STREAM_RELEASE, STREAM_RELEASE_POLICIES, streamAnswer } from './stream-release.js';
export type { PublishChunk, StreamReleaseOptions } from './stream-release.js';
export { connectEvidenceTool, EVIDENCE_TOOL, evidenceFor, serveEvidenceTool } from './tool-server.js';
export type { Evidence, EvidenceClient, ToolServer } from './tool-server.js';
