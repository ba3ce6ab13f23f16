/**
 * @module
 * Turning what an agent is shown (a `DecideView` / `VoteView`) into chat messages and
 * a JSON schema, with the context rules of the reference (consensus.md §2; ref:
 * bcg_agents.py): a proposal gets the proposal system prompt and a user message with
 * the round header, the agent's own value, the last 3 history lines newest first and
 * its last 5 notes oldest first (`round r: note`, cut to 400); a vote gets the vote
 * system prompt and this round's proposals (the agent itself first and marked,
 * reasoning cut to 200), the history (which already holds this round) and, for honest
 * agents, the notes. A retry in a single follow-up appends the pack's retry notice.
 * The limits and phrases come from the pack's manifest.
 */
import type { ChatMessage, ChatRequest, JsonSchema } from '../../llm/types.js';
import { headOf, pyStrip, referenceOrder, summarizeRound } from '../network.js';
import type { Attempt, DecideView, Message, Role, VoteView } from '../types.js';
import type { PromptCue, PromptPack, Stage, TemplateVariable } from './pack.js';
import { fillTemplate } from './template.js';

export type PromptStage = 'decide' | 'vote';

export interface RenderOptions {
  /** Which try this is; a `single` try after the first gets the retry notice. */
  attempt?: Attempt;
  /** Extra cues the reference does not give (docs/fidelity.md). */
  cues?: readonly PromptCue[];
}

/** The request for one question, ready for any chat backend. */
export function renderRequest(
  pack: PromptPack,
  stage: PromptStage,
  view: DecideView | VoteView,
  options: RenderOptions = {},
): ChatRequest {
  const variables = promptVariables(pack, stage, view, options);
  const { role, rules } = view;
  const text = (s: Stage) => fillTemplate(pack.template(s, role, rules.awareness), variables).trimEnd();
  let question = text(stage);
  if (options.attempt?.phase === 'single' && options.attempt.number > 1)
    question = `${question}\n\n${text(`${stage}-retry`)}`;
  if (stage === 'decide' && rules.confidence) question = `${question}\n${pack.manifest.confidence.instruction}`;
  return sampledRequest(
    pack,
    stage,
    role,
    text(stage === 'decide' ? 'system' : 'vote-system'),
    question,
    renderSchema(pack, stage, view),
  );
}

/** A system and a user message and their schema, with the pack's sampling for `stage`. */
export function sampledRequest(
  pack: PromptPack,
  stage: PromptStage,
  role: Role,
  system: string,
  user: string,
  schema: JsonSchema,
): ChatRequest {
  const messages: ChatMessage[] = [
    { role: 'system', content: system },
    { role: 'user', content: user },
  ];
  const sampling = pack.manifest.sampling[stage];
  const request: ChatRequest = {
    messages,
    schema,
    schemaName: `${stage}_${role}`,
    temperature: sampling.temperature,
    maxTokens: sampling.maxTokens,
  };
  if (sampling.topP !== null) request.topP = sampling.topP;
  if (sampling.topK !== null) request.topK = sampling.topK;
  return request;
}

/** The schema with the game's range filled in (and a required `confidence` when the confidence rule is on). */
export function renderSchema(pack: PromptPack, stage: PromptStage, view: DecideView): JsonSchema {
  const [lo, hi] = view.rules.range;
  const schema = JSON.parse(
    pack
      .schema(stage, view.role, view.rules.awareness)
      .replaceAll('"{{lo}}"', String(lo))
      .replaceAll('"{{hi}}"', String(hi)),
  ) as JsonSchema;
  if (stage !== 'decide' || !view.rules.confidence) return schema;
  const properties = { ...(schema.properties as Record<string, unknown>), confidence: pack.manifest.confidence.schema };
  const required = [...((schema.required as string[] | undefined) ?? []), 'confidence'];
  return { ...schema, properties, required };
}

export function promptVariables(
  pack: PromptPack,
  stage: PromptStage,
  view: DecideView | VoteView,
  options: RenderOptions = {},
): Record<TemplateVariable, string> {
  const { limits, empty, phrases, cues } = pack.manifest;
  const { rules } = view;
  const recent = view.history.slice(Math.max(0, view.history.length - limits.historyRounds)).reverse();
  const kept = view.notes.filter((n) => pyStrip(n.text) !== '');
  const notes = limits.noteRounds > 0 ? kept.slice(-limits.noteRounds) : [];
  const proposals = stage === 'vote' && 'proposals' in view ? view.proposals : [];
  const history = recent.length
    ? recent.map((r) => summarizeRound(r, limits.historyReasoning)).join('\n')
    : (empty.history ?? '');
  // One literal with every key (same order as always): spreading a base object into a
  // bigger literal cost several µs a prompt (bench/llm.ts).
  const variables: Record<TemplateVariable, string> = {
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
    current_value: typeof view.currentValue === 'number' ? String(view.currentValue) : 'none',
    attempt: String(options.attempt?.number ?? 1),
    tries: String(options.attempt?.of ?? 1),
    current_state: '',
    history,
    summary: history,
    notes: '',
    proposals: '',
    cues: '',
  };
  variables.current_state = fillTemplate(
    typeof view.currentValue === 'number' ? phrases.currentValue : phrases.noValueYet,
    variables,
  );
  variables.cues = (options.cues ?? []).map((c) => fillTemplate(cues[c], variables)).join('\n');
  variables.notes = notes.length
    ? notes.map((n) => `round ${n.round}: ${headOf(pyStrip(n.text), limits.noteChars)}`).join('\n')
    : (empty.notes ?? '');
  variables.proposals = proposals.length
    ? _proposalList(view.id, proposals, limits.proposalReasoning, fillTemplate(phrases.noReasoning, variables))
    : (empty.proposals ?? '');
  return variables;
}

/**
 * This round's proposals as the reference lists them (bcg_agents.py
 * `build_vote_round_prompt`): the agent itself first, marked, with its reasoning or a
 * placeholder; then every other agent that proposed, in the reference's order, its
 * reasoning line only when it gave one. An agent that never proposed sent nothing.
 */
function _proposalList(self: string, messages: readonly Message[], limit: number, noReasoning: string): string {
  const lines: string[] = [];
  const own = messages.find((m) => m.from === self);
  if (own && own.value !== 'abstain')
    lines.push(`  ${self} (you): ${own.value}`, `    Reasoning: ${headOf(own.reasoning, limit) || noReasoning}`);
  else lines.push(`  ${self} (you): ABSTAINED`);
  for (const i of referenceOrder(messages.map((m) => m.from))) {
    const m = messages[i]!;
    if (m.from === self || m.value === 'abstain') continue;
    lines.push(`  ${m.from}: ${m.value}`);
    if (m.reasoning) lines.push(`    Reasoning: ${headOf(m.reasoning, limit)}`);
  }
  return lines.join('\n');
}
