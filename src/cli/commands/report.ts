/**
 * @module
 * `witness report FILE [--by FIELD,…]`: recompute the outcome table from any results
 * file, per cell or pooled across cells.
 */
import { writeFileAtomic } from '../../core/atomic-write.js';
import { Command, InvalidArgumentError } from 'commander';
import { isWitnessError } from '../../core/errors.js';
import { renderHtmlReport } from '../../report/html.js';
import { GroupedLlmMetrics, renderLlmTable } from '../../report/llm-metrics.js';
import { groupLabel, POOL_FIELDS, type PoolField, parsePoolFields, poolRuns } from '../../report/pool.js';
import { shortLabels } from '../../report/labels.js';
import { pairedJson, renderPairedTable } from '../../report/paired-table.js';
import { renderGroupTable, renderOutcomeTable } from '../../report/table.js';
import type { RunRecord } from '../../sim/experiment/record.js';
import { emptyScan, recordsOf } from '../../sim/experiment/results-stream.js';
import { readResults } from '../../sim/experiment/run.js';
import { droppedMessage, UniqueRuns } from '../../sim/experiment/unique-runs.js';
import { PairedRuns } from '../../sim/paired.js';
import { summarizeCells } from '../../sim/stats.js';
import { type CliContext, resolvePath } from '../context.js';
import { VERSION } from '../version.js';

interface ReportOptions {
  json?: boolean;
  wide?: boolean;
  html?: string;
  title?: string;
  by?: PoolField[];
}

export function reportCommand(ctx: CliContext): Command {
  const fields = Object.entries(POOL_FIELDS)
    .map(([name, f]) => `  ${name.padEnd(11)}${f.about}`)
    .join('\n');
  return new Command('report')
    .summary('tabulate a results file')
    .description(
      'Reads a results file (JSONL from `witness sim`) and prints per cell, or per group of cells with --by, the outcome rates with 95% Wilson intervals, "no consensus" (none + timeout), rounds, and convergence (runs in which all honest agents held the same honest initial value in some round, and the first such round). Damaged lines are reported with their line numbers and the rest are still used.',
    )
    .argument('<file>', 'results file')
    .option('--by <fields>', 'pool runs across cells by these fields (comma-separated), e.g. model,n', _byOption)
    .option('--json', 'print the summary as JSON (snake_case keys, like the results file)')
    .option(
      '--wide',
      'print the table with full cell labels and every column (none, timeout, median rounds, first round); by default it fits 120 columns',
    )
    .option('--html <file>', 'also write a self-contained HTML report with charts (with --by, a pooled section too)')
    .option('--title <text>', 'title of the HTML report')
    .addHelpText(
      'after',
      `\nFields for --by:\n${fields}\n\nExamples:\n  $ witness report results/smoke.jsonl\n  $ witness report results/smoke.jsonl --wide                     # full labels, every column\n  $ witness report results/paper-benign.jsonl --by model          # the paper's rate per model\n  $ witness report results/paper-benign.jsonl --by model,awareness\n  $ witness report results/paper-byzantine.jsonl --by byzantine --json | jq ".groups[].no_consensus"\n  $ witness report results/remedy.jsonl --html remedy.html --by decide,byzantine\n  $ witness report results/smoke.jsonl --json | jq ".cells[0].outcomes.valid"`,
    )
    .action((file: string, options: ReportOptions) => _report(ctx, file, options));
}

function _byOption(text: string): PoolField[] {
  try {
    return parsePoolFields(text);
  } catch (error) {
    // Commander prints an option's own errors with its name and exits 2.
    if (isWitnessError(error, 'USAGE')) throw new InvalidArgumentError(error.message);
    throw error;
  }
}

function _report(ctx: CliContext, file: string, options: ReportOptions): void {
  const path = resolvePath(ctx, file);
  // Streamed unless the HTML report needs every record: memory is the cells', not the runs'.
  const unique = new UniqueRuns();
  const held = options.html ? readResults(path) : undefined;
  const kept = held && [...unique.filter(held.records)];
  const scan = emptyScan();
  const paired = new PairedRuns();
  const llm = new GroupedLlmMetrics<RunRecord>(options.by ? (r) => _groupOf(r, options.by!) : (r) => r.cell);
  const records = (): Iterable<RunRecord> =>
    _tee(kept ?? unique.filter(recordsOf(path, scan)), (r) => {
      paired.add(r);
      llm.add(r);
    });
  const tables = _tables(records(), options);
  const comparisons = paired.comparisons();
  const metrics = llm.finish();
  const problems = held?.problems ?? scan.problems;
  const tornTail = held?.tornTail ?? scan.tornTail;
  const runs = (held?.records.length ?? scan.runs) - unique.count;
  for (const p of problems) ctx.io.stderr(`${file}:${p.line}: skipped: ${p.message}\n`);
  const dropped = droppedMessage(file, unique);
  if (dropped) ctx.io.stderr(`${dropped}\n`);
  if (scan.problemCount > problems.length)
    ctx.io.stderr(`${file}: ${scan.problemCount - problems.length} more damaged lines skipped.\n`);
  if (tornTail) ctx.io.stderr(`${file}: the last line is incomplete (a write was cut off) and was skipped.\n`);
  const d = unique.dropped;
  const head = {
    file: path,
    runs,
    problems,
    torn_tail: tornTail,
    dropped: { repeated: d.repeated, other_experiment: d.otherExperiment, seq_taken: d.seqTaken },
  };
  if (tables.groups) {
    const groups = tables.groups.map((g) => ({ ...g, llm: metrics.get(groupLabel(g.group)) }));
    if (options.json)
      ctx.io.stdout(
        `${JSON.stringify({ ...head, by: options.by, groups, paired: comparisons.map(pairedJson) }, null, 2)}\n`,
      );
    else {
      const llmTable = renderLlmTable(
        'group',
        groups.map((g) => ({ label: groupLabel(g.group), metrics: g.llm! })),
      );
      ctx.io.stdout(
        `${renderGroupTable(tables.groups, options.by!, { inRange: tables.inRange, wide: options.wide })}\n${_section(llmTable)}`,
      );
    }
  } else {
    const cells = tables.cells!.map((c) => ({ ...c, llm: metrics.get(c.cell) }));
    if (options.json)
      ctx.io.stdout(`${JSON.stringify({ ...head, cells, paired: comparisons.map(pairedJson) }, null, 2)}\n`);
    else {
      const { short } = shortLabels(cells.map((c) => c.cell));
      const llmTable = renderLlmTable(
        'cell',
        cells.map((c) => ({ label: options.wide ? c.cell : (short.get(c.cell) ?? c.cell), metrics: c.llm! })),
      );
      ctx.io.stdout(
        `${renderOutcomeTable(tables.cells!, { wide: options.wide })}\n${_section(renderPairedTable(comparisons))}${_section(llmTable)}`,
      );
    }
  }
  if (options.html && kept) {
    const out = resolvePath(ctx, options.html);
    writeFileAtomic(
      out,
      renderHtmlReport(kept, { title: options.title, source: file, version: VERSION, by: options.by }),
    );
    ctx.io.stderr(`HTML report: ${out}\n`);
  }
}

/** A run's group with --by, labelled as the group table labels it. */
function _groupOf(r: RunRecord, by: readonly PoolField[]): string {
  return groupLabel(Object.fromEntries(by.map((f) => [f, POOL_FIELDS[f].of(r)])));
}

/** `records`, handing each to `see` as it passes. */
function* _tee<T>(records: Iterable<T>, see: (record: T) => void): Generator<T> {
  for (const r of records) {
    see(r);
    yield r;
  }
}

const _section = (text: string) => (text ? `\n${text}\n` : '');

/** The summaries, in one pass over the records (which may be a stream of the file). */
function _tables(
  records: Iterable<RunRecord>,
  options: ReportOptions,
): { cells?: ReturnType<typeof summarizeCells>; groups?: ReturnType<typeof poolRuns>; inRange: boolean } {
  if (!options.by) return { cells: summarizeCells(records), inRange: false };
  let inRange = false;
  const groups = poolRuns(
    (function* () {
      for (const r of records) {
        if (r.config.decide !== undefined) inRange = true;
        yield r;
      }
    })(),
    options.by,
  );
  return { groups, inRange };
}
