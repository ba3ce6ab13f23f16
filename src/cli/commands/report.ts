/**
 * @module
 * `witness report FILE`: recompute the outcome table from any results file.
 */
import { writeFileSync } from 'node:fs';
import { Command } from 'commander';
import { renderHtmlReport } from '../../report/html.js';
import { renderOutcomeTable } from '../../report/table.js';
import { readResults } from '../../sim/experiment/run.js';
import { summarizeCells } from '../../sim/stats.js';
import { type CliContext, resolvePath } from '../context.js';
import { VERSION } from '../version.js';

export function reportCommand(ctx: CliContext): Command {
  return new Command('report')
    .summary('tabulate a results file')
    .description('Reads a results file (JSONL from `witness sim`) and prints per cell the outcome rates with 95% Wilson intervals and rounds. Damaged lines are reported with their line numbers and the rest are still used.')
    .argument('<file>', 'results file')
    .option('--json', 'print the per-cell summary as JSON')
    .option('--html <file>', 'also write a self-contained HTML report with charts')
    .option('--title <text>', 'title of the HTML report')
    .addHelpText(
      'after',
      '\nExamples:\n  $ witness report results/smoke.jsonl\n  $ witness report results/remedy.jsonl --html remedy.html\n  $ witness report results/smoke.jsonl --json | jq ".cells[0].outcomes.valid"',
    )
    .action((file: string, options: { json?: boolean; html?: string; title?: string }) => {
      const path = resolvePath(ctx, file);
      const { records, problems, tornTail } = readResults(path);
      for (const p of problems) ctx.io.stderr(`${file}:${p.line}: skipped: ${p.message}\n`);
      if (tornTail) ctx.io.stderr(`${file}: the last line is incomplete (a write was cut off) and was skipped.\n`);
      const cells = summarizeCells(records);
      if (options.json) ctx.io.stdout(`${JSON.stringify({ file: path, runs: records.length, problems, tornTail, cells }, null, 2)}\n`);
      else ctx.io.stdout(`${renderOutcomeTable(cells)}\n`);
      if (options.html) {
        const out = resolvePath(ctx, options.html);
        writeFileSync(out, renderHtmlReport(records, { title: options.title, source: file, version: VERSION }));
        ctx.io.stderr(`HTML report: ${out}\n`);
      }
    });
}
