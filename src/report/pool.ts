/**
 * @module
 * Pooled summaries: runs of many cells grouped by a few fields (`witness report
 * --by model,n`), as the paper reports its rates (by model, by group size, by
 * awareness), each group summarised exactly as a cell is.
 */
import { WitnessError } from '../core/errors.js';
import type { RunRecord } from '../sim/experiment/record.js';
import { GroupedSummaries, type RunsSummary } from '../sim/stats.js';

/** A field's value for one run; null where the field does not apply (no model, no strategy). */
export type GroupValue = string | number | null;

interface _Field {
  about: string;
  of(record: RunRecord): GroupValue;
}

/** The fields runs can be pooled by, with what each means. */
export const POOL_FIELDS = {
  model: { about: 'model name or GGUF file (none for rule-based agents)', of: (r) => r.config.model ?? null },
  n: { about: 'all agents, N = h + b', of: (r) => r.honest + r.byzantine },
  honest: { about: 'honest agents h', of: (r) => r.honest },
  byzantine: { about: 'Byzantine agents b', of: (r) => r.byzantine },
  awareness: { about: 'may_exist or none_exist', of: (r) => r.config.awareness },
  strategy: {
    about: 'Byzantine strategy of rule-based Byzantine agents (none at b = 0)',
    of: (r) => r.config.byzantineStrategy,
  },
  decide: { about: 'who ends the game: vote, rule:NAME or hybrid:NAME', of: (r) => r.config.decide ?? 'vote' },
  policy: {
    about: 'honest policy of rule-based honest agents (none for model-backed ones)',
    of: (r) => (r.config.agents === 'policy' ? r.config.honestPolicy : null),
  },
  agents: { about: 'who answers for the honest agents: policy, llm or embedded', of: (r) => r.config.agents },
  rounds: { about: 'the round limit R', of: (r) => r.config.rounds },
  experiment: { about: 'experiment name', of: (r) => r.experiment },
  cell: { about: 'the whole cell (the same as no --by)', of: (r) => r.cell },
} satisfies Record<string, _Field>;

export type PoolField = keyof typeof POOL_FIELDS;

export interface GroupSummary extends RunsSummary {
  /** The group's value of each pooled field, in the order the fields were given. */
  group: Partial<Record<PoolField, GroupValue>>;
}

const _isField = (name: string): name is PoolField => Object.hasOwn(POOL_FIELDS, name);

/** Parses `model,n`: known field names, each once. */
export function parsePoolFields(text: string): PoolField[] {
  const names = text.split(',').map((s) => s.trim());
  const valid = Object.keys(POOL_FIELDS).join(', ');
  if (names.some((n) => n === ''))
    throw new WitnessError(
      'USAGE',
      `"${text}" has an empty field name; give fields separated by commas, e.g. model,n. Valid fields: ${valid}.`,
    );
  const unknown = names.filter((n) => !_isField(n));
  if (unknown.length)
    throw new WitnessError(
      'USAGE',
      `Unknown field${unknown.length > 1 ? 's' : ''} to pool by: ${unknown.map((n) => `"${n}"`).join(', ')}. Valid fields: ${valid}.`,
    );
  const twice = names.find((n, i) => names.indexOf(n) !== i);
  if (twice) throw new WitnessError('USAGE', `"${twice}" is given twice; give each field once.`);
  return names as PoolField[];
}

/**
 * Pools runs into one group per distinct combination of the fields' values and
 * summarises each group. Groups are sorted by the fields' values (numbers by size,
 * none last), so `--by n` lists N = 4, 8, 16 in that order.
 */
export function poolRuns(
  records: Iterable<RunRecord>,
  fields: readonly PoolField[],
  confidence = 0.95,
): GroupSummary[] {
  const values = new Map<string, GroupValue[]>();
  const groups = new GroupedSummaries<RunRecord>((r) => {
    const v = fields.map((f) => POOL_FIELDS[f].of(r));
    const key = JSON.stringify(v);
    if (!values.has(key)) values.set(key, v);
    return key;
  });
  for (const record of records) groups.add(record);
  return [...groups.finish(confidence)]
    .map(([key, summary]) => ({ values: values.get(key)!, summary }))
    .sort((a, b) => _compareValues(a.values, b.values))
    .map(({ values: v, summary }) => ({ group: Object.fromEntries(fields.map((f, i) => [f, v[i]!])), ...summary }));
}

function _compareValues(a: readonly GroupValue[], b: readonly GroupValue[]): number {
  for (let i = 0; i < a.length; i++) {
    const x = a[i]!;
    const y = b[i]!;
    if (x === y) continue;
    if (x === null) return 1;
    if (y === null) return -1;
    if (typeof x === 'number' && typeof y === 'number') return x - y;
    return String(x) < String(y) ? -1 : 1;
  }
  return 0;
}

/** A short label of a group, e.g. `model=Qwen/Qwen3-14B n=8`. */
export function groupLabel(group: GroupSummary['group']): string {
  return Object.entries(group)
    .map(([field, value]) => `${field}=${value ?? 'none'}`)
    .join(' ');
}
