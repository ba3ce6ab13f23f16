/**
 * @module
 * One line of a results file: everything about one run (docs/results-format.md, with
 * a JSON Schema in docs/schemas/results-line.schema.json). Reading validates the
 * fields later steps use; a line that fails is reported by number and skipped.
 */
import type { GameResult, Outcome } from '../types.js';
import type { LlmRunStats } from '../agents/llm/population.js';
import type { Cell, PlannedRun } from './plan.js';

/**
 * 2: trajectory values are what was sent (an abstention after a proposal shows the
 * previous value; `abstained` says who abstained) and reasoning is cut as sent.
 * 1: `abstain` for every abstention. Readers take both.
 */
export const RESULTS_FORMAT_VERSION = 2;

export interface RunRecord {
  v: number;
  id: string;
  seq: number;
  experiment: string;
  cell: string;
  index: number;
  seed: number;
  config: Cell;
  honest: number;
  byzantine: number;
  agents: string[];
  roles: GameResult['roles'];
  initial: Record<string, number>;
  final: Record<string, number>;
  rounds: number;
  stopped_by_vote: boolean;
  ended_by: GameResult['endedBy'];
  outcome: Outcome;
  strict_valid: boolean | null;
  range_valid: boolean | null;
  decisions: number;
  invalid_answers: number;
  fallbacks: number;
  trajectory: GameResult['trajectory'];
  /** Model-backed agents only: tokens, latency, retries and every call (docs/llm.md). */
  llm?: LlmRunStats;
}

export function toRecord(experiment: string, run: PlannedRun, game: GameResult): RunRecord {
  return {
    v: RESULTS_FORMAT_VERSION,
    id: run.id,
    seq: run.seq,
    experiment,
    ...plannedFields(run),
    agents: game.agents,
    roles: game.roles,
    initial: game.initial,
    final: game.final,
    rounds: game.rounds,
    stopped_by_vote: game.stoppedByVote,
    ended_by: game.endedBy,
    outcome: game.outcome,
    strict_valid: game.strictValid,
    range_valid: game.rangeValid,
    decisions: game.decisions,
    invalid_answers: game.invalidAnswers,
    fallbacks: game.fallbacks,
    trajectory: game.trajectory,
  };
}

/** A record's fields that the plan gives, in the record's order (they follow `experiment`). */
export function plannedFields(run: PlannedRun) {
  return {
    cell: run.cellKey,
    index: run.index,
    seed: run.seed,
    config: run.cell,
    honest: run.cell.honest,
    byzantine: run.cell.byzantine,
  };
}
