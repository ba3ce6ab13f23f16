/**
 * @module
 * `witness mailbox export` and `import`: move a mailbox between stores (files,
 * SQLite, PostgreSQL) with every receipt still verifying.
 */
import { existsSync, rmdirSync } from 'node:fs';
import { Command } from 'commander';
import { checkOutputFile, writeFileAtomicAsync } from '../../core/atomic-write.js';
import { makeFolders } from '../../core/make-folders.js';
import { exportMailbox, importMailbox, receiptCount } from '../../mailbox/index.js';
import { type CliContext, resolvePath } from '../context.js';
import { storeOption } from './mailbox-store.js';

export function exportCommand(ctx: CliContext): Command {
  return new Command('export')
    .description(
      'Write a mailbox, from any store, as JSON lines that `witness mailbox import` turns into a mailbox of any store: agents, the call log and every message, each exactly as stored, and the read positions. Secrets are never exported (token hashes only, no key).',
    )
    .argument('<dir>', 'mailbox folder')
    .requiredOption('-o, --out <file>', 'the export file (written atomically)')
    .option(
      '--key <path>',
      "Ed25519 mailboxes: the signing key that signs the call log's checkpoint in the end line (default: the one mailbox.json names)",
    )
    .option('--json', 'print the counts as JSON')
    .addHelpText(
      'after',
      '\nExample:\n  $ witness mailbox export ./mb --out mb.export.jsonl\n  $ witness mailbox import mb.export.jsonl ./mb-pg --store postgres:///witness',
    )
    .action(async (dir: string, o: { out: string; key?: string; json?: boolean }) => {
      checkOutputFile(resolvePath(ctx, o.out)); // before the mailbox is read, not after
      let counts = '';
      const lines = async function* () {
        for await (const line of exportMailbox(
          resolvePath(ctx, dir),
          o.key !== undefined ? { keyPath: resolvePath(ctx, o.key) } : {},
        )) {
          if (line.startsWith('{"end":')) counts = line;
          yield `${line}\n`;
        }
      };
      await writeFileAtomicAsync(resolvePath(ctx, o.out), lines(), { mode: 0o600 });
      const { checkpoint: _signed, ...end } = (
        JSON.parse(counts) as { end: Record<string, number> & { checkpoint?: string } }
      ).end;
      if (o.json) return ctx.io.stdout(`${JSON.stringify({ out: resolvePath(ctx, o.out), ...end })}\n`);
      ctx.io.stdout(
        `Exported ${end.agents} agents, ${end.calls} call receipts, ${end.messages} messages and ${end.cursors} read positions to ${o.out}\n`,
      );
    });
}

export function importCommand(ctx: CliContext): Command {
  return new Command('import')
    .description(
      'Create a mailbox in DIR from an export: the same id, signing key, agents (their tokens keep working), call log and messages, in the store you choose. All or nothing; the result is verified (exit 1 when it does not verify clean, as its source would not).',
    )
    .argument('<file>', 'a file written by `witness mailbox export`')
    .argument('<dir>', 'the new mailbox folder')
    .option(
      '--store <store>',
      'jsonl, sqlite, a PostgreSQL URL (postgres://USER@HOST/DB, no password), or postgres for the URL in WITNESS_DATABASE_URL',
      'jsonl',
    )
    .option('--key <path>', "the mailbox's signing key file (default: where `mailbox init` put it)")
    .option('--json', 'print the result as JSON')
    .addHelpText(
      'after',
      '\nExample:\n  $ witness mailbox import mb.export.jsonl ./mb-pg --store postgres:///witness --key ~/.config/witness/keys/mailbox-….json',
    )
    .action(async (file: string, dir: string, o: { store: string; key?: string; json?: boolean }) => {
      const target = resolvePath(ctx, dir);
      const result = await _inFolder(target, () =>
        importMailbox(resolvePath(ctx, file), target, {
          ...storeOption(o.store),
          ...(o.key ? { keyPath: resolvePath(ctx, o.key) } : {}),
        }),
      );
      if (!result.report.ok) ctx.exitCode = 1;
      if (o.json)
        return ctx.io.stdout(
          `${JSON.stringify({ dir: resolvePath(ctx, dir), store: result.config.store, counts: result.counts, verify: result.report, warnings: result.warnings }, null, 2)}\n`,
        );
      for (const w of result.warnings) ctx.io.stderr(`warning: ${w}\n`);
      const { agents, calls, messages, cursors } = result.counts;
      ctx.io.stdout(
        `Imported ${agents} agents, ${calls} call receipts, ${messages} messages and ${cursors} read positions into ${dir} (${result.config.store})\n`,
      );
      for (const p of result.report.problems) ctx.io.stdout(`${p.file}:${p.line}: ${p.kind}: ${p.message}\n`);
      ctx.io.stdout(
        `verify: ${result.report.ok ? 'OK' : 'FAILED'}: ${receiptCount(result.report)}, ${result.report.messages} messages, ${result.report.problems.length} problem(s)\n`,
      );
    });
}

/**
 * Runs `work` with `dir` created first by the one bounded folder maker (Node's recursive
 * mkdir spins for ever where mkdir answers ENOENT, as in /proc); a folder made here and
 * left empty by a failed import is removed again.
 */
async function _inFolder<T>(dir: string, work: () => Promise<T>): Promise<T> {
  const created = !existsSync(dir);
  makeFolders(dir);
  try {
    return await work();
  } catch (error) {
    if (created) {
      try {
        rmdirSync(dir); // only when empty: what the import left is its own to clean
      } catch {
        // not empty, or already gone
      }
    }
    throw error;
  }
}
