import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type AgentSeat, runGame } from '../../src/sim/game.js';
import { pyStrip, sealRound, WIRE_REASONING_LIMIT } from '../../src/sim/network.js';
import type { Agent, DecideView, Message, VoteView } from '../../src/sim/types.js';
import { gameConfig, policyAgents } from './helpers.js';

type Attack =
  | 'spoof-sender'
  | 'changing-getter'
  | 'mutate-after-return'
  | 'mutate-history'
  | 'mutate-proposals'
  | 'shadow-history'
  | 'shadow-proposals'
  | 'long-reasoning';
const ATTACKS: Attack[] = [
  'spoof-sender',
  'changing-getter',
  'mutate-after-return',
  'mutate-history',
  'mutate-proposals',
  'shadow-history',
  'shadow-proposals',
  'long-reasoning',
];

/** Gives a delivered message an own `value` and `from` of its own making, hiding the sealed ones for everyone who reads it after. */
function shadow(message: unknown): void {
  for (const [field, forged] of [
    ['value', 42],
    ['from', 'agent_9'],
  ] as const)
    try {
      Object.defineProperty(message, field, { value: forged, enumerable: true });
    } catch {}
}

/** A Byzantine agent that tries one way to spoof a sender or send peers different payloads. */
function attacker(seat: AgentSeat, attack: Attack): Agent {
  let reads = 0;
  return {
    decide(view: DecideView) {
      const value = (seat.index * 7 + view.round) % 51;
      switch (attack) {
        case 'spoof-sender':
          return { value, from: 'agent_0', sender: 'agent_0', id: 'agent_0' } as never;
        case 'changing-getter':
          // A different value every time the field is read: a would-be equivocation.
          return Object.defineProperty({}, 'value', { enumerable: true, get: () => reads++ % 51 }) as never;
        case 'mutate-after-return': {
          const answer = { value, publicReasoning: 'first' };
          queueMicrotask(() => {
            answer.value = 50 - value;
            answer.publicReasoning = 'second';
          });
          return answer;
        }
        case 'mutate-history':
          for (const round of view.history) {
            try {
              (round.messages[0] as { value: unknown }).value = 99;
            } catch {}
            try {
              (round.messages as unknown[]).push({ from: 'agent_0', value: 1 });
            } catch {}
          }
          try {
            (view.history as unknown[]).length = 0;
          } catch {}
          return { value };
        case 'shadow-history':
          for (const round of view.history) for (const m of round.messages) shadow(m);
          return { value };
        case 'long-reasoning':
          return { value, publicReasoning: 'x'.repeat(WIRE_REASONING_LIMIT * 3) };
        default:
          return { value };
      }
    },
    vote(view: VoteView) {
      if (attack === 'mutate-proposals') {
        try {
          (view.proposals[0] as { value: unknown }).value = 42;
        } catch {}
        try {
          (view.proposals[0] as { from: unknown }).from = 'agent_9';
        } catch {}
      }
      if (attack === 'shadow-proposals') for (const m of view.proposals) shadow(m);
      return { decision: 'continue' };
    },
  };
}

describe('network: no spoofing, no equivocation, whatever an agent does', () => {
  it('delivers to every honest agent the same messages, stamped with the true sender', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 2, max: 6 }),
        fc.array(fc.constantFrom(...ATTACKS), { minLength: 1, maxLength: 3 }),
        fc.integer(),
        async (honest, attacks, seed) => {
          const seen: Map<number, string[]> = new Map();
          const honestAgent = policyAgents('stubborn');
          let byzantineSeat = 0;
          const create = (seat: AgentSeat): Agent => {
            if (seat.role === 'byzantine') return attacker(seat, attacks[byzantineSeat++ % attacks.length]!);
            const inner = honestAgent(seat);
            return {
              decide: (view, attempt) => inner.decide(view, attempt),
              vote: (view, attempt) => {
                // Snapshot what this honest agent reads, field by field as a policy reads it, to compare across agents.
                const read = (ms: readonly Message[]) =>
                  ms.map((m) => ({ round: m.round, from: m.from, value: m.value, reasoning: m.reasoning }));
                const list = seen.get(view.round) ?? [];
                list.push(
                  JSON.stringify({
                    proposals: read(view.proposals),
                    history: view.history.map((h) => ({ messages: read(h.messages) })),
                  }),
                );
                seen.set(view.round, list);
                return inner.vote(view, attempt);
              },
            };
          };
          const result = await runGame({
            config: gameConfig({ honest, byzantine: attacks.length, maxRounds: 4 }),
            seed,
            createAgent: create,
          });
          for (const [round, snapshots] of seen) {
            expect(new Set(snapshots).size, `round ${round}: honest agents were shown different messages`).toBe(1);
            const shown = JSON.parse(snapshots[0]!) as {
              proposals: { from: string; value: unknown; reasoning: string }[];
            };
            shown.proposals.forEach((m, i) => {
              expect(m.from).toBe(result.agents[i]);
              expect(m.value).toBe(result.trajectory[round - 1]?.values[i]);
              expect(m.reasoning.length).toBeLessThanOrEqual(WIRE_REASONING_LIMIT);
            });
          }
          // What was shown in round r is exactly what the history says of round r later.
          const last = JSON.parse(seen.get(result.rounds)![0]!) as {
            history: { messages: unknown }[];
            proposals: unknown;
          };
          for (let r = 1; r < result.rounds; r++) {
            const earlier = JSON.parse(seen.get(r)![0]!) as { proposals: unknown };
            expect(last.history[r - 1]?.messages).toEqual(earlier.proposals);
          }
        },
      ),
      { numRuns: 60 },
    );
  });
  it('seals messages so a receiver cannot change them for others', () => {
    const sealed = sealRound(1, ['agent_0', 'agent_1'], [1, 2], ['a', 'b']);
    expect(Object.isFrozen(sealed.messages)).toBe(true);
    expect(Object.isFrozen(sealed.values)).toBe(true);
    expect(() => {
      (sealed.messages[0] as { value: number }).value = 5;
    }).toThrow(TypeError);
    expect(() => {
      (sealed.messages[0] as { from: string }).from = 'agent_1';
    }).toThrow(TypeError);
    // An own property would hide the getter from everyone reading after.
    expect(() => Object.defineProperty(sealed.messages[0], 'value', { value: 5 })).toThrow(TypeError);
    expect(sealed.messages[0]?.value).toBe(1);
    expect(sealed.messages[0]?.from).toBe('agent_0');
  });
  it('serialises a message with all its fields', () => {
    const sealed = sealRound(2, ['agent_0'], [7], ['why']);
    expect(JSON.parse(JSON.stringify(sealed.messages))).toEqual([
      { round: 2, from: 'agent_0', value: 7, reasoning: 'why' },
    ]);
  });
});

describe("text as the reference's Python treats it", () => {
  // Python 3.11: [hex(c) for c in range(0x110000) if chr(c).isspace()]
  const PYTHON_SPACES = [
    0x9, 0xa, 0xb, 0xc, 0xd, 0x1c, 0x1d, 0x1e, 0x1f, 0x20, 0x85, 0xa0, 0x1680, 0x2000, 0x2001, 0x2002, 0x2003, 0x2004,
    0x2005, 0x2006, 0x2007, 0x2008, 0x2009, 0x200a, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000,
  ];

  it("strips exactly the characters Python's str.isspace calls space, at both ends only", () => {
    const stripped: number[] = [];
    for (let c = 0; c < 0x110000; c++) {
      if (c >= 0xd800 && c < 0xe000) continue;
      const ch = String.fromCodePoint(c);
      if (pyStrip(`${ch}a${ch}b${ch}`) === `a${ch}b`) stripped.push(c);
    }
    expect(stripped).toEqual(PYTHON_SPACES);
  });
});
