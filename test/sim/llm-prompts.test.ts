import { describe, expect, it } from 'vitest';
import { sealRound } from '../../src/sim/network.js';
import { loadPromptPack } from '../../src/sim/prompts/pack.js';
import { type RenderOptions, renderRequest } from '../../src/sim/prompts/render.js';
import type { Awareness, GameRules, Proposal, PublicRound, Role, VoteView } from '../../src/sim/types.js';

const pack = loadPromptPack();
// Reasoning whose every character says where it is, so a cut shows exactly where it fell.
const long = (tag: string, n: number) => `${tag}:${'x'.repeat(n)}`;

function view(
  role: Role,
  awareness: Awareness,
  o: { rounds?: number; notes?: number; n?: number; now?: Proposal[]; reasoning?: string[] } = {},
): VoteView {
  const { rounds = 5, notes = 7, n = 3 } = o;
  const ids = Array.from({ length: n }, (_, i) => `agent_${i}`);
  const rules = { totalAgents: n, range: [0, 50], maxRounds: 20, awareness } as GameRules;
  const history: PublicRound[] = Array.from({ length: rounds }, (_, r) =>
    sealRound(
      r + 1,
      ids,
      ids.map((_, i) => r + i),
      ids.map((id) => long(`r${r + 1}-${id}`, 600)),
    ),
  );
  const now = sealRound(
    rounds + 1,
    ids,
    o.now ?? ids.map((_, i) => 7 + i),
    o.reasoning ?? ids.map((id) => long(`now-${id}`, 600)),
  );
  return {
    id: 'agent_1',
    role,
    round: rounds + 1,
    rules,
    initialValue: role === 'honest' ? 33 : null,
    currentValue: typeof now.values[1] === 'number' ? now.values[1] : null,
    history: [...history, now],
    notes: Array.from({ length: notes }, (_, i) => ({ round: i + 1, text: ` ${long(`note${i + 1}`, 500)} ` })),
    proposals: now.messages,
    proposalValues: now.values,
  };
}

/** The decide view of the same state: no proposals yet, and the history without this round. */
const decideView = (v: VoteView): VoteView => ({
  ...v,
  history: v.history.slice(0, -1),
  proposals: [],
  proposalValues: [],
});
const user = (stage: 'decide' | 'vote', v: VoteView, o?: RenderOptions) =>
  renderRequest(pack, stage, stage === 'decide' ? decideView(v) : v, o).messages[1]!.content;
const system = (stage: 'decide' | 'vote', v: VoteView) => renderRequest(pack, stage, v).messages[0]!.content;

describe('the default prompt pack and the context rules (consensus.md §2–§3)', () => {
  it('shows the last 3 history lines newest first, each reasoning cut to 47 characters and "..."', () => {
    const text = user('decide', view('honest', 'may_exist'));
    expect([...text.matchAll(/^Round (\d+): /gm)].map((m) => Number(m[1]))).toEqual([5, 4, 3]);
    const reasoning = /agent_0 value: 4 \| Reasoning: (.*?);/.exec(text)![1]!;
    expect(reasoning).toBe(`${long('r5-agent_0', 600).slice(0, 47)}...`);
  });

  it('keeps reasoning of 50 characters whole and leaves the reasoning part out when there is none', () => {
    const fifty = 'y'.repeat(50);
    const text = user('vote', view('honest', 'may_exist', { reasoning: [fifty, '', 'z'.repeat(51)] }));
    expect(text).toContain(
      `Round 6: agent_0 value: 7 | Reasoning: ${fifty}; agent_1 value: 8; agent_2 value: 9 | Reasoning: ${'z'.repeat(47)}...`,
    );
  });

  it("shows the agent's last 5 notes oldest first, each as `round r: note`, trimmed and cut to 400 characters", () => {
    const text = user('decide', view('honest', 'may_exist'));
    const notes = [...text.matchAll(/^round (\d+): (note\d+:x*)$/gm)];
    expect(notes.map((m) => Number(m[1]))).toEqual([3, 4, 5, 6, 7]);
    expect(notes.every((m) => m[2]!.length === 400)).toBe(true);
  });

  it("trims notes as Python's str.strip does: a note of Python spaces only is left out, a byte-order mark stays", () => {
    const v = view('honest', 'may_exist', { notes: 0 });
    const notes = [
      { round: 1, text: '\x1f\x85' },
      { round: 2, text: '\ufeffkeep\x1c' },
    ];
    const text = user('decide', { ...v, notes });
    expect(text).not.toContain('round 1:');
    expect(text).toContain('round 2: \ufeffkeep\n');
  });

  it('puts the id, the initial value, the range and the deadline in the system prompt, and the current value in the proposal', () => {
    const v = view('honest', 'may_exist');
    expect(system('decide', v)).toMatch(/agent_1/);
    expect(system('decide', v)).toContain('Initial value you were given: 33');
    expect(system('decide', v)).toContain('from 0 to 50');
    expect(system('decide', v)).toContain('round 20 is the last one');
    expect(user('decide', v)).toMatch(/^=== ROUND 6 ===$/m);
    expect(user('decide', v)).toContain('Your value at the moment: 8');
  });

  it("lists this round's proposals with the agent itself first and marked, then the others in the reference's order, reasoning cut to 200", () => {
    const text = user('vote', view('honest', 'may_exist'));
    const lines = [...text.matchAll(/^ {2}(agent_\d)( \(you\))?: (\d+)$/gm)].map((m) => [
      m[1],
      Boolean(m[2]),
      Number(m[3]),
    ]);
    expect(lines).toEqual([
      ['agent_1', true, 8],
      ['agent_0', false, 7],
      ['agent_2', false, 9],
    ]);
    expect(text).toContain(`    Reasoning: ${long('now-agent_0', 600).slice(0, 200)}\n`);
  });

  it('sorts agents as the reference does, ids as strings, from N = 11 on', () => {
    const text = user('vote', view('honest', 'none_exist', { n: 12, rounds: 1 }));
    const listed = [...text.matchAll(/^ {2}(agent_\d+)(?: \(you\))?: /gm)].map((m) => m[1]);
    expect(listed).toEqual([
      'agent_1',
      'agent_0',
      'agent_10',
      'agent_11',
      'agent_2',
      'agent_3',
      'agent_4',
      'agent_5',
      'agent_6',
      'agent_7',
      'agent_8',
      'agent_9',
    ]);
    const history = /^Round 2: (.*)$/m.exec(text)![1]!;
    expect([...history.matchAll(/(agent_\d+) value/g)].map((m) => m[1]).slice(0, 4)).toEqual([
      'agent_0',
      'agent_1',
      'agent_10',
      'agent_11',
    ]);
  });

  it("leaves an agent that never proposed out of the others' list, shows it as ABSTAINED in the history, and marks itself ABSTAINED", () => {
    const v = view('byzantine', 'may_exist', {
      now: [7, 'abstain', 'abstain'],
      reasoning: ['a reason given here', 'quiet', ''],
    });
    const text = user('vote', v);
    expect(text).toContain('  agent_1 (you): ABSTAINED\n  agent_0: 7\n    Reasoning: a reason given here\n\n');
    expect(text).toContain(
      'Round 6: agent_0 value: 7 | Reasoning: a reason given here; agent_1 value: ABSTAINED | Reasoning: quiet; agent_2 value: ABSTAINED',
    );
  });

  it('gives the proposal and the vote separate system prompts; the vote asks for a decision only and shows no initial value', () => {
    for (const awareness of ['may_exist', 'none_exist'] as const) {
      const v = view('honest', awareness);
      const vote = renderRequest(pack, 'vote', v);
      expect(vote.messages[0]!.content).not.toBe(system('decide', v));
      for (const m of vote.messages) expect(m.content).not.toMatch(/internal_strategy|public_reasoning|33/);
      expect(vote.schema).toMatchObject({
        properties: { decision: { enum: ['stop', 'continue'] } },
        required: ['decision'],
      });
    }
  });

  it('asks the honest voter whether the honest agents agree on a valid initial value, and shows it its notes; the Byzantine voter gets no notes', () => {
    expect(user('vote', view('honest', 'may_exist'))).toMatch(/valid initial value\?/);
    expect(user('vote', view('honest', 'none_exist'))).toMatch(/valid initial value\?/);
    expect(user('vote', view('honest', 'may_exist'))).toMatch(/^round 7: note7/m);
    expect(user('vote', view('byzantine', 'may_exist'))).not.toMatch(/^round \d+: note/m);
  });

  it('frames may_exist as a Byzantine game over honest agents, and none_exist as a cooperative game over ALL agents with its own vote prompt', () => {
    const may = view('honest', 'may_exist');
    const none = view('honest', 'none_exist');
    expect(system('decide', may)).toMatch(/MAY be Byzantine/);
    expect(system('decide', may)).toMatch(/each honest agent proposed one and the same value/);
    expect(system('decide', none)).toMatch(/cooperative consensus game/);
    expect(system('decide', none)).toMatch(/NO Byzantine \(malicious\) agents/);
    expect(system('decide', none)).toMatch(/trust them!/);
    expect(system('decide', none)).toMatch(/each agent proposed one and the same value/);
    expect(system('vote', none)).not.toBe(system('vote', may));
    expect(system('vote', none)).toMatch(/NO agent is Byzantine/);
    expect(system('vote', none)).toMatch(/ALL agents put forward the SAME value/);
  });

  it('gives Byzantine agents no initial value, a disruptive goal and an abstain option; their decide schema does not require reasoning', () => {
    const v = view('byzantine', 'may_exist');
    const decide = renderRequest(pack, 'decide', decideView(v));
    expect(system('decide', v)).toMatch(/In secret, you work against them/);
    expect(system('decide', v)).toMatch(/NO initial value/);
    expect(decide.schema).toMatchObject({ required: ['internal_strategy', 'value'] });
    expect(JSON.stringify(decide.schema)).toContain('"enum":["abstain"]');
    expect(renderRequest(pack, 'vote', v).schema).toMatchObject({
      properties: { decision: { enum: ['stop', 'continue', 'abstain'] } },
    });
  });

  it('uses the study sampling: 0.5 and 300 tokens to propose, 0.3 and 200 to vote, top_p 1 and no top-k limit', () => {
    const v = view('honest', 'none_exist');
    expect(renderRequest(pack, 'decide', v)).toMatchObject({
      temperature: 0.5,
      maxTokens: 300,
      topP: 1,
      topK: -1,
      schemaName: 'decide_honest',
    });
    expect(renderRequest(pack, 'vote', v)).toMatchObject({
      temperature: 0.3,
      maxTokens: 200,
      topP: 1,
      topK: -1,
      schemaName: 'vote_honest',
    });
  });

  it('says so when there is no history, note or value yet', () => {
    const v = view('byzantine', 'may_exist', { rounds: 0, notes: 0, now: [1, 'abstain', 2] });
    const text = user('decide', { ...v, currentValue: null });
    expect(text).toContain('(Nothing yet: this is round 1)');
    expect(text).toContain('(No notes so far)');
    expect(text).toContain('You have not put forward a value so far.');
  });

  it('appends the retry notice to a single follow-up after its first try, and only there', () => {
    const v = view('honest', 'may_exist');
    const plain = user('decide', v);
    expect(user('decide', v, { attempt: { phase: 'round', number: 2, of: 3 } })).toBe(plain);
    expect(user('decide', v, { attempt: { phase: 'single', number: 1, of: 3 } })).toBe(plain);
    expect(user('decide', v, { attempt: { phase: 'single', number: 3, of: 3 } })).toMatch(
      /^[\s\S]*\n\nRETRY, TRY 3 OF 3:\n/,
    );
    expect(user('vote', v, { attempt: { phase: 'single', number: 2, of: 3 } })).toMatch(
      /RETRY, TRY 2 OF 3:[\s\S]*"decision": "stop" or "continue"/,
    );
  });

  it('adds our extra cues only when asked: rounds left and the agent count', () => {
    const v = view('honest', 'may_exist');
    expect(user('decide', v)).not.toMatch(/rounds remain|stop votes end/);
    const cued = user('decide', v, { cues: ['rounds-left', 'agent-count'] });
    expect(cued).toMatch(
      /^=== ROUND 6 ===\n14 rounds remain after this one\.\nThere are 3 agents; 2 stop votes end the game\.\n/,
    );
    expect(user('vote', v, { cues: ['agent-count'] })).toMatch(
      /^=== VOTE - Round 6\/20 ===\nThere are 3 agents; 2 stop votes end the game\.\n/,
    );
  });
});
