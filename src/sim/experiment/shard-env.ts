/**
 * @module
 * `--shard auto`: the shard of this process from the batch engine that started it, so
 * one Kubernetes Indexed Job or one SLURM job array runs a whole sweep.
 *
 * - SLURM array (`sbatch --array=…`): `--shard auto`. Index from
 *   `SLURM_ARRAY_TASK_ID − SLURM_ARRAY_TASK_MIN` (divided by `SLURM_ARRAY_TASK_STEP`),
 *   count from `SLURM_ARRAY_TASK_COUNT`.
 * - Kubernetes Indexed Job: `--shard auto/N` with N the Job's `completions`; the index
 *   is `JOB_COMPLETION_INDEX` (0-based). The pod cannot see `completions`, so it is
 *   passed; with SLURM, `auto/N` checks that N equals the array's task count.
 */
import { WitnessError } from '../../core/errors.js';
import { parseShard, type Shard } from './plan.js';

/** Parses `--shard`: `i/n`, `auto` or `auto/N`, reading the engine's variables from `env`. */
export function resolveShard(text: string, env: NodeJS.ProcessEnv = process.env): Shard {
  const m = /^auto(?:\/(\d+))?$/.exec(text.trim());
  if (!m) return parseShard(text);
  const given = m[1] !== undefined ? Number(m[1]) : undefined;
  if (given !== undefined && given < 1)
    throw new WitnessError('USAGE', `--shard ${text}: the shard count must be at least 1.`);
  const k8s = env.JOB_COMPLETION_INDEX;
  const slurm = env.SLURM_ARRAY_TASK_ID;
  if (k8s !== undefined && slurm !== undefined) {
    throw new WitnessError(
      'USAGE',
      `--shard ${text}: both JOB_COMPLETION_INDEX (Kubernetes) and SLURM_ARRAY_TASK_ID (SLURM) are set; give --shard i/n explicitly.`,
    );
  }
  if (k8s !== undefined) {
    const index = _whole(k8s, 'JOB_COMPLETION_INDEX');
    if (given === undefined)
      throw new WitnessError(
        'USAGE',
        `--shard auto: a Kubernetes Indexed Job does not tell the pod its completions; pass them: --shard auto/N (N = spec.completions; JOB_COMPLETION_INDEX is ${index}).`,
      );
    if (index >= given)
      throw new WitnessError(
        'USAGE',
        `--shard ${text}: JOB_COMPLETION_INDEX is ${index}, not below the count ${given}; set --shard auto/N to the Job's spec.completions.`,
      );
    return { index: index + 1, count: given };
  }
  if (slurm !== undefined) {
    const id = _whole(slurm, 'SLURM_ARRAY_TASK_ID');
    if (env.SLURM_ARRAY_TASK_MIN === undefined || env.SLURM_ARRAY_TASK_COUNT === undefined) {
      throw new WitnessError(
        'USAGE',
        `--shard ${text}: SLURM_ARRAY_TASK_ID is set but SLURM_ARRAY_TASK_MIN or SLURM_ARRAY_TASK_COUNT is not; run under sbatch --array, or give --shard i/n.`,
      );
    }
    const min = _whole(env.SLURM_ARRAY_TASK_MIN, 'SLURM_ARRAY_TASK_MIN');
    const count = _whole(env.SLURM_ARRAY_TASK_COUNT, 'SLURM_ARRAY_TASK_COUNT');
    const step =
      env.SLURM_ARRAY_TASK_STEP !== undefined ? _whole(env.SLURM_ARRAY_TASK_STEP, 'SLURM_ARRAY_TASK_STEP') : 1;
    if (count < 1 || step < 1)
      throw new WitnessError(
        'USAGE',
        `--shard ${text}: SLURM_ARRAY_TASK_COUNT (${count}) and SLURM_ARRAY_TASK_STEP (${step}) must be at least 1.`,
      );
    const offset = id - min;
    if (offset < 0 || offset % step !== 0 || offset / step >= count) {
      throw new WitnessError(
        'USAGE',
        `--shard ${text}: SLURM_ARRAY_TASK_ID ${id} is not one of the ${count} tasks from SLURM_ARRAY_TASK_MIN ${min} in steps of ${step}; an array with gaps (e.g. --array=1,5,9 or %…) cannot be sharded automatically — use --array=0-${count - 1} or --shard i/n.`,
      );
    }
    if (given !== undefined && given !== count)
      throw new WitnessError(
        'USAGE',
        `--shard ${text}: the SLURM array has ${count} tasks (SLURM_ARRAY_TASK_COUNT), not ${given}.`,
      );
    return { index: offset / step + 1, count };
  }
  throw new WitnessError(
    'USAGE',
    `--shard ${text}: no batch engine found in the environment (neither JOB_COMPLETION_INDEX of a Kubernetes Indexed Job nor SLURM_ARRAY_TASK_ID of a SLURM array); give --shard i/n.`,
  );
}

function _whole(value: string, name: string): number {
  if (!/^\d+$/.test(value.trim())) throw new WitnessError('USAGE', `${name} is "${value}", not a whole number.`);
  return Number(value);
}
