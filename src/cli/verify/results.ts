/**
 * @module
 * `witness verify RESULTS.jsonl --keys DIR.json` for signed simulation results
 * (`witness sim --sign`, docs/results-format.md): every line, every chain, every
 * checkpoint, and the set of runs against the plan, each problem by line. Two entries
 * of the kinds table: the results file (its first line's receipt declares
 * `witness/sim-record`) and its checkpoint file (`witness/sim-checkpoints`), which
 * stands for the results beside it.
 */
import { readNamedFile } from '../../attest/files.js';
import { loadKeyDirectory } from '../../attest/index.js';
import { WitnessError } from '../../core/errors.js';
import { pickProblem } from '../../core/problem.js';
import { CHECKPOINTS_FILE_TYPE, RECORD_TYPE } from '../../sim/transcript/format.js';
import { verifyResults } from '../../sim/transcript/verify.js';
import { type CliContext, resolvePath } from '../context.js';
import type { Artifact, ArtifactKind, OptionName, Outcome, VerifyCliOptions } from './types.js';

const USES: readonly OptionName[] = ['keys', 'checkpoint', 'cassette', 'revocation', 'now', 'allowPartial'];
const WHY: ArtifactKind['why'] = {
  output: 'a results file carries its own content',
  nonces: 'results lines carry no nonces (their chain and plan catch a replayed line)',
  construction: 'results have no delegation ancestry',
  skew: 'results have no validity window',
  requireCosigner: 'results carry no co-signatures',
};
const SUFFIX = '.checkpoint.json';

const RESULTS: Omit<ArtifactKind, 'form'> = {
  what: 'a signed results file',
  declared: { field: 'receipt.type', values: [RECORD_TYPE] },
  uses: USES,
  requires: ['keys'],
  why: WHY,
  verify: (a, o, ctx) => _verify(a.path, o, ctx),
};

export const RESULTS_KINDS: readonly ArtifactKind[] = [
  { ...RESULTS, form: 'jsonl' },
  // A results file of one line reads as one JSON document.
  { ...RESULTS, form: 'json' },
  {
    what: 'a results checkpoint file',
    form: 'json',
    declared: { field: 'type', values: [CHECKPOINTS_FILE_TYPE] },
    uses: USES.filter((n) => n !== 'checkpoint'),
    requires: ['keys'],
    why: { ...WHY, checkpoint: 'the file given is the checkpoint file' },
    verify: (a, o, ctx) => _verifyCheckpointFile(a, o, ctx),
  },
];

/** A checkpoints file is a JSON document; a kept tree head is a signed note (its origin line first). */
function _isJson(path: string): boolean {
  return readNamedFile(path, 'checkpoint').toString('utf8').trimStart().startsWith('{');
}

/** The results beside a checkpoint file named RESULTS.checkpoint.json. */
function _verifyCheckpointFile(a: Artifact, o: VerifyCliOptions, ctx: CliContext): Promise<Outcome> {
  if (!a.path.endsWith(SUFFIX))
    throw new WitnessError(
      'USAGE',
      `${a.name} is a results checkpoint not named RESULTS${SUFFIX}; verify the results file and give this one with --checkpoint.`,
    );
  return _verify(a.path.slice(0, -SUFFIX.length), { ...o, checkpoint: a.path }, ctx);
}

async function _verify(results: string, o: VerifyCliOptions, ctx: CliContext): Promise<Outcome> {
  const checkpoint = o.checkpoint ? resolvePath(ctx, o.checkpoint) : undefined;
  // --checkpoint names the checkpoints file (JSON) or a tree head kept from earlier (a signed note).
  const kept = checkpoint !== undefined && !_isJson(checkpoint);
  const result = verifyResults(results, {
    directory: loadKeyDirectory(resolvePath(ctx, o.keys as string)),
    ...(checkpoint && !kept ? { checkpoints: checkpoint } : {}),
    ...(checkpoint && kept ? { keptHeads: checkpoint } : {}),
    ...(o.cassette ? { cassette: resolvePath(ctx, o.cassette) } : {}),
    revocation: o.revocation,
    now: o.now ?? Date.now(),
    allowPartial: o.allowPartial ?? false,
  });
  const { ok, problems, ...details } = result;
  // Valid as some shards only: said first, so a reader of the verdict cannot miss it.
  const verdict = ok
    ? result.partial && result.shards
      ? `valid (partial: shards ${result.shards.present.join(', ')} of ${result.shards.count})`
      : 'valid'
    : 'invalid';
  const signatures = `${result.signatures} signature${result.signatures === 1 ? '' : 's'} verified`;
  const shards = result.shards ? `, shards ${result.shards.present.join(', ')} of ${result.shards.count}` : '';
  const foreign = problems.length === 1 && problems[0]?.code === 'UNKNOWN_KEY' && problems[0].line === undefined;
  const what = foreign
    ? `${result.lines} lines, signed by a key your key directory does not hold`
    : result.experiment === null
      ? `${result.lines} lines; the plan could not be rebuilt`
      : `${result.runs} of ${result.planned} planned runs of experiment ${JSON.stringify(result.experiment)}${shards} on ${result.lines} lines, ${signatures}, trusting your key directory`;
  // What a pass was held to, said beside it: a verdict that checked kept tree heads says so.
  const held = result.anchored.map((a) => `${a.size} lines${a.shard === null ? '' : ` of shard ${a.shard}`}`);
  const extension =
    ok && kept && held.length > 0 ? `; it extends the checkpoint ${o.checkpoint} (${held.join(', ')})` : '';
  return {
    ok,
    summary: `${verdict}: results ${results}: ${what}${extension}.`,
    problems: problems.map(pickProblem),
    details,
  };
}
