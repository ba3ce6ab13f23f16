/**
 * @module
 * Public API of the delivery probe (mailbox.md §3). Named re-exports only.
 */
export { adapterFor, PROBE_TARGETS, RUNTIME_ADAPTERS } from './adapters/index.js';
export { pushCell, renderAll, runAll } from './all.js';
export type { AllOptions, AllReport, RuntimeRow, Skipped } from './all.js';
export { BUILTIN_AGENTS, DESCRIPTIONS } from './agents/index.js';
export type { BuiltinAgent } from './agents/index.js';
export { judge, newCanary, taskFor } from './checks.js';
export { MATRIX_DEPLOYER, MATRIX_FORMAT, matrixBytes, matrixOf, signMatrix } from './matrix.js';
export type { Matrix } from './matrix.js';
export { runProbe } from './probe.js';
export type { ProbeOptions } from './probe.js';
export { renderReport } from './render.js';
export { CHECKS, PUSH_PATHS } from './types.js';
export type {
  AgentRun,
  AgentTask,
  CheckName,
  CheckResult,
  CheckEvidence,
  ModelRecord,
  Negotiated,
  Preflight,
  ProbeContext,
  ProbeReport,
  PushAnswer,
  PushPath,
  PushResult,
  RuntimeAdapter,
  Verdict,
} from './types.js';
