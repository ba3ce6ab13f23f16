/**
 * @module
 * One line of a results file: everything about one run (docs/results-format.md, with
 * a JSON Schema in docs/schemas/results-line.schema.json). Reading validates the
 * fields later steps use; a line that fails is reported by number and skipped.
 */
import { z } from 'zod';
import type { GameResult, Outcome } from '../types.js';
import type { Cell, PlannedRun } from './plan.js';

export const RESULTS_FORMAT_VERSION = 1;

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
  outcome: Outcome;
  decisions: number;
  invalid_answers: number;
  fallbacks: number;
  trajectory: GameResult['trajectory'];
}

export function toRecord(experiment: string, run: PlannedRun, game: GameResult): RunRecord {
  return {
    v: RESULTS_FORMAT_VERSION,
    id: run.id,
    seq: run.seq,
    experiment,
    cell: run.cellKey,
    index: run.index,
    seed: run.seed,
    config: run.cell,
    honest: run.cell.honest,
    byzantine: run.cell.byzantine,
    agents: game.agents,
    roles: game.roles,
    initial: game.initial,
    final: game.final,
    rounds: game.rounds,
    stopped_by_vote: game.stoppedByVote,
    outcome: game.outcome,
    decisions: game.decisions,
    invalid_answers: game.invalidAnswers,
    fallbacks: game.fallbacks,
    trajectory: game.trajectory,
  };
}

/** The fields that reports, merges and resumes rely on; other fields pass through. */
export const RunRecordSchema = z.looseObject({
  id: z.string().min(1),
  seq: z.number().int().min(0),
  cell: z.string().min(1),
  seed: z.number(),
  honest: z.number().int().min(1),
  byzantine: z.number().int().min(0),
  initial: z.record(z.string(), z.number()),
  rounds: z.number().int().min(0),
  outcome: z.enum(['valid', 'invalid', 'none', 'timeout']),
  decisions: z.number().int().min(0).optional(),
  trajectory: z.array(z.looseObject({ round: z.number().int(), values: z.array(z.unknown()), votes: z.array(z.string()) })),
});

/** Validates one parsed line; throws with the field that is wrong. */
export function checkRecord(value: unknown): RunRecord {
  const result = RunRecordSchema.safeParse(value);
  if (!result.success) {
    const issue = result.error.issues[0];
    throw new Error(`not a results line: ${issue ? `${[...issue.path].join('.') || 'line'}: ${issue.message}` : 'invalid'}`);
  }
  return result.data as unknown as RunRecord;
}
