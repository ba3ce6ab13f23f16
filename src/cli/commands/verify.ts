/**
 * @module
 * `witness verify RECEIPT --output FILE --keys DIR.json`: check evidence (a receipt, an
 * ancestry path, or a DSSE envelope) against the output bytes, trusting only the given
 * key directory. Exit 0 valid, 1 invalid (the reasons are printed), 2 usage error.
 */
import { existsSync, readFileSync } from 'node:fs';
import { Command, Option } from 'commander';
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
import { parseJsonText } from '../../attest/receipt.js';
import { WitnessError } from '../../core/errors.js';
import { type CliContext, resolvePath } from '../context.js';
import { verifyE12IfResults } from './a2a.js';
import { parseTime } from './keys.js';

interface VerifyCliOptions {
  output?: string;
  keys?: string;
  nonces?: string;
  construction?: Construction;
  skew: string;
  now?: string;
  revocation: RevocationPolicy;
  requireCosigner: string[];
  json?: boolean;
}

export function verifyCommand(ctx: CliContext): Command {
  return new Command('verify')
    .summary('verify a release receipt or ancestry path against the output bytes')
    .description('Check evidence (a receipt, {"path": [...]}, or a DSSE envelope) against the output bytes, trusting only the keys in --keys. Prints the reason codes when invalid. Exit 0 valid, 1 invalid, 2 usage error.')
    .argument('<evidence>', 'receipt, path or DSSE envelope file')
    .option('--output <file>', 'the output bytes the receipt claims (required, except for E12 results files)')
    .option('--keys <file>', 'your own key directory (`witness keys add`); keys inside the evidence are never used (required, except for E12 results files)')
    .option('--nonces <db>', 'SQLite nonce store shared by verifiers: a second verification of the same receipt is REPLAY')
    .addOption(new Option('--construction <c>', 'require this ancestry construction (pin dag to refuse downgrades)').choices(CONSTRUCTIONS.filter((c) => c !== 'none')))
    .option('--skew <seconds>', 'clock skew tolerated on validity windows', '0')
    .option('--now <time>', 'verify as of this time instead of now, e.g. 2026-01-31T12:00:00Z')
    .addOption(new Option('--revocation <policy>', 'from-revoked-at: refuse receipts issued after revocation; all: refuse every receipt of a revoked key').choices(['from-revoked-at', 'all']).default('from-revoked-at'))
    .option('--require-cosigner <deployer...>', 'deployers that must co-sign every dag edge', [])
    .option('--json', 'print {ok, reasons, path} as JSON')
    .addHelpText('after', '\nExample:\n  $ witness verify answer.evidence.json --output answer.txt --keys trusted.json --nonces nonces.db --construction dag\n  $ witness verify receipt.json --output report.txt --keys trusted.json --json\n  $ witness verify results.json                  # an E12 results file (witness a2a bench)')
    .action(async (file: string, o: VerifyCliOptions) => {
      const evidenceFile = resolvePath(ctx, file);
      // E12 results files (`witness a2a bench`) are checked by src/a2a (docs/a2a.md).
      if (await verifyE12IfResults(ctx, evidenceFile, o)) return;
      if (!o.output || !o.keys) throw new WitnessError('USAGE', "witness verify needs --output <file> and --keys <file> (only an E12 results file goes without them).");
      const outputFile = resolvePath(ctx, o.output);
      for (const [what, path] of [['evidence', evidenceFile], ['output', outputFile]] as const) {
        if (!existsSync(path)) throw new WitnessError('NOT_FOUND', `The ${what} file ${path} does not exist.`);
      }
      const skew = Number(o.skew);
      if (!Number.isFinite(skew) || skew < 0) throw new WitnessError('USAGE', `--skew must be a number of seconds ≥ 0; got ${JSON.stringify(o.skew)}.`);
      const now = o.now ? parseTime(o.now, '--now') : Date.now();
      const nonceStore = o.nonces ? _openNonces(resolvePath(ctx, o.nonces)) : undefined;
      const options: VerifyOptions = {
        directory: loadKeyDirectory(resolvePath(ctx, o.keys)),
        now,
        skewMs: skew * 1000,
        revocation: o.revocation,
        requireCosigners: o.requireCosigner,
        ...(nonceStore ? { nonceStore } : {}),
        ...(o.construction ? { construction: o.construction } : {}),
      };
      try {
        const result = await _verify(readFileSync(evidenceFile), readFileSync(outputFile), options);
        // The real clock, never --now: an audit "as of" a future time must not forget
        // nonces of receipts that are still valid today.
        await nonceStore?.prune(Date.now());
        _print(ctx, result, o.json);
        if (!result.ok) ctx.exitCode = 1;
      } finally {
        nonceStore?.close();
      }
    });
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

/** DSSE envelopes are recognised by their payloadType; everything else is receipt evidence. */
async function _verify(text: Buffer, output: Buffer, options: VerifyOptions): Promise<VerifyResult> {
  const parsed = parseJsonText(text, 'the evidence');
  if (parsed.ok && parsed.value !== null && typeof parsed.value === 'object' && 'payloadType' in parsed.value) return verifyDsse(parsed.value, output, options);
  return verifyEvidence(parsed.ok ? parsed.value : text, output, options);
}

function _print(ctx: CliContext, result: VerifyResult, json: boolean | undefined): void {
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
  const lines = result.reasons.map((r) => `  ${r.code.padEnd(22)} ${r.index === undefined ? '' : `[receipt ${r.index}] `}${r.message}`);
  ctx.io.stdout(`invalid:\n${lines.join('\n')}\n`);
}
