/**
 * @module
 * Public API of the delivery probe (mailbox.md §3). Named re-exports only.
 */
export { adapterFor, PROBE_TARGETS, RUNTIME_ADAPTERS } from './adapters/index.js';
export { renderAll, runAll } from './all.js';
export type { AllOptions, AllReport, RuntimeRow } from './all.js';
export { BUILTIN_AGENTS, DESCRIPTIONS } from './agents/index.js';
export type { BuiltinAgent } from './agents/index.js';
export { judge, newCanary, taskFor } from './checks.js';
export { runProbe } from './probe.js';
export type { ProbeOptions } from './probe.js';
export { renderReport } from './render.js';
export { CHECKS } from './types.js';
export type { AgentRun, AgentTask, CheckName, CheckResult, CheckEvidence, Preflight, ProbeContext, ProbeReport, RuntimeAdapter, Verdict } from './types.js';
