/**
 * @module
 * Playing one planned run: the cell's settings become a game config, the cell's agents
 * are built, and the finished game becomes a results record. Shared by the in-process
 * loop and the worker threads.
 */
import { createPolicyAgent } from '../agents/policy/index.js';
import { type AgentSeat, runGame } from '../game.js';
import type { Agent, GameConfig } from '../types.js';
import type { Cell, PlannedRun } from './plan.js';
import { type RunRecord, toRecord } from './record.js';
import type { Experiment } from './schema.js';

export type CreateAgent = (seat: AgentSeat, cell: Cell) => Agent;

export async function playRun(run: PlannedRun, experiment: Experiment, createAgent?: CreateAgent): Promise<RunRecord> {
  const { cell } = run;
  const config: GameConfig = {
    honest: cell.honest,
    byzantine: cell.byzantine,
    range: cell.range,
    maxRounds: cell.rounds,
    awareness: cell.awareness,
    tries: experiment.tries,
  };
  const choice = { honestPolicy: cell.honestPolicy, byzantineStrategy: cell.byzantineStrategy ?? 'random' };
  const create = createAgent ? (seat: AgentSeat) => createAgent(seat, cell) : (seat: AgentSeat) => createPolicyAgent(seat, choice);
  const game = await runGame({ config, seed: run.seed, createAgent: create });
  return toRecord(experiment.name, run, game);
}
