/**
 * @module
 * The first half of verifying a signed results file: its checkpoints. Each must be
 * signed by a key of the verifier's own directory, valid and not revoked when it
 * signed, for the deployer it names; together they must describe one experiment and
 * one sharding, each shard once. From them the verifier rebuilds the plan: the
 * experiment's runs, restricted to the shards the checkpoints declare.
 */
import type { KeyDirectory } from '../../attest/key-directory.js';
import { keyProblem, type RevocationPolicy } from '../../attest/key-status.js';
import { canonicalize } from '../../core/canonical-json.js';
import { lazyPlan, type PlannedRun } from '../experiment/plan.js';
import { type Experiment, parseExperiment } from '../experiment/schema.js';
import { type Checkpoint, checkpointSigningBytes } from './format.js';
import { problem, type ResultsProblem } from './reasons.js';
import { checkCheckpointNote } from './verify-tree-heads.js';

/** Where problems go: an array, or a list that keeps only the first of each code. */
export type ProblemSink = { push(problem: ResultsProblem): unknown };

/**
 * The runs of the declared shards, computed when asked (a run is a hash of its cell,
 * index and seed): checking a 2-million-run file costs the plan's cells, not its runs.
 */
export interface VerifiedPlan {
  /** Planned runs in the declared shards. */
  readonly size: number;
  /** Every seq of the plan is below this. */
  readonly end: number;
  /** The run at `seq`, or undefined when no declared shard has it. */
  at(seq: number): PlannedRun | undefined;
  /** The whole sweep's run at `seq`, whichever shard holds it. */
  sweepAt(seq: number): PlannedRun | undefined;
}

const NO_PLAN: VerifiedPlan = { size: 0, end: 0, at: () => undefined, sweepAt: () => undefined };

export interface KeyCheckOptions {
  directory: KeyDirectory;
  revocation: RevocationPolicy;
  now: number;
}

/** The checkpoints' verdict: the plan they describe, and one chain per checkpoint by shard number. */
export interface CheckedCheckpoints {
  experiment: Experiment | undefined;
  /** Shards in the sharding (1 for a whole sweep). */
  shardCount: number;
  /** Checkpoint by shard number (1-based; 1 for a whole sweep). */
  chains: Map<number, Checkpoint>;
  /** The plan's runs in the declared shards. */
  plan: VerifiedPlan;
  signatures: number;
}

export function checkCheckpoints(
  checkpoints: readonly Checkpoint[],
  keys: KeyCheckOptions,
  problems: ProblemSink,
): CheckedCheckpoints {
  let signatures = 0;
  checkpoints.forEach((cp, i) => {
    if (
      checkSignature(
        cp.key_id,
        cp.deployer,
        Date.parse(cp.signed_at),
        checkpointSigningBytes(cp),
        cp.sig,
        keys,
        problems,
        `checkpoint ${i + 1}${_shardLabel(cp)}`,
      )
    )
      signatures++;
    checkCheckpointNote(cp, `checkpoint ${i + 1}${_shardLabel(cp)}`, keys, problems);
  });
  const first = checkpoints[0] as Checkpoint;
  const shardCount = first.shard?.count ?? 1;
  const chains = new Map<number, Checkpoint>();
  for (const cp of checkpoints) {
    if (canonicalize(cp.experiment) !== canonicalize(first.experiment))
      problems.push(
        problem(
          'PLAN_MISMATCH',
          `the checkpoint${_shardLabel(cp)} is of another experiment than the first checkpoint; a file holds one experiment`,
        ),
      );
    else if ((cp.shard?.count ?? 1) !== shardCount || (cp.shard === null) !== (first.shard === null))
      problems.push(
        problem(
          'PLAN_MISMATCH',
          `the checkpoint${_shardLabel(cp)} belongs to another sharding than${_shardLabel(first)}`,
        ),
      );
    else if (chains.has(cp.shard?.index ?? 1))
      problems.push(
        problem(
          'PLAN_MISMATCH',
          `two checkpoints claim the same chain (${cp.shard ? `shard ${cp.shard.index}/${cp.shard.count}` : 'the whole sweep'}); a merge takes each shard once`,
        ),
      );
    else chains.set(cp.shard?.index ?? 1, cp);
  }
  const experiment = _experiment(first, problems);
  const plan = experiment ? _declaredPlan(experiment, shardCount, [...chains.keys()]) : NO_PLAN;
  return { experiment, shardCount, chains, plan, signatures };
}

function _declaredPlan(experiment: Experiment, shardCount: number, shards: number[]): VerifiedPlan {
  const all = lazyPlan(experiment);
  const declared = new Set(shards);
  return {
    size: shards.reduce((n, index) => n + lazyPlan(experiment, { index, count: shardCount }).length, 0),
    end: all.end,
    at: (seq) => (declared.has((seq % shardCount) + 1) ? all.at(seq) : undefined),
    sweepAt: (seq) => all.at(seq),
  };
}

/** The experiment a checkpoint signed, loaded as a sweep would load it (and unchanged by loading). */
function _experiment(cp: Checkpoint, problems: ProblemSink): Experiment | undefined {
  try {
    const experiment = parseExperiment(cp.experiment, 'the experiment in the checkpoint');
    if (canonicalize(experiment) === canonicalize(cp.experiment)) return experiment;
    problems.push(
      problem(
        'PLAN_MISMATCH',
        'the experiment in the checkpoint is not in the form a sweep records (loading it changes it), so its plan cannot be rebuilt exactly',
      ),
    );
  } catch (error) {
    problems.push(
      problem('PLAN_MISMATCH', `the experiment in the checkpoint does not load: ${(error as Error).message}`),
    );
  }
  return undefined;
}

/**
 * Checks one signature against the verifier's directory: key known, belonging to the
 * deployer (when one is named), valid and not revoked at `signedAt`, signature good.
 * Pushes the problem and returns false otherwise.
 */
export function checkSignature(
  kid: string,
  deployer: string | undefined,
  signedAt: number,
  message: Uint8Array,
  sig: string,
  keys: KeyCheckOptions,
  problems: ProblemSink,
  what: string,
  line?: number,
): boolean {
  const key = keys.directory.get(kid);
  if (!key) {
    problems.push(problem('UNKNOWN_KEY', `${what} is signed by key ${kid}, which is not in your key directory`, line));
    return false;
  }
  if (deployer !== undefined && key.deployer !== deployer) {
    problems.push(
      problem('WRONG_DEPLOYER', `${what} names deployer ${deployer}; key ${kid} belongs to ${key.deployer}`, line),
    );
    return false;
  }
  const status = keyProblem(key, signedAt, keys.now, keys.revocation);
  if (status) {
    problems.push(problem(status.code as 'REVOKED_KEY' | 'KEY_NOT_VALID_AT_ISSUE', `${what}: ${status.message}`, line));
    return false;
  }
  if (!key.verify(message, sig)) {
    problems.push(
      problem(
        'BAD_SIGNATURE',
        `${what}: the signature of key ${kid} does not verify: it was changed after it was signed`,
        line,
      ),
    );
    return false;
  }
  return true;
}

function _shardLabel(cp: Checkpoint): string {
  return cp.shard ? ` of shard ${cp.shard.index}/${cp.shard.count}` : '';
}
