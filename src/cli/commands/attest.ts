/**
 * @module
 * `witness attest …`: release an output with a signed receipt (the release-boundary
 * signer, run by the deployer's runtime), export it as DSSE/in-toto, and print the
 * adversary matrix. The library is `src/attest`; this file parses and prints.
 */
import { basename } from 'node:path';
import { Command, Option } from 'commander';
import {
  CONSTRUCTIONS,
  type Construction,
  createCosigner,
  createReleaseSigner,
  delegationGrant,
  exportDsse,
  readKeyFile,
  receiptDigest,
} from '../../attest/index.js';
import { formatMatrix, runMatrix } from '../../attest/testing/index.js';
import { bundleOf, evidenceOf, readEvidenceFile } from '../../attest/evidence.js';
import { readNamedFile } from '../../attest/files.js';
import { MAX_TTL_MS } from '../../attest/signer.js';
import { WitnessError } from '../../core/errors.js';
import { boundedNumber } from '../args.js';
import { type CliContext, resolvePath } from '../context.js';

export function attestCommand(ctx: CliContext): Command {
  return new Command('attest')
    .summary('signed release receipts and delegation ancestry')
    .description(
      'Sign output bytes at the release boundary (the runtime holds the key, never the agent), export receipts as DSSE, and run the adversary matrix.',
    )
    .addHelpText(
      'after',
      '\nExample:\n  $ witness attest sign --key acme.key.json --output report.txt > receipt.json\n  $ witness verify receipt.json --output report.txt --keys trusted.json\n  $ witness attest matrix',
    )
    .addCommand(_sign(ctx))
    .addCommand(_export(ctx))
    .addCommand(_matrix(ctx));
}

interface SignOptions {
  key: string;
  output: string;
  parent?: string;
  construction?: Construction;
  cosignKey?: string;
  instance?: string;
  ttl: number;
  bundle?: boolean;
}

function _sign(ctx: CliContext): Command {
  return new Command('sign')
    .description(
      'Hash and sign the exact bytes of --output; print the evidence (a receipt, or {"type": "witness/path", "path": [...]} under a parent) on stdout, or with --bundle the evidence together with the output bytes.',
    )
    .requiredOption('--key <file>', 'the releasing deployer key file (from `witness keys new`)')
    .requiredOption('--output <file>', 'the output bytes being released')
    .option('--parent <file>', 'evidence of the delegation this output answers (its receipt or path)')
    .addOption(
      new Option('--construction <c>', 'ancestry construction (default: chain under a parent, none otherwise)').choices(
        [...CONSTRUCTIONS],
      ),
    )
    .option(
      '--cosign-key <file>',
      "for dag: the parent deployer's key, co-signing the edge here (in production, its signing service)",
    )
    .option('--instance <id>', 'agent instance id recorded in the receipt', 'cli')
    .option(
      '--bundle',
      'print {"type": "witness/bundle", evidence, output_base64}: the evidence with the output, verifiable with only a key directory',
    )
    .option(
      '--ttl <seconds>',
      `how long the receipt stays valid (at most ${MAX_TTL_MS / 1000}: 100 years)`,
      boundedNumber(MAX_TTL_MS / 1000, 'seconds'),
      3600,
    )
    .addHelpText(
      'after',
      '\nExample:\n  $ witness attest sign --key parent.key.json --output task.txt --construction dag > task.receipt.json\n  $ witness attest sign --key child.key.json --output answer.txt --parent task.receipt.json \\\n      --construction dag --cosign-key parent.key.json > answer.evidence.json\n  $ witness attest sign --key acme.key.json --output report.txt --bundle > report.bundle.json',
    )
    .action(async (o: SignOptions) => {
      const key = readKeyFile(resolvePath(ctx, o.key));
      const bytes = readNamedFile(resolvePath(ctx, o.output), 'output file');
      const ancestors = o.parent ? readEvidenceFile(resolvePath(ctx, o.parent)) : [];
      const parent = ancestors.at(-1);
      const construction = o.construction ?? (parent ? 'chain' : 'none');
      const ttlMs = o.ttl * 1000;
      if (parent && construction === 'none')
        throw new WitnessError('USAGE', '--construction none cannot have a --parent; use chain, merkle or dag.');
      if (construction === 'dag' && parent && !o.cosignKey)
        throw new WitnessError(
          'USAGE',
          "A dag edge needs the parent deployer's co-signature: add --cosign-key PARENT_KEY.json.",
        );
      if (o.cosignKey && !(construction === 'dag' && parent))
        throw new WitnessError(
          'USAGE',
          '--cosign-key applies only to a dag edge (--construction dag with --parent); nothing here would be co-signed. Drop it, or sign under a parent with --construction dag.',
        );
      const cosigner =
        o.cosignKey && parent
          ? createCosigner(
              readKeyFile(resolvePath(ctx, o.cosignKey)),
              delegationGrant({
                parentDigest: receiptDigest(parent),
                childDeployer: key.deployer,
                expiresAt: Date.now() + ttlMs,
              }),
            )
          : undefined;
      if (cosigner && parent && cosigner.deployer !== parent.deployer) {
        throw new WitnessError(
          'USAGE',
          `--cosign-key belongs to ${cosigner.deployer}, but the parent receipt was released by ${parent.deployer}; co-sign with the parent's key.`,
        );
      }
      const signer = createReleaseSigner({
        key,
        instance: o.instance ?? 'cli',
        ttlMs,
        ...(cosigner ? { cosign: (edge) => cosigner.cosign(edge) } : {}),
      });
      const receipt = await signer.releaseOutput(bytes, { ancestors, construction });
      const path = [...ancestors, receipt];
      ctx.io.stdout(`${JSON.stringify(o.bundle ? bundleOf(path, bytes) : evidenceOf(path), null, 2)}\n`);
    });
}

function _export(ctx: CliContext): Command {
  return new Command('export')
    .description(
      'Wrap evidence in a DSSE envelope carrying an in-toto Statement (subject = the output SHA-256), signed with the releasing key.',
    )
    .argument('<evidence>', 'receipt or {"path": [...]} file')
    .addOption(new Option('--format <format>', 'export format').choices(['dsse']).default('dsse'))
    .requiredOption('--key <file>', "the releasing deployer's key file")
    .option('--name <name>', 'subject name in the statement (default: the evidence file name)')
    .addHelpText(
      'after',
      '\nExample:\n  $ witness attest export receipt.json --format dsse --key acme.key.json --name report.txt > report.dsse.json',
    )
    .action((file: string, o: { key: string; name?: string }) => {
      const path = readEvidenceFile(resolvePath(ctx, file));
      const envelope = exportDsse(path, readKeyFile(resolvePath(ctx, o.key)), { name: o.name ?? basename(file) });
      ctx.io.stdout(`${JSON.stringify(envelope, null, 2)}\n`);
    });
}

function _matrix(ctx: CliContext): Command {
  return new Command('matrix')
    .description(
      'Run every attack of attest.md §7 against chain, merkle and dag with fresh keys; print construction × attack → accepted / rejected + reason. Exits 1 if any cell differs from what is expected.',
    )
    .option('--json', 'print every cell as JSON')
    .addHelpText(
      'after',
      '\nExample:\n  $ witness attest matrix\n  $ witness attest matrix --json | jq \'.[] | select(.verdict == "accepted")\'',
    )
    .action(async (o: { json?: boolean }) => {
      const cells = await runMatrix();
      const unexpected = cells.filter((c) => !c.asExpected);
      if (o.json) ctx.io.stdout(`${JSON.stringify(cells, null, 2)}\n`);
      else {
        ctx.io.stdout(`${formatMatrix(cells)}\n`);
        ctx.io.stdout(
          `\n${cells.length} cells, ${unexpected.length} unexpected. "accepted" under chain/merkle for the child-key-only forgery, and everywhere for a compromise of both keys, are the documented limits.\n`,
        );
      }
      if (unexpected.length > 0) ctx.exitCode = 1;
    });
}
