/**
 * @module
 * `witness verify DIR` for a mailbox folder: `witness mailbox verify`'s checks (chain,
 * every receipt, inboxes and cursors against the log), reported in the one outcome
 * shape. With `--keys`, the call log is checked with the public key your own key
 * directory holds for the mailbox's key id — the trust root is yours, not the
 * mailbox's files; without it, with the key the mailbox names (as `mailbox verify`).
 * With `--checkpoint`, the call log must extend that signed checkpoint (TRUNCATED /
 * INCONSISTENT otherwise), its signature checked with the same key. With `--witness`,
 * a checkpoint cosigned by each witness named is required (NOT_WITNESSED without one)
 * and checked the same way.
 */
import { readFileSync } from 'node:fs';
import { loadKeyDirectory } from '../../attest/index.js';
import { keyProblem } from '../../attest/key-status.js';
import { WitnessError } from '../../core/errors.js';
import { pickProblem } from '../../core/problem.js';
import { readConfig, receiptCount, type VerifyReport, verifyMailbox } from '../../mailbox/index.js';
import { type CliContext, resolvePath } from '../context.js';
import type { Artifact, Outcome, VerifyCliOptions } from './types.js';
import { witnessRequirements } from './witness-options.js';

export async function verifyMailboxFolder(artifact: Artifact, o: VerifyCliOptions, ctx: CliContext): Promise<Outcome> {
  const config = readConfig(artifact.path);
  let pinned: Parameters<typeof verifyMailbox>[1] = {};
  if (o.keys) {
    if (config.signing.alg !== 'ed25519')
      throw new WitnessError(
        'USAGE',
        `${artifact.name} signs its call log with an HMAC key (${config.signing.kid}), which only its secret can check; --keys holds public keys. Drop --keys (the key file mailbox.json names is used), or run: witness mailbox verify ${artifact.name} --key KEY`,
      );
    const trusted = loadKeyDirectory(resolvePath(ctx, o.keys)).get(config.signing.kid);
    if (!trusted) {
      const message = `The mailbox signs with key ${config.signing.kid}, which is not in your key directory ${o.keys}; a key named by the mailbox's own files is not trusted when you give one. Add it with: witness keys add KEY.json --dir ${o.keys}`;
      return {
        ok: false,
        summary: `invalid: mailbox ${artifact.name}, its key is not in your key directory.`,
        problems: [{ code: 'UNKNOWN_KEY', message }],
        details: { dir: artifact.path, store: config.store },
      };
    }
    pinned = {
      verifier: { verifier: trusted, source: `key directory ${o.keys}` },
      checkpointPublicKey: String(trusted.key.export({ format: 'jwk' }).x),
      // Your directory's window and revocation hold for every receipt of the log, as for any receipt.
      keyValidity: (issuedAt) => {
        const problem = keyProblem(trusted, issuedAt, Date.now(), 'from-revoked-at');
        return problem && { code: problem.code as 'KEY_NOT_VALID_AT_ISSUE' | 'REVOKED_KEY', message: problem.message };
      },
    };
  }
  if (o.checkpoint !== undefined) pinned.checkpoint = readCheckpointText(resolvePath(ctx, o.checkpoint));
  const witnesses = witnessRequirements(o);
  if (witnesses.length > 0) pinned.witnesses = witnesses;
  const report = await verifyMailbox(artifact.path, pinned);
  const counts = `${receiptCount(report)}, ${report.messages} messages, key ${report.key.kid} (${report.key.source})`;
  const extension = report.ok ? extendsText(report, o.checkpoint) : '';
  return {
    ok: report.ok,
    summary: `${report.ok ? 'valid' : 'invalid'}: mailbox ${artifact.name}, ${counts}${extension}${report.ok ? '' : `, ${report.problems.length} problem(s)`}.`,
    problems: report.problems.map(pickProblem),
    details: {
      dir: report.dir,
      store: report.store,
      key: report.key,
      calls: report.calls,
      callLines: report.callLines,
      messages: report.messages,
      anchored: report.anchored,
    },
    warnings: report.warnings,
  };
}

/** What a passing log was held to, said beside the verdict (a pass that checked a checkpoint says so); empty when none. */
export function extendsText(report: Pick<VerifyReport, 'anchored'>, checkpoint: string | undefined): string {
  const held = report.anchored.map((a) =>
    a.by === 'checkpoint'
      ? `the checkpoint ${checkpoint} (${a.size} entries)`
      : `the checkpoint ${a.by} cosigned (${a.size} entries)`,
  );
  return held.length > 0 ? `; the call log extends ${held.join(' and ')}` : '';
}

/** A kept checkpoint file's text: one signed note of a few hundred bytes, or several appended as the log grew; more than 1 MiB (thousands) is not one. */
const MAX_KEPT_CHECKPOINT_BYTES = 1024 * 1024;

export function readCheckpointText(path: string): string {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new WitnessError(
      'NOT_FOUND',
      `Cannot read the checkpoint ${path} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}); give the file \`witness mailbox checkpoint\` printed.`,
    );
  }
  if (text.length > MAX_KEPT_CHECKPOINT_BYTES)
    throw new WitnessError(
      'INVALID_INPUT',
      `${path} is not a file of checkpoints (over 1 MiB); give the file \`witness mailbox checkpoint\` printed (or several such, appended).`,
    );
  return text;
}
