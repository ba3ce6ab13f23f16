/**
 * @module
 * Public API of `agent-witness/sim`: the consensus game, rule-based and model-backed
 * agents, experiments, signed results and their verification, statistics.
 */
export { askAll, InvalidAnswerError } from './answers.js';
export { BYZANTINE_STRATEGIES, createPolicyAgent, HONEST_POLICIES } from './agents/policy/index.js';
export {
  createLlmAgent,
  createRunAgents,
  modelBackends,
  openModelAgents,
  parseModelJson,
  replayExperiment,
} from './agents/llm/index.js';
export type {
  LlmAgentOptions,
  LlmCallRecord,
  LlmPopulationOptions,
  LlmRunAgents,
  LlmRunStats,
  ModelAgents,
  ModelAgentsOptions,
  SamplingOverrides,
} from './agents/llm/index.js';
export { DEFAULT_PACK_DIR, loadPromptPack, PROMPT_CUES, TEMPLATE_VARIABLES } from './prompts/pack.js';
export type { PackManifest, PromptCue, PromptPack } from './prompts/pack.js';
export { renderRequest, renderSchema } from './prompts/render.js';
export type { ByzantineStrategy, HonestPolicy, PolicyChoice } from './agents/policy/index.js';
export { mergeResults } from './experiment/merge.js';
export { cellKey, expandCells, parseShard, planRuns } from './experiment/plan.js';
export type { Cell, PlannedRun, Shard } from './experiment/plan.js';
export { PRESETS, preset } from './experiment/presets.js';
export { playRun, policyAgents } from './experiment/play.js';
export type { AgentFactory, AgentProvenance, CassetteLink, RunAgents } from './experiment/play.js';
export { RESULTS_FORMAT_VERSION, toRecord } from './experiment/record.js';
export { checkRecord, RunRecordSchema } from './experiment/record-schema.js';
export type { RunRecord } from './experiment/record.js';
export type { RunTally } from './experiment/run-tally.js';
export { readResults, runExperiment } from './experiment/run.js';
export type { ExperimentProgress, ExperimentRunSummary, RunExperimentOptions } from './experiment/run.js';
export { loadExperimentFile } from './experiment/load.js';
export { ExperimentSchema, parseExperiment } from './experiment/schema.js';
export type { Experiment, ExperimentInput } from './experiment/schema.js';
export { CheckpointSchema, CheckpointsFileSchema, checkpointPath, LineReceiptSchema } from './transcript/format.js';
export type { Checkpoint, CheckpointsFile, LineReceipt } from './transcript/format.js';
export { RESULTS_REASON_CODES } from './transcript/reasons.js';
export type { ResultsProblem, ResultsReasonCode } from './transcript/reasons.js';
export { MAX_PROBLEMS_PER_CODE, verifyResults } from './transcript/verify.js';
export type { ResultsVerifyResult, VerifyResultsOptions } from './transcript/verify.js';
export type { SignResultsOptions } from './transcript/writer.js';
export { runGame } from './game.js';
export type { AgentSeat, RunGameOptions } from './game.js';
export { sealRound, summarizeRound } from './network.js';
export { classifyOutcome, shouldStop } from './outcome.js';
export type { OutcomeInput } from './outcome.js';
export {
  CellSummaries,
  convergenceRound,
  GroupedSummaries,
  normalQuantile,
  OUTCOMES,
  SummaryAccumulator,
  summarizeCells,
  summarizeGroups,
  wilsonInterval,
} from './stats.js';
export { PairedRuns } from './paired.js';
export type { PairedComparison, PairedInput } from './paired.js';
export { newcombePairedInterval } from './paired-interval.js';
export type { PairedCounts } from './paired-interval.js';
export type {
  CellSummary,
  ConvergenceInput,
  ConvergenceSummary,
  Interval,
  RateSummary,
  RunScalars,
  RunsSummary,
  SummaryInput,
  TalliedRun,
} from './stats.js';
export type * from './types.js';
