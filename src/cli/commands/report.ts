/**
 * @module
 * `witness report FILE`: recompute the outcome table from any results file.
 */
import { Command } from 'commander';
import { renderOutcomeTable } from '../../report/table.js';
import { readResults } from '../../sim/experiment/run.js';
import { summarizeCells } from '../../sim/stats.js';
import { type CliContext, resolvePath } from '../context.js';

export function reportCommand(ctx: CliContext): Command {
  return new Command('report')
    .summary('tabulate a results file')
    .description('Reads a results file (JSONL from `witness sim`) and prints per cell the outcome rates with 95% Wilson intervals and rounds. Damaged lines are reported with their line numbers and the rest are still used.')
    .argument('<file>', 'results file')
    .option('--json', 'print the per-cell summary as JSON')
    .addHelpText('after', '\nExamples:\n  $ witness report results/smoke.jsonl\n  $ witness report results/smoke.jsonl --json | jq ".cells[0].outcomes.valid"')
    .action((file: string, options: { json?: boolean }) => {
      const path = resolvePath(ctx, file);
      const { records, problems, tornTail } = readResults(path);
      for (const p of problems) ctx.io.stderr(`${file}:${p.line}: skipped: ${p.message}\n`);
      if (tornTail) ctx.io.stderr(`${file}: the last line is incomplete (a write was cut off) and was skipped.\n`);
      const cells = summarizeCells(records);
      if (options.json) ctx.io.stdout(`${JSON.stringify({ file: path, runs: records.length, problems, tornTail, cells }, null, 2)}\n`);
      else ctx.io.stdout(`${renderOutcomeTable(cells)}\n`);
    });
}
