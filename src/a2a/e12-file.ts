/**
 * @module
 * An E12 results file as `witness verify` reads it (docs/a2a.md §3): its schema — what a
 * run must hold to prove anything — and the checks of the file as a whole: every
 * condition it ran has its configured number of trials and no other condition has any,
 * the forgery is recorded once per construction and still reproduces, and the summary's
 * counts are the trials' own. Each trial is checked by e12-verify.ts.
 */
import { z } from 'zod';
import type { KeyDirectory } from '../attest/key-directory.js';
import { verifyEvidence } from '../attest/verify.js';
import { E12_CONDITIONS, E12_CONDITIONS_BEFORE_STREAM, E12_KIND, type E12Condition } from './e12.js';
import type { E12Problem, E12VerifyOptions } from './e12-verify.js';

const ArtifactSchema = z.strictObject({
  task_id: z.string(),
  context_id: z.string(),
  artifact_id: z.string(),
  parts: z.array(z.unknown()),
});
const TrialSchema = z.object({
  task_id: z.string(),
  condition: z.enum(E12_CONDITIONS),
  output_text: z.string(),
  output_sha256: z.string(),
  output_len: z.number(),
  artifact: ArtifactSchema.optional(),
  evidence: z.unknown(),
  /** dag+stream: the recorded stream, its lines as values. */
  stream: z.array(z.unknown()).min(1).optional(),
  // The reasons are compared with the re-verification's (e12-verify.ts): a recorded verdict is all of it, not only `ok`.
  verdict: z.object({ ok: z.boolean(), reasons: z.array(z.object({ code: z.string() })) }),
  verified_at: z.string(),
});
const ForgerySchema = z.object({
  construction: z.enum(['chain', 'dag']),
  output_text: z.string(),
  evidence: z.unknown(),
  verified_at: z.string(),
  accepted: z.boolean(),
  // Every era of the file records them (test/fixtures/e12): one removed would skip their comparison.
  reasons: z.array(z.string()),
});
const SummarySchema = z.object({ condition: z.enum(E12_CONDITIONS), n: z.number(), verified: z.number() });
export const ResultsSchema = z
  .object({
    // `type` since types are declared; `kind` in files written before (legacy). Exactly one.
    type: z.literal(E12_KIND).optional(),
    kind: z.literal(E12_KIND).optional(),
    v: z.literal(1),
    created_at: z.string(),
    config: z.object({
      trials: z.int().min(1, 'an E12 run has at least one trial per condition'),
      // Files written before the streamed condition name none: they ran none, chain and dag.
      conditions: z
        .array(z.enum(E12_CONDITIONS))
        .refine((c) => E12_CONDITIONS_BEFORE_STREAM.every((x) => c.includes(x)) && new Set(c).size === c.length, {
          message: 'the conditions are none, chain and dag, and may add dag+stream, each once',
        })
        .optional(),
    }),
    keys: z.unknown(),
    card: z.unknown(),
    trials: z.array(TrialSchema).min(1, 'an E12 results file needs at least one trial'),
    forgery: z.array(ForgerySchema).length(2, 'an E12 results file holds the forgery under chain and under dag'),
    summary: z.array(SummarySchema),
    interrupted: z.object({ at: z.string(), trials_recorded: z.int(), trials_planned: z.int() }).optional(),
  })
  .refine((r) => (r.type === undefined) !== (r.kind === undefined), {
    message: 'an E12 results file declares "type" (or, written before, "kind"): exactly one',
    path: ['type'],
  });

export type E12File = z.infer<typeof ResultsSchema>;
export type E12FileTrial = z.infer<typeof TrialSchema>;

/** The conditions the run planned: `config.conditions`, or none, chain and dag in files written before it. */
function _conditions(results: E12File): readonly E12Condition[] {
  return results.config.conditions ?? E12_CONDITIONS_BEFORE_STREAM;
}

/** Every condition has the configured number of trials, and the forgery is recorded once per construction. */
export function shapeProblems(results: E12File): E12Problem[] {
  const problems: E12Problem[] = [];
  const conditions = _conditions(results);
  const planned = results.config.trials * conditions.length;
  const counts = conditions.map((c) => `${results.trials.filter((t) => t.condition === c).length} ${c}`).join(', ');
  if (results.interrupted) {
    const { at, trials_recorded, trials_planned } = results.interrupted;
    if (trials_recorded !== results.trials.length || trials_planned !== planned)
      problems.push({
        code: 'MALFORMED',
        message: `interrupted says ${trials_recorded} of ${trials_planned} trials, but the file holds ${results.trials.length} of the ${planned} its config plans.`,
      });
    problems.push({
      code: 'INCOMPLETE',
      message: `the run was interrupted at ${at}: the file holds ${results.trials.length} of the ${planned} planned trials (${counts}); they are checked below, but this is not the complete experiment.`,
    });
  }
  for (const c of conditions) {
    const n = results.trials.filter((t) => t.condition === c).length;
    // An interrupted run holds fewer (INCOMPLETE says so), never more.
    if (results.interrupted ? n > results.config.trials : n !== results.config.trials)
      problems.push({
        code: 'MALFORMED',
        message: `config.trials says ${results.config.trials} trials per condition, but the file holds ${n} ${c} trials.`,
      });
  }
  const unplanned = new Set(results.trials.map((t) => t.condition).filter((c) => !conditions.includes(c)));
  for (const c of unplanned)
    problems.push({
      code: 'MALFORMED',
      message: `the file holds ${c} trials, but its config runs only ${conditions.join(', ')}.`,
    });
  const constructions = results.forgery.map((f) => f.construction).sort();
  if (constructions.join() !== 'chain,dag')
    problems.push({
      code: 'MALFORMED',
      message: `forgery must hold one chain and one dag entry; it holds ${constructions.join(', ')}.`,
    });
  return problems;
}

export async function forgeryProblems(
  forgery: E12File['forgery'],
  check: Omit<E12VerifyOptions, 'directory'> & { directory: KeyDirectory },
): Promise<E12Problem[]> {
  const problems: E12Problem[] = [];
  for (const f of forgery) {
    const result = await verifyEvidence(f.evidence, Buffer.from(f.output_text, 'utf8'), {
      ...check,
      construction: f.construction,
      now: Date.parse(f.verified_at),
    });
    const expected =
      f.construction === 'chain'
        ? result.ok
        : !result.ok && result.reasons.some((r) => r.code === 'COSIGNATURE_MISSING');
    if (!expected)
      problems.push({
        code: 'FORGERY_NOT_REPRODUCED',
        at: `forgery ${f.construction}`,
        message: `forgery under ${f.construction}: expected ${f.construction === 'chain' ? 'accepted' : 'rejected with COSIGNATURE_MISSING'}, got ${result.ok ? 'accepted' : result.reasons.map((r) => r.code).join(', ')}.`,
      });
    if (result.ok !== f.accepted)
      problems.push({
        code: 'FORGERY_NOT_REPRODUCED',
        at: `forgery ${f.construction}`,
        message: `forgery under ${f.construction}: recorded ${f.accepted ? 'accepted' : 'rejected'} is not reproduced.`,
      });
    else if (!sameCodes(f.reasons, result.reasons))
      problems.push({
        code: 'FORGERY_NOT_REPRODUCED',
        at: `forgery ${f.construction}`,
        message: `forgery under ${f.construction}: recorded reasons ${f.reasons.join(', ') || 'none'}, re-verification gives ${codeList(result.reasons)}.`,
      });
  }
  return problems;
}

/** The same reason codes, each counted once, in any order. */
export function sameCodes(recorded: readonly string[], found: readonly { code: string }[]): boolean {
  const a = [...new Set(recorded)].sort();
  const b = [...new Set(found.map((r) => r.code))].sort();
  return a.length === b.length && a.every((code, i) => code === b[i]);
}

export function codeList(found: readonly { code: string }[]): string {
  return [...new Set(found.map((r) => r.code))].join(', ') || 'none';
}

/** The summary's counts (what a reader quotes) must be the trials' own. */
export function summaryProblems(results: E12File, verifiedBy: Map<string, number>): E12Problem[] {
  const problems: E12Problem[] = [];
  for (const c of _conditions(results)) {
    const s = results.summary.find((x) => x.condition === c);
    const n = results.trials.filter((t) => t.condition === c).length;
    const verified = verifiedBy.get(c) ?? 0;
    if (!s || s.n !== n || s.verified !== verified)
      problems.push({
        code: 'SUMMARY_MISMATCH',
        at: `summary ${c}`,
        message: `the summary row for ${c} says ${s ? `${s.verified}/${s.n}` : 'nothing (it is missing)'}, but the trials re-verify ${verified}/${n}.`,
      });
  }
  return problems;
}
