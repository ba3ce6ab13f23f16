/**
 * @module
 * `witness verify results.json` for E12 results files (`witness a2a bench`, docs/a2a.md
 * §3): recompute every output's SHA-256 and length and re-verify every signature and
 * edge. Of the options of `witness verify`, --keys, --revocation, --require-cosigner
 * and --json apply; the kinds table refuses the others, never ignoring one.
 */
import { verifyE12Results } from '../../a2a/e12-verify.js';
import { loadKeyDirectory } from '../../attest/index.js';
import { pickProblem } from '../../core/problem.js';
import { type CliContext, resolvePath } from '../context.js';
import type { Artifact, Outcome, VerifyCliOptions } from './types.js';

/** Why the options an E12 file has no use for do not apply. */
export const NOT_FOR_E12 = {
  output: 'it carries its own outputs',
  nonces: 'its nonces were consumed during the run; a re-check consumes none',
  construction: 'each trial is checked under its recorded condition',
  skew: 'each trial is checked as of its recorded verification time',
  now: 'each trial is checked as of its recorded verification time',
} as const;

/** Re-checks a parsed E12 results file with the options that apply. */
export async function verifyE12File(artifact: Artifact, o: VerifyCliOptions, ctx: CliContext): Promise<Outcome> {
  const result = await verifyE12Results(artifact.value, {
    ...(o.keys ? { directory: loadKeyDirectory(resolvePath(ctx, o.keys)) } : {}),
    revocation: o.revocation,
    requireCosigners: o.requireCosigner,
  });
  const trust =
    result.trustedKeys === 'file'
      ? 'the keys recorded in the file (pass --keys DIR.json to use your own directory)'
      : 'your key directory';
  const foreign = result.problems.length === 1 && result.problems[0]?.code === 'UNKNOWN_KEY';
  const checked = foreign
    ? `${result.trials} trials, none checked: your key directory holds none of the keys that signed them`
    : `${result.verified}/${result.trials} trials verified (SHA-256 and UTF-8 length recomputed, ${result.signatures} signatures and ${result.edges} dag edges re-verified${result.streams > 0 ? `, ${result.streams} recorded streams re-checked chunk by chunk (${result.chunks} chunks)` : ''}), trusting ${trust}`;
  const { ok, problems, ...details } = result;
  // Interrupted with nothing else wrong: what it holds checks out, but it is only part of a run.
  const partial = result.interrupted !== undefined && problems.every((p) => p.code === 'INCOMPLETE');
  const verdict = ok
    ? 'valid'
    : partial
      ? `partial (interrupted after ${result.trials} of ${result.interrupted?.trials_planned} trials)`
      : 'invalid';
  return {
    ok,
    summary: `${verdict}: E12 results, ${result.trials > 0 ? checked : 'nothing could be checked'}.`,
    problems: problems.map(pickProblem),
    details,
  };
}
