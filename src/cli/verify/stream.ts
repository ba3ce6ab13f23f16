/**
 * @module
 * `witness verify STREAM.jsonl --keys DIR.json` for a recorded stream (docs/attest.md
 * §10): every chunk against its receipt, the chain and the tree, the checkpoints and the
 * final release receipt. The final receipt is a receipt: every option of attest's
 * verifier applies to it. `--allow-partial` accepts a stream cut before its final
 * receipt when nothing else is wrong — the verdict then says "partial", never "valid".
 */
import { readNamedFile } from '../../attest/files.js';
import { RECORDED_STREAM_TYPE, type StreamVerifyResult, verifyStream } from '../../attest/index.js';
import { pickProblem } from '../../core/problem.js';
import { RECEIPT_OPTIONS, withVerifyOptions } from './receipts.js';
import type { ArtifactKind, OptionName, Outcome } from './types.js';

// The final receipt takes every option of attest's verifier but --output: the recording carries its chunks.
const USES: readonly OptionName[] = [...RECEIPT_OPTIONS.filter((n) => n !== 'output'), 'allowPartial'];

const STREAM: Omit<ArtifactKind, 'form'> = {
  what: 'a recorded stream',
  declared: { field: 'type', values: [RECORDED_STREAM_TYPE] },
  uses: USES,
  requires: ['keys'],
  why: { output: 'a recorded stream carries its own chunks' },
  verify: (a, o, ctx) =>
    withVerifyOptions(ctx, o, async (options) => {
      const recording = readNamedFile(a.path, 'recorded stream');
      const result = await verifyStream(recording, { ...options, partial: o.allowPartial ?? false });
      return streamOutcome(result, o.allowPartial ?? false);
    }),
};

/** A recording of several lines is JSON Lines; one of its header alone reads as one JSON document. */
export const STREAM_KINDS: readonly ArtifactKind[] = [
  { ...STREAM, form: 'jsonl' },
  { ...STREAM, form: 'json' },
];

/** The one outcome shape: a partial verdict, when allowed, is ok with the cut as a warning. */
export function streamOutcome(result: StreamVerifyResult, allowPartial: boolean): Outcome {
  const s = result.stream;
  const what = s ? `stream of artifact ${s.artifact}, task ${s.task}, session ${s.session}` : 'recorded stream';
  const leaf = result.path?.at(-1);
  const released = leaf ? `, released by ${leaf.deployer}/${leaf.instance} with key ${leaf.key_id}` : '';
  const checkpoints = `${result.checkpoints} checkpoint${result.checkpoints === 1 ? '' : 's'} verified`;
  const partial = result.verdict === 'partial' && allowPartial;
  const summary =
    result.verdict === 'valid'
      ? `valid: ${what}: ${result.size} chunks, ${result.bytes.length} bytes, policy ${result.policy}${released}; ${checkpoints}.`
      : result.verdict === 'partial'
        ? `partial: ${what}: cut after ${result.received} chunks, before its final receipt; a checkpoint${result.provenBy ? ` signed by ${result.provenBy.deployer} with key ${result.provenBy.key_id}` : ''} proves the first ${result.proven} (${result.bytes.length} bytes).`
        : `invalid: ${what}: ${result.received} chunks received${result.size === null ? '' : ` of ${result.size} signed`}; ${checkpoints}.`;
  const problems = result.problems.map(pickProblem);
  return {
    ok: result.ok || partial,
    summary,
    problems: partial ? [] : problems,
    ...(partial ? { warnings: problems.map((p) => `${p.code}: ${p.message}`) } : {}),
    details: {
      verdict: result.verdict,
      stream: s ?? null,
      policy: result.policy ?? null,
      received: result.received,
      size: result.size,
      proven: result.proven,
      proven_by: result.provenBy ?? null,
      checkpoints: result.checkpoints,
      bytes: result.bytes.length,
      path: result.path ?? null,
      signatures_checked: result.signaturesChecked,
    },
  };
}
