/**
 * @module
 * Does a results line belong to the plan? Its run id must be one the plan holds, and
 * its seq, cell, index, seed and experiment name must be that planned run's. Shared by
 * the verifier and by a signed sweep resuming its own file.
 */
import { canonicalize } from '../../core/canonical-json.js';
import type { PlannedRun } from '../experiment/plan.js';
import type { RunRecord } from '../experiment/record.js';

/** Why `record` is not the planned run `planned` (undefined when it is); `planned` undefined: the id is not in the plan. */
export function planMismatch(
  record: RunRecord,
  planned: PlannedRun | undefined,
  experiment: string,
): string | undefined {
  if (!planned)
    return `run ${record.id} (seq ${record.seq}, cell ${record.cell}) is not in the plan of experiment "${experiment}"`;
  const pairs: [string, unknown, unknown][] = [
    ['experiment', record.experiment, experiment],
    ['seq', record.seq, planned.seq],
    ['cell', record.cell, planned.cellKey],
    ['index', record.index, planned.index],
    ['seed', record.seed, planned.seed],
  ];
  const wrong = pairs.find(([, a, b]) => a !== b);
  if (wrong)
    return `run ${record.id} has ${wrong[0]} ${JSON.stringify(wrong[1])}, the plan ${JSON.stringify(wrong[2])}`;
  return canonicalize(record.config) === canonicalize(planned.cell)
    ? undefined
    : `run ${record.id} has another cell configuration than the plan's`;
}
