/**
 * @module
 * `witness verify FILE|DIR`: check any Witness artifact — a receipt, a delegation path,
 * a DSSE envelope, an evidence bundle (evidence with its output), an E12 results file,
 * an A2A delegation record, a mailbox folder, signed simulation results, a recorded stream — trusting only what the user gives (`--keys`). The artifact is read
 * once and recognised by the type it declares (cli/verify/kinds.ts, one table); every
 * option given must apply to it. One output shape (`--json`) and one exit status for
 * every kind: 0 valid, 1 invalid (the problems are printed), 2 usage error.
 */
import { Command, InvalidArgumentError, Option } from 'commander';
import { CONSTRUCTIONS } from '../../attest/index.js';
import { MAX_SKEW_MS } from '../../attest/verify.js';
import type { Problem } from '../../core/problem.js';
import { type CliContext, resolvePath } from '../context.js';
import { checkOptions, recognise } from '../verify/read.js';
import type { OptionName, Outcome, VerifyCliOptions } from '../verify/types.js';
import { parseTime } from './keys.js';
import { addWitnessVerifyOptions } from '../verify/witness-options.js';

export type { VerifyCliOptions } from '../verify/types.js';

const MAX_SKEW_S = MAX_SKEW_MS / 1000;

export function verifyCommand(ctx: CliContext): Command {
  const command = new Command('verify')
    .summary(
      'verify any Witness artifact: a receipt, path, envelope, bundle, E12 results file, A2A delegation record, mailbox folder, signed simulation results or recorded stream',
    )
    .description(
      'Check a Witness artifact, recognised by the type it declares: a release receipt or delegation path (against --output, trusting only --keys), a DSSE envelope, an evidence bundle that carries its output, an E12 results file, an A2A delegation record (witness a2a send --out), a mailbox folder, signed simulation results (witness sim --sign), or a recorded stream with chunk receipts. Prints the problems, each with its reason code, when invalid. An option that does not apply to the artifact given is a usage error. Exit 0 valid, 1 invalid, 2 usage error.',
    )
    .argument(
      '<artifact>',
      'an evidence file (receipt, path, DSSE envelope, bundle, E12 results, delegation record) or a mailbox folder',
    )
    .option(
      '--output <file>',
      'the output bytes a receipt, path or envelope claims (a bundle or an E12 file carries its own)',
    )
    .option(
      '--keys <file>',
      'your own key directory (`witness keys add`); keys inside the evidence are never used (required for receipts, paths, envelopes and bundles)',
    )
    .option(
      '--nonces <db>',
      'nonce store shared by verifiers — a SQLite file (one machine), a postgres:// URL (any number of machines) or `postgres` for $WITNESS_DATABASE_URL: a second verification of the same receipt is REPLAY',
    )
    .addOption(
      new Option('--construction <c>', 'require this ancestry construction (pin dag to refuse downgrades)').choices(
        CONSTRUCTIONS.filter((c) => c !== 'none'),
      ),
    )
    .option('--skew <seconds>', `clock skew tolerated on validity windows (0 to ${MAX_SKEW_S})`, _skewSeconds, 0)
    .option('--now <time>', 'verify as of this time instead of now, e.g. 2026-01-31T12:00:00Z', (text: string) =>
      parseTime(text, '--now'),
    )
    .addOption(
      new Option(
        '--revocation <policy>',
        'from-revoked-at: refuse receipts issued after revocation; all: refuse every receipt of a revoked key',
      )
        .choices(['from-revoked-at', 'all'])
        .default('from-revoked-at'),
    )
    .option(
      '--require-cosigner <deployer...>',
      'deployers that must co-sign every delegation (only dag edges carry co-signatures)',
      [],
    )
    .option(
      '--checkpoint <file>',
      'signed results and mailbox folders: their checkpoint file (default: RESULTS.checkpoint.json beside them), or a checkpoint you kept (`witness sim checkpoint`): the file must be that log or an append-only extension of it',
    )
    .option(
      '--cassette <file>',
      'signed results only: check this cassette against the digest their checkpoint signed (--record, or a replay)',
    )
    .option(
      '--allow-partial',
      'signed sharded results: valid when some shards of the sweep are missing (the verdict says partial), without it a missing shard is SHARD_MISSING; a recorded stream: accepted as "partial" when cut before its final receipt and nothing else is wrong, without it STREAM_CUT',
    )
    .option('--json', 'print {ok, type, legacy, summary, problems, details} as JSON');
  return addWitnessVerifyOptions(command)
    .addHelpText(
      'after',
      '\nExample:\n  $ witness verify answer.evidence.json --output answer.txt --keys trusted.json --nonces nonces.db --construction dag\n  $ witness verify receipt.json --output report.txt --keys trusted.json --json\n  $ witness verify receipt.json --output report.txt --keys trusted.json --nonces postgres://verifier@db.internal/witness\n  $ witness verify answer.bundle.json --keys trusted.json   # evidence with its output\n  $ witness verify results.json                  # an E12 results file (witness a2a bench)\n  $ witness verify delegation.json --keys trusted.json   # a delegation record (witness a2a send --out)\n  $ witness verify ./mb --keys trusted.json      # a mailbox folder, its key pinned by your directory\n  $ witness verify sweep.jsonl --keys trusted.json   # signed simulation results (witness sim --sign)\n  $ witness verify stream.jsonl --keys trusted.json  # a recorded stream with chunk receipts\n  $ witness verify ./mb --witness "witness.example/w1+6a1f03c2+BH3k…" --witness-url http://w1.example:4501 --witnessed-within 10m',
    )
    .action(async (file: string, o: VerifyCliOptions, command: Command) => {
      const found = recognise(resolvePath(ctx, file), file);
      if ('outcome' in found) return _print(ctx, file, undefined, false, found.outcome, o.json);
      const given = (name: OptionName) => command.getOptionValueSource(name) === 'cli';
      checkOptions(found.kind, given);
      _print(ctx, file, found.type, found.legacy, await found.kind.verify(found.artifact, o, ctx), o.json);
    });
}

/** --skew: seconds from 0 to the maximum the nonce store covers. */
function _skewSeconds(text: string): number {
  const n = Number(text);
  if (text.trim() === '' || !Number.isFinite(n) || n < 0)
    throw new InvalidArgumentError(`"${text}" is not a number of seconds ≥ 0.`);
  if (n > MAX_SKEW_S)
    throw new InvalidArgumentError(
      `${text} seconds is more than the maximum of ${MAX_SKEW_S} seconds (nonces are kept that long past a receipt's expiry).`,
    );
  return n;
}

/** The one output: a verdict line and one line per problem, or the same as JSON. */
function _print(
  ctx: CliContext,
  file: string,
  type: string | undefined,
  legacy: boolean,
  outcome: Outcome,
  json: boolean | undefined,
): void {
  if (!outcome.ok) ctx.exitCode = 1;
  if (json) {
    const { ok, summary, problems, details, warnings = [] } = outcome;
    ctx.io.stdout(
      `${JSON.stringify({ ok, file, type: type ?? null, legacy, summary, problems, warnings, details }, null, 2)}\n`,
    );
    return;
  }
  for (const w of outcome.warnings ?? []) ctx.io.stderr(`warning: ${w}\n`);
  const legacyNote = legacy ? ` (legacy: recognised by its shape, written before it declared its type ${type})` : '';
  ctx.io.stdout(
    `${outcome.summary}${legacyNote}\n${outcome.problems.length > 0 ? `${formatProblems(outcome.problems)}\n` : ''}`,
  );
}

/** One line per problem: code, where, message. */
export function formatProblems(problems: readonly Problem[]): string {
  return problems.map((p) => `  ${p.code.padEnd(22)} ${p.at === undefined ? '' : `[${p.at}] `}${p.message}`).join('\n');
}
