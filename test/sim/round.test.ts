/**
 * One round as the reference plays it (consensus.md §2; ref: main.py `run_round`,
 * `_run_batched_decisions`): the history line before the vote, what an abstention or
 * a failed agent shows on the wire, and the retry schedule.
 */
import { describe, expect, it } from 'vitest';
import { InvalidAnswerError } from '../../src/sim/answers.js';
import { type AgentSeat, runGame } from '../../src/sim/game.js';
import { failedReasoning } from '../../src/sim/round.js';
import type { Agent, Attempt, DecideView, Decision, VoteView } from '../../src/sim/types.js';
import { gameConfig } from './helpers.js';

type Script = (seat: AgentSeat, view: DecideView, attempt: Attempt) => Decision;

/** Agents that answer `decide` from a script, record every view and try, and vote `vote`. */
function scripted(decide: Script, vote: (view: VoteView) => 'stop' | 'continue' = () => 'continue') {
  const seen: { id: string; stage: 'decide' | 'vote'; view: DecideView; attempt: Attempt }[] = [];
  const create = (seat: AgentSeat): Agent => ({
    decide: (view, attempt) => {
      seen.push({ id: seat.id, stage: 'decide', view, attempt });
      return decide(seat, view, attempt);
    },
    vote: (view, attempt) => {
      seen.push({ id: seat.id, stage: 'vote', view, attempt });
      return { decision: vote(view) };
    },
  });
  return { create, seen };
}

const own = (seat: AgentSeat, view: DecideView): Decision => ({
  value: typeof view.currentValue === 'number' ? view.currentValue : 1,
  publicReasoning: `${seat.id} keeps its value.`,
});

describe('one round, as the reference plays it', () => {
  it("adds the round's line to the history before the vote: the vote sees this round, the next proposal sees it as the last one", async () => {
    const { create, seen } = scripted(own);
    await runGame({ config: gameConfig({ honest: 3, maxRounds: 2 }), seed: 1, createAgent: create });
    for (const { stage, view } of seen) {
      expect(view.history.map((r) => r.round)).toEqual(
        stage === 'vote'
          ? Array.from({ length: view.round }, (_, i) => i + 1)
          : Array.from({ length: view.round - 1 }, (_, i) => i + 1),
      );
    }
    const vote = seen.find((s) => s.stage === 'vote' && s.view.round === 2)!.view as VoteView;
    expect(vote.history.at(-1)!.messages).toBe(vote.proposals);
  });

  it("shows a Byzantine agent that abstains after proposing with its previous value and this round's reasoning, and one that never proposed as abstained", async () => {
    // Seat roles come from the seed; each Byzantine agent proposes 9 in round 1 only if its index is even.
    const byzantine: Script = (seat, view) => {
      if (seat.role === 'honest') return own(seat, view);
      if (view.round === 1 && seat.index % 2 === 0) return { value: 9, publicReasoning: 'Nine for now.' };
      return { value: 'abstain', publicReasoning: `Quiet in round ${view.round}.` };
    };
    const { create, seen } = scripted(byzantine);
    const r = await runGame({
      config: gameConfig({ honest: 3, byzantine: 2, maxRounds: 2 }),
      seed: 3,
      createAgent: create,
    });
    const seats = r.roles
      .map((role, i) => ({ role, i }))
      .filter((s) => s.role === 'byzantine')
      .map((s) => s.i);
    for (const i of seats) {
      const proposed = i % 2 === 0;
      expect(r.trajectory[0]!.values[i]).toBe(proposed ? 9 : 'abstain');
      expect(r.trajectory[1]!.values[i]).toBe(proposed ? 9 : 'abstain');
      expect(r.trajectory[1]!.reasoning![i]).toBe('Quiet in round 2.');
      expect(r.trajectory[1]!.abstained![i]).toBe(true);
      const next = seen.find((s) => s.id === `agent_${i}` && s.stage === 'vote' && s.view.round === 2)!.view;
      expect(next.currentValue).toBe(proposed ? 9 : null);
    }
    expect(r.fallbacks).toBe(0);
  });

  it('keeps the previous value of an agent whose every try failed, with reasoning that says so', async () => {
    const failing: Script = (seat, view) => {
      if (seat.index === 0 && view.round === 2) throw new InvalidAnswerError('not JSON');
      return own(seat, view);
    };
    const { create } = scripted(failing);
    const r = await runGame({ config: gameConfig({ honest: 3, maxRounds: 2 }), seed: 1, createAgent: create });
    expect(r.trajectory[1]!.values[0]).toBe(r.initial.agent_0);
    expect(r.trajectory[1]!.reasoning![0]).toBe(failedReasoning(3));
    expect(failedReasoning(3)).toBe('No usable answer after 3 tries.');
    expect(r.trajectory[1]!.abstained).toEqual([true, false, false]);
  });

  it('asks many failing agents (over 30%) the same question together up to 3 times; a few are followed up alone, 3 tries each', async () => {
    const tries = (honest: number, failing: number) => {
      const { create, seen } = scripted((seat, view) => {
        if (seat.index < failing) throw new InvalidAnswerError('no');
        return own(seat, view);
      });
      return runGame({ config: gameConfig({ honest, maxRounds: 1 }), seed: 1, createAgent: create }).then((r) => ({
        r,
        attempts: seen.filter((s) => s.id === 'agent_0' && s.stage === 'decide').map((s) => s.attempt),
      }));
    };
    const many = await tries(3, 1);
    expect(many.attempts).toEqual([1, 2, 3].map((number) => ({ phase: 'round', number, of: 3 })));
    expect(many.r).toMatchObject({ invalidAnswers: 3, fallbacks: 1 });
    const few = await tries(10, 3);
    expect(few.attempts).toEqual([
      { phase: 'round', number: 1, of: 3 },
      ...[1, 2, 3].map((number) => ({ phase: 'single', number, of: 3 })),
    ]);
    expect(few.r).toMatchObject({ invalidAnswers: 12, fallbacks: 3 });
  });

  it('moves to single follow-ups as soon as the failures drop to 30% or less', async () => {
    // Two of five fail the first try (40%); one of them recovers in the second whole-round try (20%).
    const { create, seen } = scripted((seat, view, attempt) => {
      if (seat.index < 2 && !(seat.index === 1 && attempt.number === 2)) throw new InvalidAnswerError('no');
      return own(seat, view);
    });
    await runGame({ config: gameConfig({ honest: 5, maxRounds: 1 }), seed: 1, createAgent: create });
    const phases = seen
      .filter((s) => s.id === 'agent_0' && s.stage === 'decide')
      .map((s) => `${s.attempt.phase}${s.attempt.number}`);
    expect(phases).toEqual(['round1', 'round2', 'single1', 'single2', 'single3']);
  });

  it('ends the tries of an answer that fails for good, keeping the note it left', async () => {
    const { create, seen } = scripted((seat, view, attempt) => {
      if (seat.index === 0 && view.round === 1 && attempt.phase === 'single')
        throw new InvalidAnswerError('abstained', { final: true, note: 'Hide for now.' });
      if (seat.index === 0 && view.round === 1) throw new InvalidAnswerError('no');
      return { ...own(seat, view), internalStrategy: `note of ${seat.id}` };
    });
    const r = await runGame({ config: gameConfig({ honest: 4, maxRounds: 2 }), seed: 1, createAgent: create });
    const asked = seen.filter((s) => s.id === 'agent_0' && s.stage === 'decide' && s.view.round === 1);
    expect(asked.map((s) => s.attempt.phase)).toEqual(['round', 'single']);
    expect(r.trajectory[0]!.reasoning![0]).toBe(failedReasoning(3));
    const later = seen.find((s) => s.id === 'agent_0' && s.stage === 'decide' && s.view.round === 2)!.view;
    expect(later.notes).toEqual([{ round: 1, text: 'Hide for now.' }]);
  });
});
