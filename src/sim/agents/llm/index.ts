/**
 * @module
 * LLM agents for the consensus game (`--agents llm|embedded|replay`): the agent, the
 * per-run population factory, and JSON parsing of model replies.
 */
export { createLlmAgent, parseModelJson } from './agent.js';
export type { LlmAgentOptions, LlmCallRecord, SamplingOverrides } from './agent.js';
export { AGENT_KINDS, agentKindFor, createRunAgents } from './population.js';
export type { AgentKind, LlmPopulationOptions, LlmRunAgents, LlmRunStats } from './population.js';
export { modelBackends, openModelAgents, replayExperiment } from './model-agents.js';
export type { ModelAgents, ModelAgentsOptions } from './model-agents.js';
