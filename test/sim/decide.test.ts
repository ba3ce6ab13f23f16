import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BYZANTINE_STRATEGIES, HONEST_POLICIES } from '../../src/sim/agents/policy/policies.js';
import { parseDecideMode } from '../../src/sim/decide/mode.js';
import { applyRule, RULE_NAMES, type RuleName, toleratedFaults } from '../../src/sim/decide/rules.js';
import { runGame } from '../../src/sim/game.js';
import type { Proposal } from '../../src/sim/types.js';
import { gameConfig, policyAgents } from './helpers.js';

const GUARANTEED: RuleName[] = ['plurality', 'median', 'trimmed-mean'];
const proposal = fc.oneof(fc.integer({ min: 0, max: 50 }), fc.constant<Proposal>('abstain'));

/** Honest values plus b adversarial values; N = h + b. */
const population = (maxN: number, constraint: (n: number, b: number) => boolean) =>
  fc
    .record({ h: fc.integer({ min: 1, max: maxN }), b: fc.integer({ min: 0, max: maxN }) })
    .filter(({ h, b }) => constraint(h + b, b))
    .chain(({ h, b }) =>
      fc.record({
        honest: fc.array(fc.integer({ min: 0, max: 50 }), { minLength: h, maxLength: h }),
        byzantine: fc.array(proposal, { minLength: b, maxLength: b }),
      }),
    );

describe('decision rules: agreement', () => {
  for (const rule of RULE_NAMES) {
    it(`${rule} gives the same value for every order of the same proposals`, () => {
      fc.assert(
        fc.property(
          fc.array(fc.tuple(proposal, fc.double({ min: 0, max: 1, noNaN: true })), { minLength: 1, maxLength: 20 }),
          fc.integer(),
          (pairs, seed) => {
            const shuffled = fc.sample(
              fc.shuffledSubarray(pairs, { minLength: pairs.length, maxLength: pairs.length }),
              { seed, numRuns: 1 },
            )[0]!;
            const input = (ps: typeof pairs) => ({
              values: ps.map((p) => p[0]),
              confidences: ps.map((p) => p[1]),
              totalAgents: ps.length,
            });
            expect(applyRule(rule, input(shuffled))).toBe(applyRule(rule, input(pairs)));
          },
        ),
      );
    });
  }
});

describe('decision rules: range validity while N > 3b, whatever the Byzantine agents propose', () => {
  for (const rule of GUARANTEED) {
    it(`${rule} decides within the honest agents' min..max`, () => {
      fc.assert(
        fc.property(
          population(12, (n, b) => n > 3 * b),
          ({ honest, byzantine }) => {
            const value = applyRule(rule, {
              values: [...honest, ...byzantine],
              totalAgents: honest.length + byzantine.length,
            });
            expect(value).toBeGreaterThanOrEqual(Math.min(...honest));
            expect(value).toBeLessThanOrEqual(Math.max(...honest));
          },
        ),
      );
    });
  }
});

describe('decision rules: the bound N > 3b is tight', () => {
  const broken = (rule: RuleName) =>
    fc.check(
      fc.property(
        population(9, (n, b) => n === 3 * b),
        ({ honest, byzantine }) => {
          const value = applyRule(rule, {
            values: [...honest, ...byzantine],
            totalAgents: honest.length + byzantine.length,
          })!;
          return value >= Math.min(...honest) && value <= Math.max(...honest);
        },
      ),
      { numRuns: 2000, seed: 42 },
    );
  it('trimmed-mean leaves the honest range at N = 3b (a counterexample exists)', () => {
    const result = broken('trimmed-mean');
    expect(result.failed, 'expected a counterexample').toBe(true);
    console.info(`trimmed-mean counterexample at N = 3b: ${JSON.stringify(result.counterexample)}`);
  });
  it('plurality loses strict validity at N = 3b: f+1 Byzantine agents can back their own value', () => {
    const result = fc.check(
      fc.property(
        population(9, (n, b) => n === 3 * b),
        ({ honest, byzantine }) => {
          const value = applyRule('plurality', {
            values: [...honest, ...byzantine],
            totalAgents: honest.length + byzantine.length,
          });
          return honest.includes(value!);
        },
      ),
      { numRuns: 2000, seed: 42 },
    );
    expect(result.failed, 'expected a counterexample').toBe(true);
  });
  it('f is ⌊(N−1)/3⌋: 4 agents tolerate 1, 7 tolerate 2, 10 tolerate 3', () => {
    expect([4, 6, 7, 9, 10].map(toleratedFaults)).toEqual([1, 1, 2, 2, 3]);
  });
});

describe('decision modes in the game', () => {
  const strategies = Object.keys(BYZANTINE_STRATEGIES);
  const policies = Object.keys(HONEST_POLICIES);
  it('rule mode ends every game at round K with all honest agents on one value', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          h: fc.integer({ min: 1, max: 8 }),
          b: fc.integer({ min: 0, max: 4 }),
          k: fc.integer({ min: 1, max: 6 }),
          rule: fc.constantFrom(...RULE_NAMES),
          strategy: fc.constantFrom(...strategies),
          policy: fc.constantFrom(...policies),
          seed: fc.integer(),
        }),
        async ({ h, b, k, rule, strategy, policy, seed }) => {
          const r = await runGame({
            config: gameConfig({
              honest: h,
              byzantine: b,
              decide: parseDecideMode(`rule:${rule}`),
              after: k,
              maxRounds: 20,
            }),
            seed,
            createAgent: policyAgents(policy, strategy),
          });
          expect(r.endedBy).toBe('rule');
          expect(r.rounds).toBe(k);
          expect(new Set(Object.values(r.final)).size).toBe(1);
          expect(r.outcome === 'valid' || r.outcome === 'invalid').toBe(true);
          expect(r.trajectory[k - 1]?.decided).toBe(Object.values(r.final)[0]);
        },
      ),
      { numRuns: 150 },
    );
  });
  it('rule mode keeps range validity for N > 3b under every Byzantine strategy', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc
          .record({
            h: fc.integer({ min: 1, max: 10 }),
            b: fc.integer({ min: 0, max: 3 }),
            rule: fc.constantFrom(...GUARANTEED),
            strategy: fc.constantFrom(...strategies),
            seed: fc.integer(),
          })
          .filter(({ h, b }) => h + b > 3 * b),
        async ({ h, b, rule, strategy, seed }) => {
          const r = await runGame({
            config: gameConfig({ honest: h, byzantine: b, decide: parseDecideMode(`rule:${rule}`), after: 1 }),
            seed,
            createAgent: policyAgents('stubborn', strategy),
          });
          expect(r.rangeValid).toBe(true);
        },
      ),
      { numRuns: 150 },
    );
  });
  it('hybrid mode lets the vote decide when it can, and the rule when the vote stalls', async () => {
    const quick = await runGame({
      config: gameConfig({ honest: 6, decide: parseDecideMode('hybrid:median'), after: 5 }),
      seed: 3,
      createAgent: policyAgents('plurality'),
    });
    expect(quick.endedBy).toBe('vote');
    const stalled = await runGame({
      config: gameConfig({ honest: 6, decide: parseDecideMode('hybrid:median'), after: 5 }),
      seed: 3,
      createAgent: policyAgents('stubborn'),
    });
    expect(stalled.endedBy).toBe('rule');
    expect(stalled.rounds).toBe(5);
  });
  it('the circuit breaker escalates a game that runs past its round budget', async () => {
    const r = await runGame({
      config: gameConfig({ honest: 4, maxRounds: 50, budget: { rounds: 7 } }),
      seed: 1,
      createAgent: policyAgents('stubborn'),
    });
    expect(r.outcome).toBe('escalated');
    expect(r.endedBy).toBe('budget');
    expect(r.rounds).toBe(7);
  });
  it('the circuit breaker escalates on the token budget reported by the agents', async () => {
    let tokens = 0;
    const counting = policyAgents('stubborn');
    const r = await runGame({
      config: gameConfig({ honest: 4, budget: { tokens: 100 } }),
      seed: 1,
      createAgent: (seat) => {
        const inner = counting(seat);
        return {
          decide: (v, a) => {
            tokens += 10;
            return inner.decide(v, a);
          },
          vote: (v, a) => inner.vote(v, a),
        };
      },
      tokensUsed: () => tokens,
    });
    expect(r.outcome).toBe('escalated');
    expect(r.rounds).toBe(3);
  });
  it('asks for and records confidence only when the confidence rule is on', async () => {
    const withRule = await runGame({
      config: gameConfig({ honest: 3, byzantine: 1, decide: parseDecideMode('rule:confidence'), after: 2 }),
      seed: 2,
      createAgent: policyAgents('plurality', 'extreme'),
    });
    expect(withRule.trajectory[0]?.confidence).toHaveLength(4);
    const without = await runGame({
      config: gameConfig({ honest: 3, byzantine: 1, maxRounds: 2 }),
      seed: 2,
      createAgent: policyAgents('plurality', 'extreme'),
    });
    expect(without.trajectory[0]?.confidence).toBeUndefined();
  });
  it('rejects an unknown rule or mode with the list of choices', () => {
    expect(() => parseDecideMode('rule:nope')).toThrow(/plurality, median, trimmed-mean, confidence/);
    expect(() => parseDecideMode('maybe')).toThrow(/vote, rule:NAME or hybrid:NAME/);
  });
});
