/**
 * @module
 * Public API of `agent-witness/a2a` (docs/a2a.md): A2A v1.0 agents with attested
 * results — signed Agent Cards checked against your own key directory, the child
 * agent on `@a2a-js/sdk` answering with Tasks whose artifacts carry receipts, the
 * parent's fail-closed co-signing service, the MCP evidence tool, the parent's
 * delegation and its check of a task's artifacts, and experiment E12 with its
 * re-verification.
 */
export { policyBackend, serveChildAgent } from './agent.js';
export type { AgentBackend, ChildAgent, ChildAgentOptions } from './agent.js';
export { followAnswer, verifyAnswer } from './answer.js';
export type { ArtifactRecord, VerifiedAnswer } from './answer.js';
export {
  ARTIFACT_BYTES_TYPE,
  artifactBytes,
  artifactText,
  COMPLETED_STATE,
  verifyTaskArtifacts,
} from './artifact.js';
export type { ArtifactCheck, TaskProblem, TaskRef, TaskVerifyResult, WireArtifact } from './artifact.js';
export {
  buildAgentCard,
  CARD_PATH,
  cardPayload,
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
export { CosignService, httpCosign, serveCosigner } from './cosigner.js';
export type { CosignerServer, CosignerServerOptions, Grant } from './cosigner.js';
export { E12_KIND, formatE12Summary, LATENCY_PARTS, pairedMedian, runE12, summarise } from './e12.js';
export type { E12Artifact, E12Forgery, E12Options, E12Results, E12Summary, E12Trial } from './e12.js';
export { E12_PROBLEM_CODES, isE12Results, trialBytes, verifyE12Results } from './e12-verify.js';
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
export { llmBackend, openAiCompatibleBackend } from './llm-backend.js';
export { delegate } from './parent.js';
export type { DelegationResult, Latency, ParentOptions } from './parent.js';
export { connectEvidenceTool, EVIDENCE_TOOL, evidenceFor, serveEvidenceTool } from './tool-server.js';
export type { Evidence, EvidenceClient, ToolServer } from './tool-server.js';
