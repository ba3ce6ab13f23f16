/**
 * @module
 * `witness verify` for attest's evidence: a receipt, a delegation path, a DSSE
 * envelope (with `--output`), a bundle that carries its output, and (through
 * `withVerifyOptions`) a recorded stream's final receipt. Every option of
 * `verifyEvidence` applies; the nonce store, when given, is pruned by the real clock
 * after the check (never by `--now`: an audit "as of" another time must not forget the
 * nonces of receipts some verifier could still accept today).
 */
import {
  isPostgresUrl,
  loadKeyDirectory,
  type NonceStore,
  openNonceStore,
  resolveDatabaseUrl,
  type VerifyOptions,
  type VerifyResult,
} from '../../attest/index.js';
import { readNamedFile } from '../../attest/files.js';
import { WitnessError } from '../../core/errors.js';
import { pickProblem } from '../../core/problem.js';
import { type CliContext, resolvePath } from '../context.js';
import type { OptionName, Outcome, VerifyCliOptions } from './types.js';

/** Every option of attest's verifier: receipts, paths, envelopes and bundles use them all. */
export const RECEIPT_OPTIONS: readonly OptionName[] = [
  'output',
  'keys',
  'nonces',
  'construction',
  'skew',
  'now',
  'revocation',
  'requireCosigner',
];

/** Checks a receipt-based artifact with the options given; `output` is the bytes unless the artifact carries them. */
export async function verifyWithReceiptOptions(
  ctx: CliContext,
  o: VerifyCliOptions,
  check: (options: VerifyOptions, output: Buffer) => Promise<VerifyResult>,
): Promise<Outcome> {
  return receiptOutcome(await withVerifyOptions(ctx, o, check));
}

/** Runs `check` with attest's verifier options built from the command line (the nonce store opened, then pruned and closed). */
export async function withVerifyOptions<T>(
  ctx: CliContext,
  o: VerifyCliOptions,
  check: (options: VerifyOptions, output: Buffer) => Promise<T>,
): Promise<T> {
  const output = o.output === undefined ? Buffer.alloc(0) : readNamedFile(resolvePath(ctx, o.output), 'output file');
  const directory = loadKeyDirectory(resolvePath(ctx, o.keys as string));
  const nonceStore = o.nonces ? await openNoncesOption(ctx, o.nonces) : undefined;
  const options: VerifyOptions = {
    directory,
    now: o.now ?? Date.now(),
    skewMs: o.skew * 1000,
    revocation: o.revocation,
    requireCosigners: o.requireCosigner,
    ...(nonceStore ? { nonceStore } : {}),
    ...(o.construction ? { construction: o.construction } : {}),
  };
  try {
    const result = await check(options, output);
    await nonceStore?.prune(Date.now());
    return result;
  } finally {
    await nonceStore?.close();
  }
}

/** The outcome of attest's verifier: its reasons as problems, placed by the verifier (`receipt N` on a path). */
export function receiptOutcome(result: VerifyResult): Outcome {
  const leaf = result.path?.at(-1);
  const ancestry = leaf && leaf.depth > 0 ? `, at depth ${leaf.depth} of a ${leaf.construction} path` : '';
  const summary =
    result.ok && leaf
      ? `valid: ${leaf.output_len} bytes (sha256 ${leaf.output_sha256}) released by ${leaf.deployer}/${leaf.instance} with key ${leaf.key_id}${ancestry}.`
      : 'invalid:';
  return {
    ok: result.ok,
    summary,
    problems: result.reasons.map(pickProblem),
    details: { path: result.path ?? null, signatures_checked: result.signaturesChecked },
  };
}

/**
 * `--nonces`: a nonce store the user named but that cannot be opened is a usage error
 * (exit 2): a `postgres://` URL (or `postgres` for WITNESS_DATABASE_URL), else a SQLite path.
 */
export async function openNoncesOption(ctx: CliContext, given: string): Promise<NonceStore> {
  const url = resolveDatabaseUrl(given, '--nonces');
  try {
    return await openNonceStore(isPostgresUrl(url) ? url : resolvePath(ctx, url));
  } catch (error) {
    if (error instanceof WitnessError && error.code === 'IO')
      throw new WitnessError('USAGE', `--nonces: ${error.message}`, { cause: error });
    throw error;
  }
}
