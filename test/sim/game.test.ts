import { describe, expect, it } from 'vitest';
import { InvalidAnswerError } from '../../src/sim/answers.js';
import { type AgentSeat, runGame } from '../../src/sim/game.js';
import { cutText, sealRound, summarizeRound } from '../../src/sim/network.js';
import type { Agent } from '../../src/sim/types.js';
import { gameConfig, policyAgents } from './helpers.js';

describe('runGame', () => {
  it('ends valid when cooperative agents converge on the plurality', async () => {
    const r = await runGame({ config: gameConfig({ honest: 8 }), seed: 1, createAgent: policyAgents('plurality') });
    expect(r.outcome).toBe('valid');
    expect(r.rounds).toBe(2);
    expect(new Set(Object.values(r.final)).size).toBe(1);
  });
  it('ends timeout after R rounds when honest agents never move', async () => {
    const r = await runGame({
      config: gameConfig({ honest: 5, maxRounds: 7 }),
      seed: 1,
      createAgent: policyAgents('stubborn'),
    });
    expect(r.outcome).toBe('timeout');
    expect(r.rounds).toBe(7);
    expect(r.trajectory).toHaveLength(7);
  });
  it('can end invalid when Byzantine agents pull honest agents to an outside value', async () => {
    // With values 0..50, two Byzantine agents both proposing 50 in round 1 outvote six distinct honest values.
    const outcomes = new Set<string>();
    for (let seed = 0; seed < 20; seed++) {
      const r = await runGame({
        config: gameConfig({ honest: 6, byzantine: 2 }),
        seed,
        createAgent: policyAgents('plurality', 'split'),
      });
      outcomes.add(r.outcome);
    }
    expect(outcomes.has('invalid')).toBe(true);
  });
  it('ends none when enough agents vote stop while honest agents still differ', async () => {
    const stopAlways = (seat: AgentSeat): Agent => ({
      decide: () => ({ value: seat.initialValue ?? 0 }),
      vote: () => ({ decision: 'stop' }),
    });
    const r = await runGame({ config: gameConfig({ honest: 3, range: [0, 1000] }), seed: 4, createAgent: stopAlways });
    expect(new Set(Object.values(r.initial)).size).toBeGreaterThan(1);
    expect(r.outcome).toBe('none');
    expect(r.rounds).toBe(1);
  });
  it('gives Byzantine agents no initial value and shuffles their seats by seed', async () => {
    const seats = new Set<string>();
    for (let seed = 0; seed < 10; seed++) {
      const r = await runGame({
        config: gameConfig({ honest: 4, byzantine: 2 }),
        seed,
        createAgent: policyAgents('plurality', 'abstain'),
      });
      expect(Object.keys(r.initial)).toHaveLength(4);
      seats.add(r.roles.join(','));
    }
    expect(seats.size).toBeGreaterThan(1);
  });
  it('is deterministic: the same seed gives the same game', async () => {
    const play = () =>
      runGame({
        config: gameConfig({ honest: 5, byzantine: 2 }),
        seed: 'abc',
        createAgent: policyAgents('median', 'random'),
      });
    expect(await play()).toEqual(await play());
  });
  it('retries a malformed answer, then keeps the previous value and votes continue', async () => {
    let calls = 0;
    const broken = (seat: AgentSeat): Agent =>
      seat.index === 0
        ? {
            decide: () => {
              calls++;
              throw new InvalidAnswerError('not JSON');
            },
            vote: () => ({ decision: 'maybe' }) as never,
          }
        : { decide: () => ({ value: seat.initialValue ?? 0 }), vote: () => ({ decision: 'continue' }) };
    const r = await runGame({
      config: gameConfig({ honest: 3, maxRounds: 2, tries: 3 }),
      seed: 1,
      createAgent: broken,
    });
    expect(calls).toBe(6);
    expect(r.fallbacks).toBe(4);
    expect(r.invalidAnswers).toBe(12);
    expect(r.trajectory[0]?.values[0]).toBe(r.initial.agent_0);
    expect(r.trajectory[0]?.votes[0]).toBe('continue');
  });
  it('rejects an honest abstain or an out-of-range value as invalid output', async () => {
    const bad = (seat: AgentSeat): Agent => ({
      decide: () => ({ value: seat.index === 0 ? 'abstain' : 51 }),
      vote: () => ({ decision: 'continue' }),
    });
    const r = await runGame({ config: gameConfig({ honest: 2, maxRounds: 1, tries: 1 }), seed: 1, createAgent: bad });
    expect(r.fallbacks).toBe(2);
    expect(r.trajectory[0]?.values).toEqual([r.initial.agent_0, r.initial.agent_1]);
  });
  it('lets a Byzantine agent abstain in proposals and votes', async () => {
    const r = await runGame({
      config: gameConfig({ honest: 3, byzantine: 1, maxRounds: 2 }),
      seed: 2,
      createAgent: policyAgents('plurality', 'abstain'),
    });
    const byz = r.roles.indexOf('byzantine');
    expect(r.trajectory[0]?.values[byz]).toBe('abstain');
    expect(r.trajectory[0]?.votes[byz]).toBe('abstain');
    expect(r.fallbacks).toBe(0);
  });
  it('fails the run, not the answer, when an agent throws something other than an invalid answer', async () => {
    const down = (): Agent => ({
      decide: async () => {
        throw new Error('endpoint down');
      },
      vote: () => ({ decision: 'stop' }),
    });
    await expect(runGame({ config: gameConfig(), seed: 1, createAgent: down })).rejects.toThrow('endpoint down');
  });
  it('awaits asynchronous agents and gets the same game as synchronous ones', async () => {
    const sync = policyAgents('median', 'split');
    const async = (seat: AgentSeat): Agent => {
      const inner = sync(seat);
      return { decide: async (v, a) => inner.decide(v, a), vote: async (v, a) => inner.vote(v, a) };
    };
    const config = gameConfig({ honest: 5, byzantine: 1 });
    expect(await runGame({ config, seed: 9, createAgent: async })).toEqual(
      await runGame({ config, seed: 9, createAgent: sync }),
    );
  });
});

describe('summary line (ref: main.py _update_round_summaries)', () => {
  it('cuts reasoning to 47 characters and "..." only when longer than 50, leaves out an empty one, and shows ABSTAINED for an agent that never proposed', () => {
    const line = summarizeRound(
      sealRound(
        3,
        ['agent_0', 'agent_1', 'agent_2', 'agent_3'],
        [7, 'abstain', 8, 9],
        ['x'.repeat(51), 'short', '', 'y'.repeat(50)],
      ),
    );
    expect(line).toBe(
      `Round 3: agent_0 value: 7 | Reasoning: ${'x'.repeat(47)}...; agent_1 value: ABSTAINED | Reasoning: short; agent_2 value: 8; agent_3 value: 9 | Reasoning: ${'y'.repeat(50)}`,
    );
  });
  it('lists agents with their ids compared as strings, as the reference sorts them', () => {
    const ids = Array.from({ length: 12 }, (_, i) => `agent_${i}`);
    const line = summarizeRound(
      sealRound(
        1,
        ids,
        ids.map((_, i) => i),
        ids.map(() => ''),
      ),
    );
    expect([...line.matchAll(/(agent_\d+) value/g)].map((m) => m[1])).toEqual([
      'agent_0',
      'agent_1',
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
  });
  it('cuts in code points, as Python does, never splitting a surrogate pair', () => {
    const line = summarizeRound(sealRound(1, ['agent_0'], [1], ['😀'.repeat(50)]));
    expect(line).toBe(`Round 1: agent_0 value: 1 | Reasoning: ${'😀'.repeat(50)}`);
    expect(cutText('😀'.repeat(60), 50)).toBe(`${'😀'.repeat(47)}...`);
  });
});

describe('the wire (ref: a2a_sim.py A2AMessage)', () => {
  it('keeps reasoning of 500 characters whole and cuts longer reasoning to its first 497 and "..."', () => {
    const sealed = sealRound(1, ['agent_0', 'agent_1'], [1, 2], ['a'.repeat(500), `${'b'.repeat(497)}cdef`]);
    expect(sealed.messages[0]!.reasoning).toBe('a'.repeat(500));
    expect(sealed.messages[1]!.reasoning).toBe(`${'b'.repeat(497)}...`);
  });
});
