/**
 * @module
 * `witness anchor …`: anchoring a log's checkpoints with witnesses (docs/witness.md).
 * `serve` runs a C2SP tlog-witness (add-checkpoint), `vkey` prints the note verifier
 * key of a Witness key file under a name (a log's origin, or a witness's name). The
 * library is `src/attest/tlog`; this file parses and prints.
 */
import { Command } from 'commander';
import { readKeyFile, readPublicJwk } from '../../attest/keys.js';
import { cosigner } from '../../attest/tlog/cosignature.js';
import { NOTE_TYPE, noteVerifierKey } from '../../attest/tlog/note.js';
import { DEFAULT_WITNESS_MAX_REQUEST_BYTES, serveWitness, Witness } from '../../attest/tlog/witness.js';
import { readNamedFile } from '../../attest/files.js';
import { isPostgresUrl, resolveDatabaseUrl } from '../../attest/postgres.js';
import { WitnessError } from '../../core/errors.js';
import { type CliContext, resolvePath } from '../context.js';
import { untilStopped } from '../signals.js';
import { type ServerCliOptions, serverAccess, withServerOptions } from '../server-options.js';

export function anchorCommand(ctx: CliContext): Command {
  return new Command('anchor')
    .summary('witness servers that cosign log checkpoints, so a log cannot be cut short or rolled back unseen')
    .description(
      "Anchor a log's signed checkpoints with witnesses (C2SP tlog-witness): a witness cosigns a checkpoint only when it extends the last one it cosigned, so a log cut short, rolled back or forked after a cosigned checkpoint is caught.",
    )
    .addHelpText(
      'after',
      '\nExample:\n  $ witness anchor vkey --key log.key.json --name example.com/log\n  $ witness anchor serve --key witness.key.json --name witness.example/w1 --state witness.db --log "$(cat log.vkey)" --port 4500',
    )
    .addCommand(_serve(ctx))
    .addCommand(_vkey(ctx));
}

interface ServeOptions extends ServerCliOptions {
  key: string;
  name: string;
  state: string;
  log: string[];
  logs?: string;
  json?: boolean;
}

function _serve(ctx: CliContext): Command {
  const collect = (v: string, all: string[]) => [...all, v];
  return withServerOptions(new Command('serve'), String(DEFAULT_WITNESS_MAX_REQUEST_BYTES))
    .description(
      'Run a witness: POST /add-checkpoint takes "old SIZE", consistency proof lines, a blank line and a checkpoint signed by a configured log; it answers a timestamped cosignature/v1 line (200), or 400 malformed, 403 bad signature, 404 unknown log, 409 stale old size (body: the size held), 422 bad proof. The newest cosigned checkpoint per log is kept in the --state SQLite file, so a restart never lets a log roll back. Runs until interrupted.',
    )
    .requiredOption('--key <file>', "the witness's own key file (witness keys new); it signs the cosignatures")
    .requiredOption('--name <name>', 'the witness name in its cosignatures, e.g. witness.example/w1 (no spaces or "+")')
    .requiredOption(
      '--state <file|url>',
      'SQLite file holding the newest cosigned checkpoint of each log (created if missing; never delete it: a witness that forgets can be rolled back), or a postgres:// URL shared by several witness hosts (postgres alone: $WITNESS_DATABASE_URL)',
    )
    .option(
      '--log <vkey>',
      "a log's note verifier key ORIGIN+HASH+KEY, as `witness anchor vkey` prints it (repeatable)",
      collect,
      [],
    )
    .option('--logs <file>', 'a file of log verifier keys, one a line (# starts a comment)')
    .option('--json', 'print {"url", "vkey", "logs"} as one JSON line when ready')
    .addHelpText(
      'after',
      '\nExample:\n  $ witness anchor serve --key witness.key.json --name witness.example/w1 --state witness.db \\\n      --log "example.com/log+3f2a0c1d+AWl0…" --port 4500\n  Witness witness.example/w1 at http://127.0.0.1:4500 (vkey witness.example/w1+…); Ctrl-C stops it.',
    )
    .action(async (o: ServeOptions) => {
      const logs = [...o.log, ...(o.logs ? _logsFile(resolvePath(ctx, o.logs)) : [])];
      const state = resolveDatabaseUrl(o.state, '--state');
      const witness = await Witness.open({
        logs,
        cosigner: cosigner(readKeyFile(resolvePath(ctx, o.key), { what: 'witness key' }), o.name),
        state: isPostgresUrl(state) ? state : resolvePath(ctx, state),
      });
      try {
        const server = await serveWitness(witness, serverAccess(o));
        const stopped = untilStopped(ctx); // listening before it says it is ready, so a signal right after the line is not missed
        ctx.io.stdout(
          o.json
            ? `${JSON.stringify({ url: server.url, vkey: witness.cosignerKey, logs: witness.origins })}\n`
            : `Witness ${o.name} at ${server.url} for ${witness.origins.join(', ')} (vkey ${witness.cosignerKey}); Ctrl-C stops it.\n`,
        );
        await stopped;
        await server.close();
      } finally {
        await witness.close();
      }
    });
}

function _logsFile(path: string): string[] {
  return readNamedFile(path, 'log keys file')
    .toString('utf8')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'));
}

function _vkey(ctx: CliContext): Command {
  return new Command('vkey')
    .description(
      "Print the note verifier key (NAME+HASH+BASE64) of a key file's public key under NAME: for a log, NAME is its origin (give it to witnesses and verifiers); with --cosigner, the witness's cosignature/v1 key (give it to the logs' verifiers). Reads only the public key.",
    )
    .requiredOption('--key <file>', 'a key file or a public JWK file')
    .requiredOption('--name <name>', "the log's origin, or the witness's name")
    .option('--cosigner', "the key of a witness's cosignatures (type 0x04) instead of a log's (0x01)")
    .addHelpText(
      'after',
      '\nExample:\n  $ witness anchor vkey --key log.key.json --name example.com/log > log.vkey\n  $ witness anchor vkey --key witness.key.json --name witness.example/w1 --cosigner',
    )
    .action((o: { key: string; name: string; cosigner?: boolean }) => {
      const jwk = readPublicJwk(resolvePath(ctx, o.key));
      try {
        ctx.io.stdout(
          `${noteVerifierKey(o.name, Buffer.from(jwk.x, 'base64url'), o.cosigner ? NOTE_TYPE.cosignatureV1 : NOTE_TYPE.ed25519)}\n`,
        );
      } catch (error) {
        if (error instanceof WitnessError) throw new WitnessError('USAGE', error.message);
        throw error;
      }
    });
}
