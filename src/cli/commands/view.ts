/**
 * @module
 * `witness view PATH…`: look at results files in a browser — the sweep, a game round
 * by round, two cells or two files side by side — served on 127.0.0.1 with a token;
 * `witness view bundle PATH… -o DIR`: the same pages as a folder that opens from disk.
 */
import { Command } from 'commander';
import { loadKeyDirectory } from '../../attest/key-directory.js';
import { readNamedFile } from '../../attest/files.js';
import { WitnessError } from '../../core/errors.js';
import { writeAnswersBundle, writeBundle } from '../../view/bundle.js';
import { e12Answers } from '../../view/e12-model.js';
import { MailboxFeed } from '../../view/mailbox-model.js';
import { ViewModel } from '../../view/model.js';
import { evidenceAnswers, recogniseViewed } from '../../view/open.js';
import { ResultsIndex } from '../../view/results-index.js';
import { startViewServer, type ViewSource } from '../../view/server.js';
import { type CliContext, resolvePath } from '../context.js';
import { untilStopped } from '../signals.js';

interface ViewOptions {
  json?: boolean;
  port?: string;
  title?: string;
  keys?: string;
  output?: string;
}

export function viewCommand(ctx: CliContext): Command {
  return new Command('view')
    .summary('look at results files in a browser (a sweep, a game round by round, side by side)')
    .description(
      "Indexes one or more results files (JSONL from `witness sim`; a file is read once, not loaded) and serves a viewer on 127.0.0.1 at a random port, with a random token in the address it prints: the cells with outcome rates, 95% Wilson intervals and LLM metrics; each cell's runs; a game round by round (proposals, public reasoning, votes, abstentions, Byzantine seats, where the honest agents converged, how it ended); and cells that played the same games side by side (the paired difference as `witness report` computes it, the runs whose outcome changed, both games of a run). Read-only; nothing is loaded from the network. Runs until interrupted.",
    )
    .argument(
      '<paths...>',
      'results files (two files: their cells of the same label side by side), or one mailbox folder, evidence file (receipt, path, DSSE envelope, bundle) or E12 results file',
    )
    .option(
      '--keys <file>',
      'evidence and E12 files: your own key directory, the only trust root (an E12 file is checked against its own recorded keys without it)',
    )
    .option('--output <file>', 'a receipt, path or envelope: the output bytes it claims (a bundle carries its own)')
    .option('--port <n>', 'port to listen on (default: a random free port)')
    .option('--title <text>', 'title of the pages')
    .option('--json', 'print {"url"} as one JSON line when ready')
    .addHelpText(
      'after',
      "\nExamples:\n  $ witness view results/smoke.jsonl\n  Witness view of 1 file at http://127.0.0.1:40123/?t=…; Ctrl-C stops it.\n  $ witness view results/remedy.jsonl --json | jq -r .url\n  $ witness view before.jsonl after.jsonl         # the same cells, two files, side by side\n  $ witness view ./mb                             # a mailbox, live: messages, states, receipts, verify, witnesses\n  $ witness view answer.evidence.json --output answer.txt --keys trusted.json   # the delegation path as a graph\n  $ witness view e12.json                         # E12 results: tables, a chart, each trial's path\n  $ witness view bundle results/remedy.jsonl -o remedy-view   # a folder that opens from file://",
    )
    .addCommand(_bundle(ctx))
    .action(async (paths: string[], o: ViewOptions) => {
      const opened = await _source(ctx, paths, o, true);
      const port = o.port === undefined ? 0 : Number(o.port); // listen() refuses what is not a port, as one line
      try {
        const server = await startViewServer(opened.source, { port, title: o.title });
        const stopped = untilStopped(ctx); // listening before it says it is ready, so a signal right after the line is not missed
        ctx.io.stdout(
          o.json
            ? `${JSON.stringify({ url: server.url })}\n`
            : `Witness view of ${opened.what} at ${server.url}; Ctrl-C stops it.\n`,
        );
        await stopped;
        await server.close();
      } finally {
        await opened.close();
      }
    });
}

function _bundle(ctx: CliContext): Command {
  return new Command('bundle')
    .summary('write the viewer as a static folder that opens from disk')
    .description(
      'Writes DIR/index.html, app.js and data.js: the same pages as `witness view`, with every answer they need embedded, so the folder opens from file:// with no server (for sharing and CI artifacts). Up to 50,000 runs.',
    )
    .argument(
      '<paths...>',
      'results files, or one mailbox folder (a snapshot: not followed), evidence file or E12 results file',
    )
    .requiredOption('-o, --out <dir>', 'folder to write (created if missing; its three files are replaced)')
    .option('--keys <file>', 'evidence and E12 files: your own key directory')
    .option('--output <file>', 'a receipt, path or envelope: the output bytes it claims')
    .option('--title <text>', 'title of the pages')
    .option('--json', 'print {"dir", "files", "bytes"} as JSON')
    .addHelpText(
      'after',
      '\nExample:\n  $ witness view bundle results/remedy.jsonl -o remedy-view && xdg-open remedy-view/index.html',
    )
    .action(async (paths: string[], _o: unknown, command: Command) => {
      // --json and --title are the parent's options too: commander gives them to whichever is named first.
      const o = command.optsWithGlobals<ViewOptions & { out: string }>();
      const opened = await _source(ctx, paths, o, false);
      const dir = resolvePath(ctx, o.out);
      let written: { files: string[]; bytes: number };
      try {
        const s = opened.source;
        written =
          s.kind === 'results'
            ? writeBundle(s.model, dir, o.title)
            : s.kind === 'fixed'
              ? writeAnswersBundle(s.answers, dir, o.title)
              : writeAnswersBundle(
                  { 'about?': { kind: 'mailbox' }, 'mailbox?': await s.feed.snapshot(false) },
                  dir,
                  o.title,
                );
      } finally {
        await opened.close();
      }
      ctx.io.stdout(
        o.json
          ? `${JSON.stringify({ dir, ...written })}\n`
          : `Viewer bundle: ${dir}/index.html (${written.bytes} bytes in ${written.files.length} files).\n`,
      );
    });
}

/** What the paths are: results files, or one mailbox folder, evidence file or E12 file. */
async function _source(
  ctx: CliContext,
  paths: readonly string[],
  o: ViewOptions,
  live: boolean,
): Promise<{ source: ViewSource; what: string; close: () => Promise<void> }> {
  const viewed = paths.map((p) => recogniseViewed(resolvePath(ctx, p)));
  const first = viewed[0]!;
  const name = paths[0]!;
  if (viewed.every((v) => v.kind === 'results')) {
    if (o.keys !== undefined || o.output !== undefined)
      throw new WitnessError(
        'USAGE',
        `${o.keys !== undefined ? '--keys' : '--output'} applies to evidence and E12 files, not to results files; drop it.`,
      );
    return {
      source: { kind: 'results', model: _model(ctx, paths) },
      what: `${paths.length} file${paths.length > 1 ? 's' : ''}`,
      close: async () => {},
    };
  }
  if (paths.length > 1)
    throw new WitnessError(
      'USAGE',
      `witness view shows several results files side by side, but one mailbox, evidence file or E12 file at a time; ${paths.find((_p, i) => viewed[i]!.kind !== 'results')} is not results. Give it alone.`,
    );
  if (first.kind === 'mailbox') {
    if (o.keys !== undefined || o.output !== undefined)
      throw new WitnessError(
        'USAGE',
        `${o.keys !== undefined ? '--keys' : '--output'} does not apply to a mailbox folder (its receipts are checked with the key mailbox.json names, as \`witness mailbox verify\`); drop it.`,
      );
    const feed = await MailboxFeed.open(first.dir);
    return {
      source: { kind: 'mailbox', feed },
      what: `the mailbox ${name}${live ? ', live' : ''}`,
      close: () => feed.close(),
    };
  }
  const directory = o.keys === undefined ? undefined : loadKeyDirectory(resolvePath(ctx, o.keys));
  if (first.kind === 'e12') {
    if (o.output !== undefined)
      throw new WitnessError(
        'USAGE',
        '--output does not apply to an E12 results file (it carries its own outputs); drop it.',
      );
    return {
      source: { kind: 'fixed', answers: await e12Answers(first.value, name, directory) },
      what: `the E12 results ${name}`,
      close: async () => {},
    };
  }
  if (first.kind !== 'evidence') throw new WitnessError('INTERNAL', 'unreachable');
  if (!directory)
    throw new WitnessError(
      'USAGE',
      `witness view needs --keys <file> for ${name} (your own key directory: keys inside the evidence are never trusted).`,
    );
  if (first.carriesOutput && o.output !== undefined)
    throw new WitnessError(
      'USAGE',
      `--output does not apply to ${name}: an evidence bundle carries its own output; drop it.`,
    );
  if (!first.carriesOutput && o.output === undefined)
    throw new WitnessError(
      'USAGE',
      `witness view needs --output <file> for ${name}: the bytes its receipt released, which the verifier checks.`,
    );
  const output = o.output === undefined ? undefined : readNamedFile(resolvePath(ctx, o.output), 'output file');
  return {
    source: {
      kind: 'fixed',
      answers: await evidenceAnswers(first, name, { directory, ...(output ? { output } : {}) }),
    },
    what: `the delegation path ${name}`,
    close: async () => {},
  };
}

/** Every file indexed, with what was skipped or dropped said on stderr as `witness report` says it. */
function _model(ctx: CliContext, paths: readonly string[]): ViewModel {
  const indexes = paths.map((p) => ResultsIndex.build(resolvePath(ctx, p)));
  indexes.forEach((ix, i) => {
    const file = paths[i]!;
    for (const p of ix.scan.problems) ctx.io.stderr(`${file}:${p.line}: skipped: ${p.message}\n`);
    if (ix.scan.problemCount > ix.scan.problems.length)
      ctx.io.stderr(`${file}: ${ix.scan.problemCount - ix.scan.problems.length} more damaged lines skipped.\n`);
    if (ix.scan.tornTail)
      ctx.io.stderr(`${file}: the last line is incomplete (a write was cut off) and was skipped.\n`);
    if (ix.droppedNote) ctx.io.stderr(`${ix.droppedNote}\n`);
  });
  return new ViewModel(indexes, paths);
}
