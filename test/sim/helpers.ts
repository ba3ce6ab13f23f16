/** Shared helpers for simulator tests. */
import type { AgentSeat } from '../../src/sim/game.js';
import type { Agent, GameConfig } from '../../src/sim/types.js';
import { createPolicyAgent } from '../../src/sim/agents/policy/index.js';

export function gameConfig(overrides: Partial<GameConfig> = {}): GameConfig {
  return { honest: 4, byzantine: 0, range: [0, 50], maxRounds: 20, awareness: 'may_exist', tries: 3, ...overrides };
}

export function policyAgents(honestPolicy = 'plurality', byzantineStrategy = 'random') {
  return (seat: AgentSeat): Agent => createPolicyAgent(seat, { honestPolicy, byzantineStrategy });
}
