/**
 * @module
 * Chat backends for model-backed agents: OpenAI-compatible servers, embedded
 * llama.cpp, and cassettes for recording and exact replay. Imports only core.
 */
export { CASSETTE_VERSION, openCassetteRecorder, ReplayBackend, readCassetteMeta } from './cassette.js';
export type { CassetteRecorder } from './cassette.js';
export { EmbeddedBackend, toGrammarSchema } from './embedded.js';
export { importNodeLlamaCpp, NODE_LLAMA_CPP_VERSION } from './node-llama-cpp.js';
export type { EmbeddedOptions } from './embedded.js';
export { EndpointPool } from './endpoint-pool.js';
export { checkJson } from './json-check.js';
export { OpenAiCompatibleBackend, STRUCTURED_OUTPUT_MODES, THINKING_SWITCHES } from './openai-compatible.js';
export type { OpenAiCompatibleOptions, StructuredOutputMode, ThinkingSwitch } from './openai-compatible.js';
export { callKeyText } from './types.js';
export type {
  ChatBackend,
  ChatCallKey,
  ChatCallOptions,
  ChatMessage,
  ChatReply,
  ChatRequest,
  ChatUsage,
  JsonSchema,
} from './types.js';
