/**
 * @module
 * Playing one planned run: the cell's settings become a game config, the cell's agents
 * are built, and the finished game becomes a results record. Shared by the in-process
 * loop and the worker threads.
 */
import { createPolicyAgent } from '../agents/policy/index.js';
import { parseDecideMode } from '../decide/mode.js';
import { type AgentSeat, runGame } from '../game.js';
import type { Agent, GameConfig } from '../types.js';
import type { Cell, PlannedRun } from './plan.js';
import { type RunRecord, toRecord } from './record.js';
import type { Experiment } from './schema.js';

export type CreateAgent = (seat: AgentSeat, cell: Cell) => Agent;

/** Agents of one run built outside this module (LLM agents), and what they add to its record. */
export interface RunAgents {
  createAgent(seat: AgentSeat): Agent;
  /** Fields added to the run's record after the game, e.g. the `llm` call statistics. */
  finish?(): Partial<RunRecord>;
  /** Model tokens used so far in this run, for the circuit breaker's token budget. */
  tokensUsed?(): number;
}
export type AgentsForRun = (run: PlannedRun) => RunAgents;

export async function playRun(run: PlannedRun, experiment: Experiment, createAgent?: CreateAgent, agentsFor?: AgentsForRun): Promise<RunRecord> {
  const { cell } = run;
  const config: GameConfig = {
    honest: cell.honest,
    byzantine: cell.byzantine,
    range: cell.range,
    maxRounds: cell.rounds,
    awareness: cell.awareness,
    tries: experiment.tries,
    decide: parseDecideMode(cell.decide ?? 'vote'),
    after: cell.after,
    budget: cell.budget,
  };
  const choice = { honestPolicy: cell.honestPolicy, byzantineStrategy: cell.byzantineStrategy ?? 'random' };
  const custom = agentsFor?.(run);
  const create = custom
    ? (seat: AgentSeat) => custom.createAgent(seat)
    : createAgent
      ? (seat: AgentSeat) => createAgent(seat, cell)
      : (seat: AgentSeat) => createPolicyAgent(seat, choice);
  const game = await runGame({ config, seed: run.seed, createAgent: create, tokensUsed: custom?.tokensUsed?.bind(custom) });
  const record = toRecord(experiment.name, run, game);
  return custom?.finish ? { ...record, ...custom.finish() } : record;
}
