/**
 * @module
 * The results line as a zod schema: what `witness report`, merges and resumes accept
 * when they read a results file. Kept apart from record.ts so that worker threads,
 * which only write records, do not load zod.
 */
import { z } from 'zod';
import { LineReceiptSchema } from '../transcript/format.js';
import type { RunRecord } from './record.js';

const _proposal = z.union([z.number().int(), z.literal('abstain')]);

/**
 * The results line, field by field. The JSON Schema in docs/schemas/ is generated
 * from this (`npm run schemas`). Unknown fields pass through, so newer writers'
 * files still read.
 */
export const RunRecordSchema = z
  .looseObject({
    v: z.number().int().describe('format version: 2 (1: trajectory values show abstain for every abstention)'),
    id: z.string().min(1).describe('stable run id: hash of the cell, the run index and the base seed'),
    seq: z.number().int().min(0).describe('position of the run in the whole experiment; merges sort by it'),
    experiment: z.string().describe('experiment name'),
    cell: z.string().min(1).describe('readable label of the cell (grid point) the run belongs to'),
    index: z.number().int().min(0).describe('index of the run within its cell'),
    seed: z.number().int().describe("the run's own seed: runGame with this seed replays the run"),
    config: z
      .looseObject({
        agents: z.string(),
        honestPolicy: z.string(),
        byzantineStrategy: z.string().nullable(),
        honest: z.number().int(),
        byzantine: z.number().int(),
        awareness: z.enum(['may_exist', 'none_exist']),
        range: z.tuple([z.number().int(), z.number().int()]),
        rounds: z.number().int(),
      })
      .describe('the cell settings'),
    honest: z.number().int().min(1).describe('honest agents h'),
    byzantine: z.number().int().min(0).describe('Byzantine agents b'),
    agents: z.array(z.string()).describe('agent ids; every per-agent array below is in this order'),
    roles: z.array(z.enum(['honest', 'byzantine'])).describe('role of each agent'),
    initial: z.record(z.string(), z.number().int()).describe('honest initial values by agent id'),
    final: z.record(z.string(), z.number().int()).describe('honest final values by agent id'),
    rounds: z.number().int().min(0).describe('rounds played'),
    stopped_by_vote: z.boolean().describe('true when stop votes reached 2N/3'),
    ended_by: z
      .enum(['vote', 'rule', 'budget', 'deadline'])
      .optional()
      .describe('what ended the game: the stop vote, a decision rule, the circuit breaker, or round R'),
    outcome: z.enum(['valid', 'invalid', 'none', 'timeout', 'escalated']),
    strict_valid: z
      .boolean()
      .nullable()
      .optional()
      .describe('honest agents agree on one of their initial values (null: they disagree)'),
    range_valid: z
      .boolean()
      .nullable()
      .optional()
      .describe('honest agents agree on a value within [min, max] of their initial values (null: they disagree)'),
    decisions: z.number().int().min(0).describe('agent answers asked for (proposals and votes, retries included)'),
    invalid_answers: z.number().int().min(0).describe('answers that failed validation'),
    fallbacks: z.number().int().min(0).describe('answers replaced by the fallback after every try failed'),
    trajectory: z
      .array(
        z.looseObject({
          round: z.number().int(),
          values: z
            .array(_proposal)
            .describe(
              "each agent's value as sent: its new proposal, or after an abstention or all tries failing its previous one; abstain only if it never proposed (format 1: abstain for every abstention)",
            ),
          votes: z.array(z.enum(['stop', 'continue', 'abstain'])).describe("each agent's vote"),
          reasoning: z
            .array(z.string())
            .optional()
            .describe(
              "each agent's public reasoning as sent (over 500 characters: the first 497 and ...), when any was given",
            ),
          abstained: z
            .array(z.boolean())
            .optional()
            .describe('which agents made no new proposal this round (abstained, or every try failed), when any did'),
          confidence: z
            .array(z.number().nullable())
            .optional()
            .describe("each agent's self-reported confidence, when any was given"),
          decided: z.number().int().optional().describe('the value a decision rule chose in this round'),
        }),
      )
      .describe('one entry per round'),
    llm: z
      .looseObject({
        model: z.string().nullable().describe('model name or GGUF file'),
        prompts: z
          .looseObject({ name: z.string(), hash: z.string(), cues: z.array(z.string()).optional() })
          .describe('prompt pack name, SHA-256 of its files, and the extra cues when any was on (--prompt-cue)'),
        calls: z.number().int().min(0).describe('model calls made (retries of malformed answers included)'),
        prompt_tokens: z.number().int().min(0),
        completion_tokens: z.number().int().min(0),
        latency_ms: z.number().min(0).describe('sum of call latencies (recorded; replays copy them from the cassette)'),
        retries: z.number().int().min(0).describe('transport retries (429, 5xx, timeouts) over all calls'),
        invalid_replies: z.number().int().min(0).describe('replies that were not JSON or broke the schema'),
        call_log: z
          .array(
            z.looseObject({
              agent: z.string(),
              round: z.number().int(),
              kind: z.enum(['decide', 'vote']),
              attempt: z.number().int().min(1),
              endpoint: z.string(),
              prompt_tokens: z.number().int().min(0),
              completion_tokens: z.number().int().min(0),
              latency_ms: z.number().min(0),
              retries: z.number().int().min(0),
              valid: z.boolean(),
            }),
          )
          .describe('every call, by round, stage, agent and try'),
      })
      .optional()
      .describe('present when model-backed agents played: tokens, latency, retries and endpoint per call'),
    receipt: LineReceiptSchema.optional().describe(
      'signed results only (witness sim --sign), always the last member: what the line is, hash-linked to the line before (docs/results-format.md, "Signed results")',
    ),
  })
  .describe('One run of the consensus game: one line of a Witness results file (JSONL).');

/** The parsed line as a record, or undefined when `checkRecord` would throw (a line readers skip). */
export function asRecord(value: unknown): RunRecord | undefined {
  const result = RunRecordSchema.safeParse(value);
  return result.success ? (result.data as RunRecord) : undefined;
}

/** Validates one parsed line; throws with the field that is wrong. */
export function checkRecord(value: unknown): RunRecord {
  const result = RunRecordSchema.safeParse(value);
  if (!result.success) {
    const issue = result.error.issues[0];
    throw new Error(
      `not a results line: ${issue ? `${[...issue.path].join('.') || 'line'}: ${issue.message}` : 'invalid'}`,
    );
  }
  return result.data as RunRecord;
}
