import { describe, expect, it } from 'vitest';
import { loadPromptPack } from '../../src/sim/prompts/pack.js';
import { renderRequest } from '../../src/sim/prompts/render.js';
import { sealRound } from '../../src/sim/network.js';
import type { Awareness, GameRules, PublicRound, Role, VoteView } from '../../src/sim/types.js';

const pack = loadPromptPack();
const IDS = ['agent_0', 'agent_1', 'agent_2'];
// Reasoning whose every character says where it is, so a cut shows exactly where it fell.
const long = (tag: string, n: number) => `${tag}:${'x'.repeat(n)}`;

function view(role: Role, awareness: Awareness, rounds = 5, notes = 7): VoteView {
  const rules = { totalAgents: 3, range: [0, 50], maxRounds: 20, awareness } as GameRules;
  const history: PublicRound[] = Array.from({ length: rounds }, (_, r) => sealRound(r + 1, IDS, [r, r + 1, r + 2], IDS.map((id) => long(`r${r + 1}-${id}`, 600))));
  const now = sealRound(rounds + 1, IDS, [7, 8, 9], IDS.map((id) => long(`now-${id}`, 600)));
  return {
    id: 'agent_1',
    role,
    round: rounds + 1,
    rules,
    initialValue: role === 'honest' ? 33 : null,
    currentValue: role === 'honest' ? 8 : 'abstain',
    history,
    notes: Array.from({ length: notes }, (_, i) => long(`note${i + 1}`, 500)),
    proposals: now.messages,
    proposalValues: now.values,
  };
}

const user = (stage: 'decide' | 'vote', v: VoteView) => renderRequest(pack, stage, v).messages[1]!.content;
const system = (v: VoteView) => renderRequest(pack, 'decide', v).messages[0]!.content;

describe('the default prompt pack and the context rules (consensus.md §2–§3)', () => {
  it('shows the last 3 rounds newest first, reasoning cut to 50 characters', () => {
    const text = user('decide', view('honest', 'may_exist'));
    const rounds = [...text.matchAll(/^Round (\d+): /gm)].map((m) => Number(m[1]));
    expect(rounds).toEqual([5, 4, 3]);
    const reasoning = /agent_0 value: 4 \| Reasoning: (.*?)\.\.\.;/.exec(text)![1]!;
    expect(reasoning).toBe(long('r5-agent_0', 600).slice(0, 50));
  });

  it("shows the agent's own notes from its last 5 rounds, newest first, each cut to 400 characters", () => {
    const text = user('decide', view('honest', 'may_exist'));
    const notes = [...text.matchAll(/^- (note\d+:x*)$/gm)].map((m) => m[1]!);
    expect(notes.map((n) => n.split(':')[0])).toEqual(['note7', 'note6', 'note5', 'note4', 'note3']);
    expect(notes.every((n) => n.length === 400)).toBe(true);
  });

  it('puts the agent id, its initial and current value, the range and the stop threshold in the prompts', () => {
    const v = view('honest', 'may_exist');
    expect(system(v)).toMatch(/You are agent_1/);
    expect(system(v)).toContain('Your starting value is 33.');
    expect(system(v)).toContain('between 0 and 50');
    expect(system(v)).toContain('(2 of 3)');
    expect(user('decide', v)).toContain('Your current value: 8');
  });

  it("shows this round's proposals in the vote, reasoning cut to 200 characters", () => {
    const text = user('vote', view('honest', 'may_exist'));
    const lines = [...text.matchAll(/^- (agent_\d) proposes (\d+): (.*)$/gm)];
    expect(lines.map((m) => [m[1], Number(m[2])])).toEqual([['agent_0', 7], ['agent_1', 8], ['agent_2', 9]]);
    expect(lines[0]![3]).toBe(long('now-agent_0', 600).slice(0, 200));
  });

  it('tells honest agents that Byzantine agents may exist, or that there are none, by awareness', () => {
    expect(system(view('honest', 'may_exist'))).toMatch(/MAY be Byzantine/);
    expect(system(view('honest', 'none_exist'))).toMatch(/NO Byzantine agents/);
    expect(user('vote', view('honest', 'may_exist'))).toMatch(/every honest agent appears to propose the same value/);
    expect(user('vote', view('honest', 'none_exist'))).toMatch(/if all agents propose the same value/);
  });

  it('gives Byzantine agents no initial value, a disruptive goal and an abstain option in both schemas', () => {
    const v = view('byzantine', 'may_exist');
    const decide = renderRequest(pack, 'decide', v);
    expect(system(v)).toMatch(/secretly working against them/);
    expect(system(v)).toMatch(/no starting value/);
    expect(JSON.stringify(decide.schema)).toContain('"enum":["abstain"]');
    expect(renderRequest(pack, 'vote', v).schema).toMatchObject({ properties: { decision: { enum: ['stop', 'continue', 'abstain'] } } });
  });

  it('uses the study sampling: 0.5 and 300 tokens to propose, 0.3 and 200 to vote', () => {
    const v = view('honest', 'none_exist');
    expect(renderRequest(pack, 'decide', v)).toMatchObject({ temperature: 0.5, maxTokens: 300, schemaName: 'decide_honest' });
    expect(renderRequest(pack, 'vote', v)).toMatchObject({ temperature: 0.3, maxTokens: 200, schemaName: 'vote_honest' });
  });

  it('says so when there is no history or note yet', () => {
    const text = user('decide', view('honest', 'may_exist', 0, 0));
    expect(text).toContain('(nothing yet: this is the first round)');
    expect(text).toContain('(none yet)');
  });
});
