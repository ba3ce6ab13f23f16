/**
 * @module
 * A model-backed child (`--agent llm`): any `ChatBackend` from src/llm — here an
 * OpenAI-compatible server — answers from the task and the tool's evidence with a
 * JSON-schema-constrained reply. Like the policy child it never sees a key: the runtime
 * releases the text it returns. A reply that is not JSON or breaks the schema fails the
 * task (nothing is released).
 */
import { EmbeddedBackend } from '../llm/embedded.js';
import { checkJson } from '../llm/json-check.js';
import { OpenAiCompatibleBackend } from '../llm/openai-compatible.js';
import type { ChatBackend, JsonSchema } from '../llm/types.js';
import { WitnessError } from '../core/errors.js';
import type { AgentBackend } from './agent.js';

const ANSWER_SCHEMA: JsonSchema = {
  type: 'object',
  properties: {
    verdict: { type: 'string', enum: ['ACCEPT', 'REJECT'] },
    reason: { type: 'string', minLength: 1, maxLength: 400 },
  },
  required: ['verdict', 'reason'],
  additionalProperties: false,
};

const SYSTEM =
  'You inspect production lots. Answer with JSON {"verdict": "ACCEPT" | "REJECT", "reason": "…"}: ACCEPT when most findings are within tolerance. Base the answer only on the findings given.';

/** An agent backend answering through `chat`; `instance` names the calls. */
export function llmBackend(
  chat: ChatBackend,
  options: { maxTokens?: number; instance?: string } = {},
): AgentBackend & { close(): Promise<void> } {
  let calls = 0;
  return {
    name: 'llm',
    async answer(task, evidence) {
      const reply = await chat.complete(
        {
          messages: [
            { role: 'system', content: SYSTEM },
            { role: 'user', content: `Task: ${task}\nFindings:\n${evidence.items.map((i) => `- ${i}`).join('\n')}` },
          ],
          schema: ANSWER_SCHEMA,
          schemaName: 'lot_verdict',
          temperature: 0,
          maxTokens: options.maxTokens ?? 200,
        },
        { key: { run: 'a2a', agent: options.instance ?? 'child', round: calls++, kind: 'decide', attempt: 1 } },
      );
      let value: unknown;
      try {
        value = JSON.parse(reply.content);
      } catch {
        throw new WitnessError(
          'INVALID_INPUT',
          `The model's answer is not JSON: ${JSON.stringify(reply.content.slice(0, 200))}`,
        );
      }
      const problem = checkJson(value, ANSWER_SCHEMA);
      if (problem) throw new WitnessError('INVALID_INPUT', `The model's answer breaks the schema (${problem}).`);
      const { verdict, reason } = value as { verdict: string; reason: string };
      return `Task ${evidence.task_sha256.slice(0, 16)}: verdict ${verdict}. ${reason}`;
    },
    close: async () => (chat as { close?: () => Promise<void> }).close?.(),
  };
}

/** The `--agent llm` backend for an OpenAI-compatible endpoint. */
export function openAiCompatibleBackend(options: {
  endpoint: string;
  model: string;
  apiKey?: string;
  timeoutMs?: number;
}): AgentBackend & { close(): Promise<void> } {
  const chat = new OpenAiCompatibleBackend({
    endpoints: [options.endpoint],
    model: options.model,
    maxRetries: 1,
    timeoutMs: options.timeoutMs ?? 60_000,
    ...(options.apiKey ? { apiKey: options.apiKey } : {}),
  });
  return llmBackend(chat);
}

/**
 * The `--agent embedded` backend: a local GGUF file through node-llama-cpp, loaded on
 * the first task (so a missing optional package or a bad file fails that task with
 * its reason, and starting the agent stays fast).
 */
export function embeddedBackend(options: {
  modelPath: string;
  contextSize?: number;
  threads?: number;
}): AgentBackend & { close(): Promise<void> } {
  let inner: Promise<AgentBackend & { close(): Promise<void> }> | undefined;
  const open = () => {
    inner ??= EmbeddedBackend.open({
      modelPath: options.modelPath,
      contextSize: options.contextSize ?? 2048,
      ...(options.threads ? { threads: options.threads } : {}),
    }).then((chat) => llmBackend(chat, { instance: 'child' }));
    return inner;
  };
  return {
    name: 'embedded',
    answer: async (task, evidence) => (await open()).answer(task, evidence),
    // A model that never opened has nothing to release (its error went to the task).
    close: async () =>
      inner?.then(
        (backend) => backend.close(),
        () => undefined,
      ),
  };
}
