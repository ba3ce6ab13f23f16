/**
 * @module
 * Public API of the mailbox: an MCP server with durable inboxes and a signed call
 * log (mailbox.md §1–§2). Named re-exports only.
 */
export { addAgent, initMailbox, migrateMailbox, recoverMailbox } from './admin.js';
export type { AddedAgent, Migrated } from './admin.js';
export {
  GENESIS,
  LEGACY_LINE_VERSION,
  LINE_VERSION,
  lineHash,
  messageDigest,
  sealCall,
  signedBytes,
  TOOL_NAMES,
  UNKNOWN_TOOL,
} from './call-log.js';
export type { CallEntry, CallReceipt, CallRecord, ChainHead, MailboxToolName, Message, ToolName } from './call-log.js';
export { MAILBOX_FORMAT, readAgents, readConfig, STORE_KINDS } from './config.js';
export type { AgentEntry, InitOptions, MailboxConfig, StoreKind } from './config.js';
export { serveHttp } from './http.js';
export type { HttpMailbox, HttpOptions } from './http.js';
export { configFile, installMailbox, RUNTIMES } from './install/index.js';
export type { InstallOptions, InstallResult, Runtime } from './install/index.js';
export { defaultKeyDir, MAILBOX_DEPLOYER } from './keys.js';
export { DEFAULT_LIMITS } from './limits.js';
export type { MailboxLimits } from './limits.js';
export { AGENT_NAME_PATTERN, agentNameProblem, assertAgentName } from './names.js';
export { assertRegistered, createMailboxServer, createRuntime, SERVER_NAME } from './server.js';
export { serveStdio } from './stdio.js';
export type { SessionEvent, SessionRecord } from './session-log.js';
export type { MailboxRuntime, RuntimeOptions } from './server.js';
export { JsonlStore, openStore, PostgresStore, readSnapshot, SqliteStore } from './store/index.js';
export type { MailboxStore, StoreSnapshot } from './store/index.js';
export { checkTailTarget, formatMessage, tailMailbox } from './tail.js';
export type { TailOptions } from './tail.js';
export { receiptCount, verifyMailbox } from './verify.js';
export type { Explanation, ExplainedReceipt } from './verify-explain.js';
export type { DeliveryReceipt, DeliveryState, DeliveryStatus } from './store/delivery.js';
export type { AckResult, SendInput, SendResult } from './store/types.js';
export { exportMailbox } from './transfer/export.js';
export { importMailbox } from './transfer/import.js';
export type { ImportOptions, ImportResult } from './transfer/import.js';
export { EXPORT_FORMAT } from './transfer/format.js';
export type { MailboxVerifyOptions, ProblemKind, VerifyProblem, VerifyReport } from './verify.js';
export { addCheckpointKey, callLeaf, mailboxCheckpoint, mailboxOrigin, mailboxVerifierKey } from './checkpoint.js';
export {
  DEFAULT_WITNESS_EVERY_RECEIPTS,
  DEFAULT_WITNESS_EVERY_SECONDS,
  DEFAULT_WITNESS_TIMEOUT_SECONDS,
  WitnessSubmitter,
} from './witnessing.js';
export type { WitnessingOptions, WitnessTarget } from './witnessing.js';
export { listWitnessed, readWitnessed, WITNESSED_DIR } from './witnessed.js';
export type { WitnessAnswerRecord, WitnessedRecord } from './witnessed.js';
export { findWitnessed, formatAge } from './verify-witness.js';
export type { WitnessedCheckpoint, WitnessFinding, WitnessRequirement } from './verify-witness.js';
