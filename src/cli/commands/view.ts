/**
 * @module
 * `witness view PATH…`: look at results files in a browser — the sweep, a game round
 * by round, two cells or two files side by side — served on 127.0.0.1 with a token;
 * `witness view bundle PATH… -o DIR`: the same pages as a folder that opens from disk.
 */
import { Command } from 'commander';
import { writeBundle } from '../../view/bundle.js';
import { ViewModel } from '../../view/model.js';
import { ResultsIndex } from '../../view/results-index.js';
import { startViewServer } from '../../view/server.js';
import { type CliContext, resolvePath } from '../context.js';
import { untilStopped } from '../signals.js';

interface ViewOptions {
  json?: boolean;
  port?: string;
  title?: string;
}

export function viewCommand(ctx: CliContext): Command {
  return new Command('view')
    .summary('look at results files in a browser (a sweep, a game round by round, side by side)')
    .description(
      'Indexes one or more results files (JSONL from `witness sim`; a file is read once, not loaded) and serves a viewer on 127.0.0.1 at a random port, with a random token in the address it prints: the cells with outcome rates, 95% Wilson intervals and LLM metrics; each cell\'s runs; a game round by round (proposals, public reasoning, votes, abstentions, Byzantine seats, where the honest agents converged, how it ended); and cells that played the same games side by side (the paired difference as `witness report` computes it, the runs whose outcome changed, both games of a run). Read-only; nothing is loaded from the network. Runs until interrupted.',
    )
    .argument('<paths...>', 'results files (two files: their cells of the same label side by side)')
    .option('--port <n>', 'port to listen on (default: a random free port)')
    .option('--title <text>', 'title of the pages')
    .option('--json', 'print {"url"} as one JSON line when ready')
    .addHelpText('after', '\nExamples:\n  $ witness view results/smoke.jsonl\n  Witness view of 1 file at http://127.0.0.1:40123/?t=…; Ctrl-C stops it.\n  $ witness view results/remedy.jsonl --json | jq -r .url\n  $ witness view before.jsonl after.jsonl         # the same cells, two files, side by side\n  $ witness view bundle results/remedy.jsonl -o remedy-view   # a folder that opens from file://')
    .addCommand(_bundle(ctx))
    .action(async (paths: string[], o: ViewOptions) => {
      const model = _model(ctx, paths);
      const port = o.port === undefined ? 0 : Number(o.port); // listen() refuses what is not a port, as one line
      const server = await startViewServer(model, { port, title: o.title });
      const stopped = untilStopped(ctx); // listening before it says it is ready, so a signal right after the line is not missed
      ctx.io.stdout(o.json ? `${JSON.stringify({ url: server.url })}\n` : `Witness view of ${paths.length} file${paths.length > 1 ? 's' : ''} at ${server.url}; Ctrl-C stops it.\n`);
      await stopped;
      await server.close();
    });
}

function _bundle(ctx: CliContext): Command {
  return new Command('bundle')
    .summary('write the viewer as a static folder that opens from disk')
    .description('Writes DIR/index.html, app.js and data.js: the same pages as `witness view`, with every answer they need embedded, so the folder opens from file:// with no server (for sharing and CI artifacts). Up to 50,000 runs.')
    .argument('<paths...>', 'results files')
    .requiredOption('-o, --out <dir>', 'folder to write (created if missing; its three files are replaced)')
    .option('--title <text>', 'title of the pages')
    .option('--json', 'print {"dir", "files", "bytes"} as JSON')
    .addHelpText('after', '\nExample:\n  $ witness view bundle results/remedy.jsonl -o remedy-view && xdg-open remedy-view/index.html')
    .action((paths: string[], _o: unknown, command: Command) => {
      // --json and --title are the parent's options too: commander gives them to whichever is named first.
      const o = command.optsWithGlobals<{ out: string; title?: string; json?: boolean }>();
      const model = _model(ctx, paths);
      const dir = resolvePath(ctx, o.out);
      const written = writeBundle(model, dir, o.title);
      ctx.io.stdout(o.json ? `${JSON.stringify({ dir, ...written })}\n` : `Viewer bundle: ${dir}/index.html (${written.bytes} bytes in ${written.files.length} files).\n`);
    });
}

/** Every file indexed, with what was skipped or dropped said on stderr as `witness report` says it. */
function _model(ctx: CliContext, paths: readonly string[]): ViewModel {
  const indexes = paths.map((p) => ResultsIndex.build(resolvePath(ctx, p)));
  indexes.forEach((ix, i) => {
    const file = paths[i]!;
    for (const p of ix.scan.problems) ctx.io.stderr(`${file}:${p.line}: skipped: ${p.message}\n`);
    if (ix.scan.problemCount > ix.scan.problems.length) ctx.io.stderr(`${file}: ${ix.scan.problemCount - ix.scan.problems.length} more damaged lines skipped.\n`);
    if (ix.scan.tornTail) ctx.io.stderr(`${file}: the last line is incomplete (a write was cut off) and was skipped.\n`);
    if (ix.droppedNote) ctx.io.stderr(`${ix.droppedNote}\n`);
  });
  return new ViewModel(indexes, paths);
}
