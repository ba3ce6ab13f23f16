/**
 * @module
 * `witness verify EVIDENCE --output FILE --keys DIR.json`: check evidence (a receipt, an
 * ancestry path, a DSSE envelope, or an E12 results file) against the output bytes,
 * trusting only the given key directory. The artifact is read once, strictly, and routed
 * by what it is (its parsed `kind` or `payloadType`); every option given must apply to
 * it. Exit 0 valid, 1 invalid (the reasons are printed), 2 usage error.
 */
import { Command, InvalidArgumentError, Option } from 'commander';
import {
  CONSTRUCTIONS,
  type Construction,
  loadKeyDirectory,
  type NonceStore,
  type RevocationPolicy,
  SqliteNonceStore,
  type VerifyOptions,
  type VerifyResult,
  verifyDsse,
  verifyEvidence,
} from '../../attest/index.js';
import { type E12VerifyResult, isE12Results } from '../../a2a/e12-verify.js';
import { readNamedFile } from '../../attest/files.js';
import { parseJsonText } from '../../attest/receipt.js';
import type { Reason } from '../../attest/reasons.js';
import { MAX_SKEW_MS } from '../../attest/verify.js';
import { WitnessError } from '../../core/errors.js';
import { type CliContext, resolvePath } from '../context.js';
import { parseTime } from './keys.js';
import { verifyE12File } from './verify-e12.js';

export interface VerifyCliOptions {
  output?: string;
  keys?: string;
  nonces?: string;
  construction?: Construction;
  skew: number;
  now?: number;
  revocation: RevocationPolicy;
  requireCosigner: string[];
  json?: boolean;
}

const MAX_SKEW_S = MAX_SKEW_MS / 1000;

export function verifyCommand(ctx: CliContext): Command {
  return new Command('verify')
    .summary('verify a release receipt or ancestry path against the output bytes')
    .description('Check evidence (a receipt, {"path": [...]}, a DSSE envelope, or an E12 results file) against the output bytes, trusting only the keys in --keys. Prints the reason codes when invalid. An option that does not apply to the evidence given is a usage error. Exit 0 valid, 1 invalid, 2 usage error.')
    .argument('<evidence>', 'receipt, path, DSSE envelope or E12 results file')
    .option('--output <file>', 'the output bytes the receipt claims (required, except for E12 results files, which carry their outputs)')
    .option('--keys <file>', 'your own key directory (`witness keys add`); keys inside the evidence are never used (required, except for E12 results files)')
    .option('--nonces <db>', 'SQLite nonce store shared by verifiers: a second verification of the same receipt is REPLAY')
    .addOption(new Option('--construction <c>', 'require this ancestry construction (pin dag to refuse downgrades)').choices(CONSTRUCTIONS.filter((c) => c !== 'none')))
    .option('--skew <seconds>', `clock skew tolerated on validity windows (0 to ${MAX_SKEW_S})`, _skewSeconds, 0)
    .option('--now <time>', 'verify as of this time instead of now, e.g. 2026-01-31T12:00:00Z', (text: string) => parseTime(text, '--now'))
    .addOption(new Option('--revocation <policy>', 'from-revoked-at: refuse receipts issued after revocation; all: refuse every receipt of a revoked key').choices(['from-revoked-at', 'all']).default('from-revoked-at'))
    .option('--require-cosigner <deployer...>', 'deployers that must co-sign every delegation (only dag edges carry co-signatures)', [])
    .option('--json', 'print {ok, reasons, path} as JSON')
    .addHelpText('after', '\nExample:\n  $ witness verify answer.evidence.json --output answer.txt --keys trusted.json --nonces nonces.db --construction dag\n  $ witness verify receipt.json --output report.txt --keys trusted.json --json\n  $ witness verify results.json                  # an E12 results file (witness a2a bench)')
    .action(async (file: string, o: VerifyCliOptions, command: Command) => {
      const evidenceFile = resolvePath(ctx, file);
      const parsed = parseJsonText(readNamedFile(evidenceFile, 'evidence file'), file);
      // Evidence that cannot be read as JSON proves nothing, whatever the options.
      if (!parsed.ok) return _print(ctx, { ok: false, reasons: parsed.reasons, signaturesChecked: 0 }, o.json);
      const given = (name: string) => command.getOptionValueSource(name) === 'cli';
      if (isE12Results(parsed.value)) return _printE12(ctx, await verifyE12File(ctx, parsed.value, o, given), o.json);
      await _verifyEvidence(ctx, parsed.value, o);
    });
}

/** A receipt, a path or a DSSE envelope: every option applies. */
async function _verifyEvidence(ctx: CliContext, evidence: unknown, o: VerifyCliOptions): Promise<void> {
  const missing = [!o.output && '--output <file>', !o.keys && '--keys <file>'].filter(Boolean);
  if (missing.length > 0) throw new WitnessError('USAGE', `witness verify needs ${missing.join(' and ')} for a receipt, path or DSSE envelope (only an E12 results file goes without them).`);
  const output = readNamedFile(resolvePath(ctx, o.output as string), 'output file');
  const directory = loadKeyDirectory(resolvePath(ctx, o.keys as string));
  const nonceStore = o.nonces ? _openNonces(resolvePath(ctx, o.nonces)) : undefined;
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
    const isDsse = evidence !== null && typeof evidence === 'object' && 'payloadType' in evidence;
    const result = isDsse ? await verifyDsse(evidence, output, options) : await verifyEvidence(evidence, output, options);
    // The real clock, never --now: an audit "as of" another time must not forget the
    // nonces of receipts some verifier could still accept today.
    await nonceStore?.prune(Date.now());
    _print(ctx, result, o.json);
  } finally {
    nonceStore?.close();
  }
}

/** --skew: seconds from 0 to the maximum the nonce store covers. */
function _skewSeconds(text: string): number {
  const n = Number(text);
  if (text.trim() === '' || !Number.isFinite(n) || n < 0) throw new InvalidArgumentError(`"${text}" is not a number of seconds ≥ 0.`);
  if (n > MAX_SKEW_S) throw new InvalidArgumentError(`${text} seconds is more than the maximum of ${MAX_SKEW_S} seconds (nonces are kept that long past a receipt's expiry).`);
  return n;
}

/** A nonce store the user named but that cannot be opened is a usage error (exit 2). */
function _openNonces(path: string): NonceStore {
  try {
    return new SqliteNonceStore(path);
  } catch (error) {
    if (error instanceof WitnessError && error.code === 'IO') throw new WitnessError('USAGE', `--nonces: ${error.message}`, { cause: error });
    throw error;
  }
}

function _print(ctx: CliContext, result: VerifyResult, json: boolean | undefined): void {
  if (!result.ok) ctx.exitCode = 1;
  if (json) {
    ctx.io.stdout(`${JSON.stringify({ ok: result.ok, reasons: result.reasons, path: result.path ?? null }, null, 2)}\n`);
    return;
  }
  const leaf = result.path?.at(-1);
  if (result.ok && leaf) {
    const ancestry = leaf.depth > 0 ? `, at depth ${leaf.depth} of a ${leaf.construction} path` : '';
    ctx.io.stdout(`valid: ${leaf.output_len} bytes (sha256 ${leaf.output_sha256}) released by ${leaf.deployer}/${leaf.instance} with key ${leaf.key_id}${ancestry}.\n`);
    return;
  }
  ctx.io.stdout(`invalid:\n${formatReasons(result.reasons)}\n`);
}

function _printE12(ctx: CliContext, result: E12VerifyResult, json: boolean | undefined): void {
  if (!result.ok) ctx.exitCode = 1;
  if (json) return void ctx.io.stdout(`${JSON.stringify(result, null, 2)}\n`);
  const trust = result.trustedKeys === 'file' ? 'the keys recorded in the file (pass --keys DIR.json to use your own directory)' : 'your key directory';
  const checked = `${result.verified}/${result.trials} trials verified (SHA-256 and UTF-8 length recomputed, ${result.signatures} signatures and ${result.edges} dag edges re-verified), trusting ${trust}`;
  ctx.io.stdout(`${result.ok ? 'valid' : 'invalid'}: E12 results, ${result.trials > 0 ? checked : 'nothing could be checked'}.\n`);
  if (result.problems.length > 0) ctx.io.stdout(`${formatReasons(result.problems)}\n`);
}

/** One line per reason: code, position on the path, message. */
function formatReasons(reasons: ReadonlyArray<Pick<Reason, 'message' | 'index'> & { code: string }>): string {
  return reasons.map((r) => `  ${r.code.padEnd(22)} ${r.index === undefined ? '' : `[receipt ${r.index}] `}${r.message}`).join('\n');
}
