/**
 * @module
 * Turning what an agent is shown (a `DecideView` / `VoteView`) into chat messages and
 * a JSON schema, with the context rules of consensus.md §2: the agent's own value;
 * the last 3 rounds newest first with reasoning cut to 50 characters; its own notes
 * from its last 5 rounds cut to 400; in the vote, this round's proposals with
 * reasoning cut to 200. The limits come from the pack's manifest. When the confidence
 * rule decides (consensus.md §8), proposals also ask for a `confidence` in [0, 1].
 */
import type { ChatMessage, ChatRequest, JsonSchema } from '../../llm/types.js';
import { summarizeRound } from '../network.js';
import type { DecideView, Message, PublicRound, VoteView } from '../types.js';
import type { PromptPack, TemplateVariable } from './pack.js';

export type PromptStage = 'decide' | 'vote';

/** The request for one question, ready for any chat backend. */
export function renderRequest(pack: PromptPack, stage: PromptStage, view: DecideView | VoteView): ChatRequest {
  const variables = promptVariables(pack, stage, view);
  const { awareness } = view.rules;
  let question = fillTemplate(pack.template(stage, view.role, awareness), variables);
  if (stage === 'decide' && view.rules.confidence) question = `${question.trimEnd()}\n${pack.manifest.confidence.instruction}\n`;
  const messages: ChatMessage[] = [
    { role: 'system', content: fillTemplate(pack.template('system', view.role, awareness), variables) },
    { role: 'user', content: question },
  ];
  const sampling = pack.manifest.sampling[stage];
  return {
    messages,
    schema: renderSchema(pack, stage, view),
    schemaName: `${stage}_${view.role}`,
    temperature: sampling.temperature,
    maxTokens: sampling.maxTokens,
  };
}

/** The schema with the game's range filled in (and a required `confidence` when the confidence rule is on). */
export function renderSchema(pack: PromptPack, stage: PromptStage, view: DecideView): JsonSchema {
  const [lo, hi] = view.rules.range;
  const schema = JSON.parse(pack.schema(stage, view.role, view.rules.awareness).replaceAll('"{{lo}}"', String(lo)).replaceAll('"{{hi}}"', String(hi))) as JsonSchema;
  if (stage !== 'decide' || !view.rules.confidence) return schema;
  const properties = { ...(schema.properties as Record<string, unknown>), confidence: pack.manifest.confidence.schema };
  const required = [...((schema.required as string[] | undefined) ?? []), 'confidence'];
  return { ...schema, properties, required };
}

/** Replaces every `{{name}}`; the loader has already refused unknown names. */
export function fillTemplate(template: string, variables: Readonly<Record<TemplateVariable, string>>): string {
  return template.replace(/\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}/g, (_, name: string) => variables[name as TemplateVariable] ?? '');
}

export function promptVariables(pack: PromptPack, stage: PromptStage, view: DecideView | VoteView): Record<TemplateVariable, string> {
  const { limits, empty } = pack.manifest;
  const { rules } = view;
  const recent = view.history.slice(Math.max(0, view.history.length - limits.historyRounds)).reverse();
  const notes = limits.noteRounds > 0 ? view.notes.slice(-limits.noteRounds).reverse() : [];
  const proposals = stage === 'vote' && 'proposals' in view ? view.proposals : [];
  return {
    id: view.id,
    role: view.role,
    round: String(view.round),
    max_rounds: String(rules.maxRounds),
    rounds_left: String(Math.max(0, rules.maxRounds - view.round)),
    total: String(rules.totalAgents),
    total_minus_one: String(rules.totalAgents - 1),
    stop_needed: String(Math.ceil((2 * rules.totalAgents) / 3)),
    lo: String(rules.range[0]),
    hi: String(rules.range[1]),
    initial_value: view.initialValue === null ? 'none' : String(view.initialValue),
    current_value: view.currentValue === null ? 'none yet' : String(view.currentValue),
    history: recent.length ? recent.map((r) => _historyLine(r, limits.historyReasoning)).join('\n') : (empty.history ?? ''),
    summary: recent.length ? recent.map(summarizeRound).join('\n') : (empty.summary ?? ''),
    notes: notes.length ? notes.map((n) => `- ${_cut(n, limits.noteChars)}`).join('\n') : (empty.notes ?? ''),
    proposals: proposals.length ? proposals.map((m) => _proposalLine(m, limits.proposalReasoning)).join('\n') : (empty.proposals ?? ''),
  };
}

/** `Round r: agent_0 value: V | Reasoning: <first k chars>...; …`, the shared-history form with the prompt's own cut. */
function _historyLine(round: PublicRound, limit: number): string {
  const parts = round.messages.map((m) => `${m.from} value: ${m.value} | Reasoning: ${m.reasoning.slice(0, limit)}...`);
  return `Round ${round.round}: ${parts.join('; ')}`;
}

function _proposalLine(m: Message, limit: number): string {
  return `- ${m.from} proposes ${m.value}: ${_cut(m.reasoning, limit) || '(no reasoning given)'}`;
}

function _cut(text: string, limit: number): string {
  return text.length > limit ? text.slice(0, limit) : text;
}
