/**
 * @module
 * Playing one planned run: the cell's settings become a game config, the run's agents
 * come from the agent factory (rule-based by default), and the finished game becomes a
 * results record. Shared by the in-process loop and the worker threads.
 */
import { createPolicyAgent } from '../agents/policy/index.js';
import { parseDecideMode } from '../decide/mode.js';
import { type AgentSeat, runGame } from '../game.js';
import type { Agent, GameConfig } from '../types.js';
import type { Cell, PlannedRun } from './plan.js';
import { type RunRecord, toRecord } from './record.js';
import type { Experiment } from './schema.js';

/** The agents of one run, and what they add to its record. */
export interface RunAgents {
  createAgent(seat: AgentSeat): Agent;
  /** Fields added to the run's record after the game, e.g. the `llm` call statistics. */
  finish?(): Partial<RunRecord>;
  /** Model tokens used so far in this run, for the circuit breaker's token budget. */
  tokensUsed?(): number;
}

/** A cassette the agents record into or replay from, as a signed transcript names it. */
export interface CassetteLink {
  role: 'recorded' | 'replayed';
  /** SHA-256 (hex) and length of the cassette's bytes so far (recorded) or whole (replayed). */
  digest(): { sha256: string; bytes: number };
  /** Makes the bytes `digest` covers durable (before a checkpoint names them). */
  sync(): void;
}

/** What a signed results file records about who answered (docs/results-format.md). */
export interface AgentProvenance {
  /** The prompt pack model-backed agents were given. */
  prompts?: { name: string; hash: string; cues?: string[] };
  cassette?: CassetteLink;
}

/**
 * The ONE way to choose who plays: builds the agents of each run. Without one, every
 * seat gets the rule-based agent of its cell's policy or strategy (and runs may use
 * worker threads); model-backed agents come from `openModelAgents` (docs/llm.md).
 */
export interface AgentFactory {
  forRun(run: PlannedRun): RunAgents;
  readonly provenance?: AgentProvenance;
}

/** Rule-based agents with the cell's honest policy and Byzantine strategy. */
export const policyAgents: AgentFactory = Object.freeze({
  forRun(run: PlannedRun): RunAgents {
    const choice = { honestPolicy: run.cell.honestPolicy, byzantineStrategy: run.cell.byzantineStrategy ?? 'random' };
    return { createAgent: (seat: AgentSeat) => createPolicyAgent(seat, choice) };
  },
});

export async function playRun(
  run: PlannedRun,
  experiment: Experiment,
  agents: AgentFactory = policyAgents,
): Promise<RunRecord> {
  const these = agents.forRun(run);
  const game = await runGame({
    config: _configOf(run.cell, experiment.tries),
    seed: run.seed,
    createAgent: (seat) => these.createAgent(seat),
    tokensUsed: these.tokensUsed?.bind(these),
  });
  const record = toRecord(experiment.name, run, game);
  return these.finish ? { ...record, ...these.finish() } : record;
}

/** Game configs by cell: every run of a cell plays with the same one (the plan hands out one cell object per cell). */
const _configs = new WeakMap<Cell, GameConfig>();

function _configOf(cell: Cell, tries: number): GameConfig {
  const known = _configs.get(cell);
  if (known?.tries === tries) return known;
  const config: GameConfig = Object.freeze({
    honest: cell.honest,
    byzantine: cell.byzantine,
    range: cell.range,
    maxRounds: cell.rounds,
    awareness: cell.awareness,
    tries,
    decide: parseDecideMode(cell.decide ?? 'vote'),
    after: cell.after,
    budget: cell.budget,
  });
  _configs.set(cell, config);
  return config;
}
