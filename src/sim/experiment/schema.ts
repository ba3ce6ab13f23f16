/**
 * @module
 * Experiment files (consensus.md §9): a grid of game settings, `runs` per cell, and a
 * base seed. YAML or JSON. Validated here, at the trust boundary, so every later
 * step can rely on the shape; errors name the field and say what is allowed.
 */
import { z } from 'zod';
import { closestName } from '../../core/did-you-mean.js';
import { WitnessError } from '../../core/errors.js';
import { BYZANTINE_STRATEGIES, HONEST_POLICIES } from '../agents/policy/policies.js';
import { DECIDE_SPEC_PATTERN } from '../decide/mode.js';
import { RULE_NAMES, type RuleName } from '../decide/rules.js';

const _oneOrMany = <T extends z.ZodType>(item: T) =>
  z.union([item, z.array(item).min(1, { error: 'must not be an empty list' })]);

const count = (min: number, what: string) =>
  z
    .number({ error: `must be a whole number (${what})` })
    .int({ error: `must be a whole number (${what})` })
    .min(min, { error: `must be at least ${min} (${what})` });

const ValueRangeSchema = z
  .tuple([z.number().int(), z.number().int()], { error: 'must be [lo, hi], two whole numbers' })
  .refine(([lo, hi]) => lo <= hi, { error: 'is reversed or empty: lo must be ≤ hi' });

const nameIn = (table: Record<string, unknown>, what: string) =>
  z.string().refine((name) => name in table, {
    error: (issue) => `unknown ${what} "${String(issue.input)}"; choose one of: ${Object.keys(table).join(', ')}`,
  });

/** Who answers the prompts (consensus.md §7): rule-based policies, an OpenAI-compatible server, or a local GGUF model. */
export const AGENT_KINDS = ['policy', 'llm', 'embedded'] as const;
export type AgentKind = (typeof AGENT_KINDS)[number];
const _agentKind = z.enum(AGENT_KINDS, { error: 'must be "policy", "llm" or "embedded"' });

export const GridSchema = z.strictObject({
  agents: _oneOrMany(_agentKind).default('policy'),
  /** Mixed populations: the kind of the Byzantine agents when it differs from `agents`. */
  byzantineAgents: _agentKind.optional(),
  /** Model name (llm) or GGUF file (embedded); required when any agent is model-backed. */
  model: _oneOrMany(z.string().min(1, { error: 'must not be empty' })).optional(),
  honestPolicy: _oneOrMany(nameIn(HONEST_POLICIES, 'honest policy')).default('plurality'),
  byzantineStrategy: _oneOrMany(nameIn(BYZANTINE_STRATEGIES, 'Byzantine strategy')).default('random'),
  honest: _oneOrMany(count(1, 'honest agents; at least one')).optional(),
  /** Alternative to `honest`: total agents N, honest = N − byzantine. */
  total: _oneOrMany(count(1, 'total agents N')).optional(),
  byzantine: _oneOrMany(count(0, 'Byzantine agents')).default(0),
  awareness: _oneOrMany(z.enum(['may_exist', 'none_exist'], { error: 'must be "may_exist" or "none_exist"' })).default(
    'may_exist',
  ),
  range: z.union([ValueRangeSchema, z.array(ValueRangeSchema).min(1)]).default([0, 50]),
  rounds: _oneOrMany(count(1, 'maximum rounds R')).default(50),
  /** Who ends the game: `vote` (the paper), `rule:NAME` or `hybrid:NAME` (consensus.md §8). */
  decide: _oneOrMany(
    z
      .string()
      .regex(DECIDE_SPEC_PATTERN, {
        error: `must be vote, rule:NAME or hybrid:NAME with NAME one of ${RULE_NAMES.join(', ')}`,
      })
      .refine((t) => t === 'vote' || RULE_NAMES.includes(t.split(':')[1] as RuleName), {
        error: `names an unknown rule; choose one of ${RULE_NAMES.join(', ')}`,
      }),
  ).default('vote'),
  /** With rule and hybrid: the round from which the rule decides. */
  after: _oneOrMany(count(1, 'rounds of discussion before a rule decides')).default(3),
});

const BudgetSchema = z.strictObject({
  rounds: count(1, 'rounds before escalation').optional(),
  tokens: count(1, 'model tokens before escalation').optional(),
  seconds: z
    .number({ error: 'must be a number of seconds' })
    .positive({ error: 'must be more than 0 seconds' })
    .optional(),
});

/**
 * Cell fields that may be a comparison's treatment (`paired`): cells that differ only
 * in these play the same games. Not the sizes or the range: those change the game.
 */
export const PAIRED_AXES = [
  'decide',
  'after',
  'budget',
  'honestPolicy',
  'byzantineStrategy',
  'awareness',
  'rounds',
  'agents',
  'byzantineAgents',
  'model',
] as const;
export type PairedAxis = (typeof PAIRED_AXES)[number];

export const ExperimentSchema = z.strictObject({
  name: z.string().min(1).default('experiment'),
  description: z.string().optional(),
  seed: z
    .union([z.number().int(), z.string().min(1)], { error: 'must be a whole number or a non-empty string' })
    .default(1),
  runs: count(1, 'runs per cell').default(25),
  tries: count(1, 'tries for a well-formed answer').default(3),
  /** Circuit breaker: a game over budget ends as `escalated`. */
  budget: BudgetSchema.optional(),
  /**
   * The treatment axes: cells that differ only in these play the same games (seed,
   * initial values, Byzantine seats). Absent: decide and after. No default value, so
   * an experiment that does not set it is the object it was (signed checkpoints name it).
   */
  paired: z.array(z.enum(PAIRED_AXES, { error: `must be one of ${PAIRED_AXES.join(', ')}` })).optional(),
  grid: GridSchema,
});

export type ExperimentInput = z.input<typeof ExperimentSchema>;
export type Experiment = z.output<typeof ExperimentSchema>;

/** For an unknown key, the known key it was probably meant to be (`round` → `grid.rounds`), at its level or one below. */
function _suggestion(issue: z.core.$ZodIssue): string {
  if (issue.code !== 'unrecognized_keys') return '';
  const shapeOf = (schema: unknown) => (schema as { shape?: Record<string, unknown> } | undefined)?.shape ?? {};
  let level: unknown = ExperimentSchema;
  for (const part of issue.path) level = shapeOf(level)[part as string];
  const known = new Map<string, string>(); // name → how to write it from this level
  for (const [key, child] of Object.entries(shapeOf(level))) {
    for (const inner of Object.keys(shapeOf(child))) if (!known.has(inner)) known.set(inner, `${key}.${inner}`);
  }
  for (const key of Object.keys(shapeOf(level))) known.set(key, key);
  return issue.keys
    .map((key) => {
      const name = closestName(key, [...known.keys()]);
      return name === undefined ? '' : ` (did you mean "${known.get(name)}"?)`;
    })
    .join('');
}

/** Validates an experiment; the error names each wrong field (`grid.honest: …`). */
export function parseExperiment(input: unknown, source = 'experiment'): Experiment {
  const result = ExperimentSchema.safeParse(input);
  if (!result.success) {
    const lines = result.error.issues.map(
      (issue) => `${[...issue.path].join('.') || '(top level)'}: ${issue.message}${_suggestion(issue)}`,
    );
    throw new WitnessError('INVALID_INPUT', `${source} is not a valid experiment: ${lines.join('; ')}.`, {
      data: { issues: result.error.issues },
    });
  }
  const grid = result.data.grid;
  if (grid.honest === undefined && grid.total === undefined) {
    throw new WitnessError(
      'INVALID_INPUT',
      `${source} is not a valid experiment: grid.honest: is required (or give grid.total, the number of agents N).`,
    );
  }
  if (grid.honest !== undefined && grid.total !== undefined) {
    throw new WitnessError(
      'INVALID_INPUT',
      `${source} is not a valid experiment: grid.honest and grid.total: give one of them, not both.`,
    );
  }
  const kinds = [...(Array.isArray(grid.agents) ? grid.agents : [grid.agents]), grid.byzantineAgents ?? 'policy'];
  if (grid.model === undefined && kinds.some((k) => k !== 'policy')) {
    throw new WitnessError(
      'INVALID_INPUT',
      `${source} is not a valid experiment: grid.model: is required for llm and embedded agents (--model NAME or --model FILE.gguf).`,
    );
  }
  return result.data;
}
