/**
 * @module
 * How Qwen3's "thinking" is switched off. The study's way (ref: vllm_agent.py
 * `_format_chat_prompt`) is a ` /no_think` suffix on the user turn for Qwen3 models,
 * except the Instruct-2507 ones, which do not think; `auto` does the same from the
 * model's name. `kwargs` sends `chat_template_kwargs: {enable_thinking: false}`
 * instead, which makes the chat template insert an empty think block: a different
 * prompt string than the study's.
 */
import type { ChatMessage } from './types.js';

/** `auto` (the study's rule, by model name), the template flag, the suffix, both, or nothing. */
export type ThinkingSwitch = 'auto' | 'kwargs' | 'suffix' | 'both' | 'none';
export const THINKING_SWITCHES: readonly ThinkingSwitch[] = ['auto', 'kwargs', 'suffix', 'both', 'none'];

export const NO_THINK_SUFFIX = ' /no_think';

/** The switch `choice` means for `model`: `auto` becomes `suffix` for Qwen3 models other than Instruct-2507, else `none`. */
export function thinkingFor(model: string, choice: ThinkingSwitch): Exclude<ThinkingSwitch, 'auto'> {
  if (choice !== 'auto') return choice;
  const name = model.toLowerCase();
  if (!name.includes('qwen3') && !name.includes('qwen-3')) return 'none';
  return name.includes('instruct-2507') || name.includes('instruct_2507') ? 'none' : 'suffix';
}

/** `messages` with the suffix on the last user turn (copies; the input is left as it is). */
export function withNoThinkSuffix(messages: readonly ChatMessage[]): ChatMessage[] {
  const out = messages.map((m) => ({ ...m }));
  const last = out.findLast((m) => m.role === 'user');
  if (last) last.content += NO_THINK_SUFFIX;
  return out;
}
