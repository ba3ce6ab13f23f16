/**
 * @module
 * Joining results files (the shards of one sweep, or reruns): lines are kept byte
 * for byte, duplicates of the same run collapse, two different lines for one run id
 * are an error, and the output is in `seq` order — so merging shards 1/n … n/n gives
 * exactly the file an unsharded run writes. Signed shards keep their own chains and
 * checkpoints (src/sim/transcript/merge.ts).
 */
import { existsSync, rmSync } from 'node:fs';
import { writeFileAtomic } from '../../core/atomic-write.js';
import { WitnessError } from '../../core/errors.js';
import { readJsonl } from '../../core/jsonl.js';
import { checkpointPath } from '../transcript/format.js';
import { mergedCheckpoints, writeMergedCheckpoints } from '../transcript/merge.js';
import { checkRecord } from './record-schema.js';

export interface MergeReport {
  lines: number;
  duplicates: number;
  /** The inputs were signed shards: the merged file carries their checkpoints (RESULTS.checkpoint.json). */
  signed: boolean;
  problems: { file: string; line: number; message: string }[];
  /** With a plan: its runs that no input holds, in `seq` order (the merge is incomplete while any is). */
  missing: { id: string; seq: number; cell: string }[];
}

/** The runs a merge should hold (`planRuns` of the sweep's experiment). */
export type MergePlan = readonly { id: string; seq: number; cellKey: string }[];

export function mergeResults(inputs: readonly string[], out: string, plan?: MergePlan): MergeReport {
  if (inputs.length === 0) throw new WitnessError('USAGE', 'Name at least one results file to merge.');
  // A shard file that is not there is a shard not merged, not an empty one.
  for (const file of inputs) if (!existsSync(file)) throw new WitnessError('NOT_FOUND', `${file} does not exist; name only results files that are there (a shard still running, or a wrong path?).`);
  const contentsOf = new Map(inputs.map((file) => [file, readJsonl(file, checkRecord)]));
  const signed = mergedCheckpoints(inputs, (file) => {
    const c = contentsOf.get(file)!;
    if (c.problems.length > 0) throw new WitnessError('INVALID_INPUT', `${file}:${c.problems[0]!.line} is not a results line (${c.problems[0]!.message}); a signed merge keeps every line: check the file with witness verify ${file} --keys DIR.json.`);
    return c.records.length + (c.tornTail ? 1 : 0);
  });
  const byId = new Map<string, { seq: number; raw: string; where: string }>();
  const problems: MergeReport['problems'] = [];
  let duplicates = 0;
  for (const file of inputs) {
    const contents = contentsOf.get(file)!;
    for (const p of contents.problems) problems.push({ file, ...p });
    for (const { value, raw, line } of contents.records) {
      const seen = byId.get(value.id);
      if (!seen) byId.set(value.id, { seq: value.seq, raw, where: `${file}:${line}` });
      else if (seen.raw === raw) duplicates++;
      else throw new WitnessError('INVALID_INPUT', `Run ${value.id} differs between ${seen.where} and ${file}:${line}; these files are not from the same sweep.`);
    }
  }
  const lines = [...byId.values()].sort((a, b) => a.seq - b.seq || (a.raw < b.raw ? -1 : 1));
  // Atomic and durable: a crash never leaves a half-merged file.
  writeFileAtomic(out, lines.map((l) => `${l.raw}\n`).join(''));
  // The merged file's checkpoints are the shards' own; a plain merge leaves none (not a stale one).
  if (signed) writeMergedCheckpoints(out, signed);
  else rmSync(checkpointPath(out), { force: true });
  const missing = (plan ?? []).filter((r) => !byId.has(r.id)).map((r) => ({ id: r.id, seq: r.seq, cell: r.cellKey }));
  return { lines: lines.length, duplicates, problems, signed: signed !== undefined, missing };
}
