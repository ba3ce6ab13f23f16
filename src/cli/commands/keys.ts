/**
 * @module
 * `witness keys …`: create a deployer signing key, and maintain a verifier's key
 * directory (add, rotate, revoke, list). The library is `src/attest`; this file
 * parses and prints.
 */
import { existsSync } from 'node:fs';
import { Command } from 'commander';
import {
  addKey,
  type DirectoryEntry,
  newSigningKey,
  publicJwk,
  readDirectoryFile,
  readPublicJwk,
  revokeKey,
  rotateKey,
  writeDirectoryFile,
  writeKeyFile,
} from '../../attest/index.js';
import { writeFileAtomic } from '../../core/atomic-write.js';
import { WitnessError } from '../../core/errors.js';
import { boundedNumber } from '../args.js';
import { type CliContext, resolvePath } from '../context.js';

const DAY = 86_400_000;
/** The longest window `--days` gives a key: 100 years (a receipt's own lifetime has the same bound). */
const MAX_DAYS = 36_500;
const days = boundedNumber(MAX_DAYS, 'days');

export function keysCommand(ctx: CliContext): Command {
  return new Command('keys')
    .summary('deployer signing keys and the verifier key directory')
    .description(
      "Create a deployer's Ed25519 signing key, and keep the verifier's key directory: the only keys `witness verify` trusts.",
    )
    .addHelpText(
      'after',
      '\nExample:\n  $ witness keys new --deployer acme --out acme.key.json\n  $ witness keys public acme.key.json -o acme.pub.json     # send this one to your partners\n  $ witness keys add acme.key.json --dir trusted.json --days 90\n  $ witness keys list --dir trusted.json',
    )
    .addCommand(_new(ctx))
    .addCommand(_public(ctx))
    .addCommand(_add(ctx))
    .addCommand(_rotate(ctx))
    .addCommand(_revoke(ctx))
    .addCommand(_list(ctx));
}

function _new(ctx: CliContext): Command {
  return new Command('new')
    .description(
      'Create a signing key file (mode 0600: keep it with the runtime, away from agents) and print its key id (--json: its public key). `witness keys public` writes the public key file you hand to verifiers.',
    )
    .requiredOption('--deployer <id>', 'organisation id the key signs for (printable ASCII, no spaces)')
    .requiredOption('--out <file>', 'where to write the key file (never overwritten)')
    .option('--json', 'print the public key (JWK) as JSON')
    .addHelpText(
      'after',
      '\nExample:\n  $ witness keys new --deployer acme --out acme.key.json\n  $ witness keys public acme.key.json -o acme.pub.json',
    )
    .action((o: { deployer: string; out: string; json?: boolean }) => {
      const key = newSigningKey(o.deployer);
      const path = resolvePath(ctx, o.out);
      writeKeyFile(path, key);
      if (o.json) return ctx.io.stdout(`${JSON.stringify(publicJwk(key))}\n`);
      ctx.io.stdout(
        `Created key ${key.kid} for ${key.deployer} in ${path} (mode 0600).\nTrust it on a verifier with: witness keys add ${o.out} --dir trusted.json\n`,
      );
    });
}

/** The public key file: the key file's own format without `d`, so `keys add` and every verifier read it as they read a key file. */
function _public(ctx: CliContext): Command {
  return new Command('public')
    .description(
      'Write the public half of a key file (the key file without its secret `d`), to send to the verifiers who will `witness keys add` it. Without -o it prints it.',
    )
    .argument('<key-file>', 'a key file from `keys new`')
    .option('-o, --out <file>', 'write the public key file here (never overwritten)')
    .option('--json', 'with -o: print {"kid", "deployer", "out"} as JSON')
    .addHelpText(
      'after',
      '\nExample:\n  $ witness keys public acme.key.json -o acme.pub.json\n  $ witness keys add acme.pub.json --dir trusted.json --days 90     # on the verifier',
    )
    .action((keyFile: string, o: { out?: string; json?: boolean }) => {
      const jwk = readPublicJwk(resolvePath(ctx, keyFile));
      const text = `${JSON.stringify({ v: 1, ...jwk }, null, 2)}\n`;
      if (!o.out) return ctx.io.stdout(text);
      const path = resolvePath(ctx, o.out);
      const exists = `${path} already exists; choose another path (an existing file is never overwritten).`;
      if (existsSync(path)) throw new WitnessError('USAGE', exists);
      try {
        writeFileAtomic(path, text, { mode: 0o644, exclusive: true });
      } catch (cause) {
        if ((cause as NodeJS.ErrnoException).code === 'EEXIST') throw new WitnessError('USAGE', exists);
        throw new WitnessError('IO', `Cannot write the public key file ${path}: ${(cause as Error).message}.`, {
          cause,
        });
      }
      if (o.json) return ctx.io.stdout(`${JSON.stringify({ kid: jwk.kid, deployer: jwk.deployer, out: path })}\n`);
      ctx.io.stdout(
        `Wrote the public key ${jwk.kid} (${jwk.deployer}) to ${path}.\nOn a verifier: witness keys add ${o.out} --dir trusted.json\n`,
      );
    });
}

function _add(ctx: CliContext): Command {
  return new Command('add')
    .description(
      'Trust a public key for a validity window (the private part of a key file is never copied). Creates the directory file if needed.',
    )
    .argument('<key-file>', 'a key file from `keys new`, or a public JWK file')
    .requiredOption('--dir <file>', 'key directory file')
    .option('--not-before <time>', 'start of the window, e.g. 2026-01-31T00:00:00Z (default: now)')
    .option('--not-after <time>', 'end of the window, exclusive (default: --days after the start)')
    .option('--days <n>', `window length in days, instead of --not-after (at most ${MAX_DAYS})`, days, 365)
    .option('--json', 'print the new directory entry as JSON')
    .addHelpText(
      'after',
      '\nExample:\n  $ witness keys add acme.key.json --dir trusted.json --not-before 2026-01-01T00:00:00Z --days 90',
    )
    .action(
      (
        keyFile: string,
        o: { dir: string; notBefore?: string; notAfter?: string; days: number; json?: boolean },
        command: Command,
      ) => {
        if (o.notAfter && command.getOptionValueSource('days') === 'cli')
          throw new WitnessError('USAGE', '--days and --not-after both set the end of the window; give one of them.');
        const jwk = readPublicJwk(resolvePath(ctx, keyFile));
        const notBefore = o.notBefore ? parseTime(o.notBefore, '--not-before') : Date.now();
        const notAfter = o.notAfter ? parseTime(o.notAfter, '--not-after') : notBefore + o.days * DAY;
        const path = resolvePath(ctx, o.dir);
        const file = addKey(readDirectoryFile(path, { createIfMissing: true }), jwk, { notBefore, notAfter });
        writeDirectoryFile(path, file);
        _printEntry(ctx, file.keys.at(-1) as DirectoryEntry, o.json, 'Trusted');
      },
    );
}

function _rotate(ctx: CliContext): Command {
  return new Command('rotate')
    .description(
      "Replace a deployer's key: the old key's window ends and the new key's begins at --at. Receipts the old key issued before then stay valid.",
    )
    .argument('<old-kid>', 'key id being replaced')
    .argument('<new-key-file>', 'the new key file (same deployer)')
    .requiredOption('--dir <file>', 'key directory file')
    .option('--at <time>', 'rotation instant (default: now)')
    .option('--days <n>', `validity of the new key in days (at most ${MAX_DAYS})`, days, 365)
    .option('--json', 'print the new entry as JSON')
    .addHelpText(
      'after',
      '\nExample:\n  $ witness keys rotate ed25519:0123456789abcdef acme-2.key.json --dir trusted.json',
    )
    .action((oldKid: string, keyFile: string, o: { dir: string; at?: string; days: number; json?: boolean }) => {
      const at = o.at ? parseTime(o.at, '--at') : Date.now();
      const path = resolvePath(ctx, o.dir);
      const file = rotateKey(
        readDirectoryFile(path),
        oldKid,
        readPublicJwk(resolvePath(ctx, keyFile)),
        at,
        at + o.days * DAY,
      );
      writeDirectoryFile(path, file);
      _printEntry(ctx, file.keys.at(-1) as DirectoryEntry, o.json, `Rotated ${oldKid} to`);
    });
}

function _revoke(ctx: CliContext): Command {
  return new Command('revoke')
    .description(
      'Revoke a key: receipts issued at or after --at are refused (verifiers can refuse all its receipts with --revocation all).',
    )
    .argument('<kid>', 'key id to revoke')
    .requiredOption('--dir <file>', 'key directory file')
    .option('--at <time>', 'revocation instant (default: now)')
    .option('--json', 'print the updated entry as JSON')
    .addHelpText(
      'after',
      '\nExample:\n  $ witness keys revoke ed25519:0123456789abcdef --dir trusted.json --at 2026-03-01T00:00:00Z',
    )
    .action((kid: string, o: { dir: string; at?: string; json?: boolean }) => {
      const path = resolvePath(ctx, o.dir);
      const file = revokeKey(readDirectoryFile(path), kid, o.at ? parseTime(o.at, '--at') : Date.now());
      writeDirectoryFile(path, file);
      _printEntry(ctx, file.keys.find((e) => e.kid === kid) as DirectoryEntry, o.json, 'Revoked');
    });
}

function _list(ctx: CliContext): Command {
  return new Command('list')
    .description('List the trusted keys with their windows and their status now.')
    .requiredOption('--dir <file>', 'key directory file')
    .option('--json', 'print the directory entries as JSON')
    .addHelpText('after', '\nExample:\n  $ witness keys list --dir trusted.json --json')
    .action((o: { dir: string; json?: boolean }) => {
      const file = readDirectoryFile(resolvePath(ctx, o.dir));
      const now = Date.now();
      const rows = file.keys.map((e) => ({ ...e, status: _status(e, now) }));
      if (o.json) return ctx.io.stdout(`${JSON.stringify(rows, null, 2)}\n`);
      const table = [
        ['kid', 'deployer', 'not_before', 'not_after', 'status'],
        ...rows.map((r) => [r.kid, r.deployer, r.not_before, r.not_after, r.status]),
      ];
      const widths = (table[0] as string[]).map((_, i) => Math.max(...table.map((r) => (r[i] as string).length)));
      ctx.io.stdout(
        `${table
          .map((r) =>
            r
              .map((v, i) => v.padEnd(widths[i] as number))
              .join('  ')
              .trimEnd(),
          )
          .join('\n')}\n`,
      );
    });
}

/** A command-line time: ISO 8601 with an explicit zone (Z or ±hh:mm). */
export function parseTime(text: string, option: string): number {
  const ms = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/.test(text)
    ? Date.parse(text)
    : Number.NaN;
  if (!Number.isFinite(ms))
    throw new WitnessError(
      'USAGE',
      `${option} must be a time with a zone, like 2026-01-31T12:00:00Z; got ${JSON.stringify(text)}.`,
    );
  return ms;
}

function _status(e: DirectoryEntry, now: number): string {
  if (e.revoked_at !== undefined && now >= Date.parse(e.revoked_at)) return `revoked ${e.revoked_at}`;
  if (now < Date.parse(e.not_before)) return 'not yet valid';
  if (now >= Date.parse(e.not_after)) return 'window ended';
  return e.revoked_at !== undefined ? `active (revocation at ${e.revoked_at})` : 'active';
}

function _printEntry(ctx: CliContext, entry: DirectoryEntry, json: boolean | undefined, verb: string): void {
  if (json) {
    ctx.io.stdout(`${JSON.stringify(entry)}\n`);
    return;
  }
  const revoked = entry.revoked_at ? `, revoked from ${entry.revoked_at}` : '';
  ctx.io.stdout(
    `${verb} ${entry.kid} (${entry.deployer}) for receipts issued from ${entry.not_before} to ${entry.not_after}${revoked}.\n`,
  );
}
