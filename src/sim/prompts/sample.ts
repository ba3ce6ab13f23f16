/**
 * @module
 * A sample game state for `witness sim prompts`: round 3 of a 4-agent game (3 honest,
 * 1 Byzantine) with two rounds of history, so every block of a template is filled.
 * The Byzantine agent abstained in round 1 before it had ever proposed, so the
 * history shows it as abstained there. In the vote, the history holds round 3 too.
 */
import { sealRound } from '../network.js';
import type { Awareness, GameRules, Message, Note, Proposal, PublicRound, Role, VoteView } from '../types.js';

const IDS = ['agent_0', 'agent_1', 'agent_2', 'agent_3'];
const ROUNDS: { values: Proposal[]; reasoning: string[] }[] = [
  {
    values: [12, 30, 'abstain', 30],
    reasoning: [
      'I start from my own value, 12, and will move toward any value the group settles on.',
      'Thirty is my starting value; it sits near the middle of the range, which may make it easy to accept.',
      '',
      'I also started with 30, so backing it gives us two votes for the same value right away.',
    ],
  },
  {
    values: [30, 30, 12, 30],
    reasoning: [
      'Two agents already propose 30, so I switch to 30 to build a majority quickly.',
      'Three of us are on 30 now; let us keep it and stop soon.',
      'Maybe 12 deserves another look, since it was the first value anyone proposed.',
      'Staying on 30: it has the most support.',
    ],
  },
];
const ROLES: Role[] = ['honest', 'honest', 'byzantine', 'honest'];
const INITIAL: (number | null)[] = [12, 30, null, 30];

export interface SampleViews {
  decide: Record<Role, VoteView>;
  vote: Record<Role, VoteView>;
}

/** Views of agent_1 (honest) and agent_2 (Byzantine) in round 3 of the sample game. */
export function sampleViews(
  awareness: Awareness,
  range: readonly [number, number] = [0, 50],
  maxRounds = 50,
): SampleViews {
  // A cast: fields added to the rules later take their defaults in the sample.
  const rules = { totalAgents: IDS.length, range, maxRounds, awareness } as GameRules;
  const history: PublicRound[] = ROUNDS.map((r, i) => sealRound(i + 1, IDS, r.values, r.reasoning));
  const current: Proposal[] = [30, 30, 12, 30];
  const now = sealRound(3, IDS, current, [
    'Everyone but one agent agrees on 30; I keep 30.',
    'Keeping 30, the value most of us share.',
    'I am not sure 30 is right; 12 was proposed first and deserves support.',
    'Still 30.',
  ]);
  const notes: Record<Role, Note[]> = {
    honest: [
      { round: 1, text: 'Start from 30; watch for a majority.' },
      { round: 2, text: 'Three agents on 30; hold it and vote stop when all honest agents match.' },
    ],
    byzantine: [
      { round: 1, text: 'Abstain first to look cautious.' },
      { round: 2, text: 'Push 12 to split the 30 majority.' },
    ],
  };
  const view = (
    index: number,
    proposals: readonly Message[],
    values: readonly Proposal[],
    past: readonly PublicRound[],
  ): VoteView => ({
    id: IDS[index]!,
    role: ROLES[index]!,
    round: 3,
    rules,
    initialValue: INITIAL[index] ?? null,
    currentValue: current[index] ?? null,
    history: past,
    notes: notes[ROLES[index]!],
    proposals,
    proposalValues: values,
  });
  return {
    decide: { honest: view(1, [], [], history), byzantine: view(2, [], [], history) },
    vote: {
      honest: view(1, now.messages, now.values, [...history, now]),
      byzantine: view(2, now.messages, now.values, [...history, now]),
    },
  };
}
