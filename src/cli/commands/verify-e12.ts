/**
 * @module
 * `witness verify results.json` for E12 results files (`witness a2a bench`, docs/a2a.md
 * §3): recompute every output's SHA-256 and length and re-verify every signature and
 * edge. Of the options of `witness verify`, --keys, --revocation, --require-cosigner
 * and --json apply; the others are refused, never ignored.
 */
import { type E12VerifyResult, verifyE12Results } from '../../a2a/e12-verify.js';
import { loadKeyDirectory } from '../../attest/index.js';
import { WitnessError } from '../../core/errors.js';
import { type CliContext, resolvePath } from '../context.js';
import type { VerifyCliOptions } from './verify.js';

/** Options of `witness verify` an E12 file has no use for, and why. */
const NOT_FOR_E12: ReadonlyArray<[option: string, name: string, why: string]> = [
  ['--output', 'output', 'it carries its own outputs'],
  ['--nonces', 'nonces', 'its nonces were consumed during the run; a re-check consumes none'],
  ['--construction', 'construction', 'each trial is checked under its recorded condition'],
  ['--skew', 'skew', 'each trial is checked as of its recorded verification time'],
  ['--now', 'now', 'each trial is checked as of its recorded verification time'],
];

/** Re-checks a parsed E12 results file with the options that apply; refuses the others (USAGE). */
export async function verifyE12File(ctx: CliContext, value: unknown, o: VerifyCliOptions, given: (name: string) => boolean): Promise<E12VerifyResult> {
  const refused = NOT_FOR_E12.filter(([, name]) => given(name));
  if (refused.length > 0) {
    const names = refused.map(([option]) => option);
    const list = names.length === 1 ? names[0] : `${names.slice(0, -1).join(', ')} and ${names.at(-1)}`;
    const why = [...new Set(refused.map(([, , reason]) => reason))].join('; ');
    throw new WitnessError('USAGE', `${list} ${names.length === 1 ? 'does' : 'do'} not apply to an E12 results file (${why}); drop ${names.length === 1 ? 'it' : 'them'}. Only --keys, --revocation, --require-cosigner and --json do.`);
  }
  return verifyE12Results(value, {
    ...(o.keys ? { directory: loadKeyDirectory(resolvePath(ctx, o.keys)) } : {}),
    revocation: o.revocation,
    requireCosigners: o.requireCosigner,
  });
}
