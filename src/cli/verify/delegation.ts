/**
 * @module
 * `witness verify record.json --keys DIR` for delegation records (`witness a2a send
 * --out`, docs/a2a.md §4), and the one verdict line that `witness a2a send` prints too.
 * The record is re-checked as of its recorded times, so --now, --skew and
 * --construction do not apply; it carries its output, and consumes no nonce.
 */
import type { AnswerCheck } from '../../a2a/answer.js';
import { verifyDelegationRecord } from '../../a2a/delegation-record.js';
import type { Condition } from '../../a2a/metadata.js';
import type { StreamVerifyResult } from '../../attest/index.js';
import { loadKeyDirectory } from '../../attest/index.js';
import { pickProblem } from '../../core/problem.js';
import { type CliContext, resolvePath } from '../context.js';
import type { Artifact, Outcome, VerifyCliOptions } from './types.js';

/** Why the options a delegation record has no use for do not apply. */
export const NOT_FOR_DELEGATION = {
  output: 'it carries its own output (the message text or the artifacts)',
  nonces: 'its nonces were consumed, if at all, when the parent verified the answer; a re-check consumes none',
  construction: 'it is checked under the construction the parent asked for, which it records',
  skew: 'it is checked as of its recorded verification time',
  now: 'it is checked as of its recorded verification time',
} as const;

/** Re-checks a parsed delegation record with the options that apply. */
export async function verifyDelegationFile(artifact: Artifact, o: VerifyCliOptions, ctx: CliContext): Promise<Outcome> {
  const result = await verifyDelegationRecord(artifact.value, {
    directory: loadKeyDirectory(resolvePath(ctx, o.keys as string)),
    revocation: o.revocation,
    requireCosigners: o.requireCosigner,
  });
  const { record, check } = result;
  const summary =
    record && check
      ? delegationVerdict(result.ok, check, {
          child: result.childDeployer ?? '?',
          construction: record.request.construction,
          as: `as of ${record.verified_at}`,
          ...(result.streams ? { streams: result.streams } : {}),
        })
      : 'invalid: not a delegation record.';
  return {
    ok: result.ok,
    summary,
    problems: result.problems.map(pickProblem),
    details: record
      ? {
          url: record.url,
          child: result.childDeployer ?? null,
          construction: record.request.construction,
          task_id: record.request.task_id,
          answer: 'message' in record.answer ? 'message' : 'task',
          ...(check?.task ? { task: check.task } : {}),
          output_bytes: Buffer.byteLength(check?.output ?? '', 'utf8'),
          paths: check?.paths ?? [],
          signatures_checked: check?.signaturesChecked ?? 0,
          streams: (result.streams ?? []).map(streamSummary),
        }
      : {},
  };
}

/**
 * The verdict line of a delegation: who answered, with what, under which construction,
 * and either how it was released or that it did not verify (the problems follow it).
 */
export function delegationVerdict(
  ok: boolean,
  check: AnswerCheck,
  about: { child: string; construction: Condition; as?: string; streams?: readonly StreamVerifyResult[] },
): string {
  const bytes = Buffer.byteLength(check.output, 'utf8');
  const streamed = about.streams?.length
    ? `, streamed in ${about.streams.map((s) => `${s.received} chunk(s) with ${s.checkpoints} checkpoint(s)`).join(' and ')}`
    : '';
  const what = check.task
    ? `task ${check.task.id}, ${check.paths.length} attested artifact(s), ${bytes} bytes of text${streamed}`
    : `a message of ${bytes} bytes${streamed}`;
  const under = `under ${about.construction}${about.as ? ` ${about.as}` : ''}`;
  if (!ok) return `invalid: the answer of ${about.child} (${what}) did not verify ${under}:`;
  const leaf = check.paths[0]?.at(-1);
  const cosigned = leaf && leaf.type === 'edge' ? `, co-signed by ${leaf.cosigners.join(', ')}` : '';
  const release = leaf
    ? `released by ${leaf.deployer}/${leaf.instance} with key ${leaf.key_id}, at depth ${leaf.depth}${cosigned}`
    : 'released';
  return `valid: the answer of ${about.child} (${what}) verified ${under}: ${release}.`;
}

/** A stream's verdict in a report: which stream, how much of it arrived and was proven. */
export function streamSummary(result: StreamVerifyResult): Record<string, unknown> {
  return {
    stream: result.stream ?? null,
    verdict: result.verdict,
    policy: result.policy ?? null,
    received: result.received,
    size: result.size,
    checkpoints: result.checkpoints,
  };
}
