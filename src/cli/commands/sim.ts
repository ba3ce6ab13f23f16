/**
 * @module
 * `witness sim`: run a consensus sweep (a preset or an experiment file, with
 * overrides), print the outcome table, and leave one JSON line per run in a results
 * file. Subcommands: `merge` (join shard files) and `list` (presets, policies,
 * strategies).
 */
import { availableParallelism } from 'node:os';
import { dirname } from 'node:path';
import { Command } from 'commander';
import { readKeyFile } from '../../attest/keys.js';
import { checkOutputFile } from '../../core/atomic-write.js';
import { WitnessError } from '../../core/errors.js';
import { lockFile } from '../../core/file-lock.js';
import { pairedJson, renderPairedTable } from '../../report/paired-table.js';
import { makeFolders } from '../../core/make-folders.js';
import { renderOutcomeTable } from '../../report/table.js';
import { BYZANTINE_STRATEGIES, HONEST_POLICIES } from '../../sim/agents/policy/policies.js';
import { loadExperimentFile } from '../../sim/experiment/load.js';
import { mergeResults } from '../../sim/experiment/merge.js';
import { lazyPlan, type Shard } from '../../sim/experiment/plan.js';
import { resolveShard } from '../../sim/experiment/shard-env.js';
import { PRESETS, preset } from '../../sim/experiment/presets.js';
import { runExperiment } from '../../sim/experiment/run.js';
import { checkpointPath } from '../../sim/transcript/format.js';
import type { PastCheckpointReport } from '../../sim/transcript/past-checkpoint.js';
import { type Experiment, type ExperimentInput, parseExperiment } from '../../sim/experiment/schema.js';
import { PairedRuns } from '../../sim/paired.js';
import { CellSummaries } from '../../sim/stats.js';
import { nameList, numberList, positiveNumber, valueRange, wholeNumber } from '../args.js';
import { type CliContext, resolvePath } from '../context.js';
import { progressPrinter } from '../progress.js';
import {
  addLlmOptions,
  applyAgentOptions,
  checkAgentOptions,
  type LlmCliOptions,
  prepareAgents,
  replayExperimentOf,
} from './sim-llm.js';
import { promptsCommand } from './sim-prompts.js';
import { checkpointCommand } from './sim-checkpoint.js';

interface SimOptions extends LlmCliOptions {
  preset?: string;
  honestPolicy?: string[];
  byzantineStrategy?: string[];
  honest?: number[];
  total?: number[];
  byzantine?: number[];
  awareness?: string[];
  range?: [number, number];
  runs?: number;
  rounds?: number[];
  decide?: string[];
  after?: number[];
  budgetRounds?: number;
  budgetTokens?: number;
  budgetSeconds?: number;
  seed?: string;
  out?: string;
  concurrency: number;
  workers: number;
  shard?: string;
  json?: boolean;
  wide?: boolean;
  quiet?: boolean;
  sign?: string;
  signLines?: boolean;
}

export function simCommand(ctx: CliContext): Command {
  const command = new Command('sim')
    .summary('run the Byzantine consensus game (A2A-Sim) and tabulate outcomes')
    .description(
      "Plays the synchronous consensus game of the ETH Zurich study over a grid of settings, writes one JSON line per run, and prints each cell's valid / invalid / none / timeout rates with 95% Wilson intervals. Rerunning the same command resumes: finished runs are skipped.",
    )
    .argument('[file]', 'experiment file (YAML or JSON); default: the smoke preset')
    .option('-p, --preset <name>', `built-in experiment: ${Object.keys(PRESETS).join(', ')}`)
    .option(
      '--honest-policy <names>',
      `honest policy, or a comma list: ${Object.keys(HONEST_POLICIES).join(', ')}`,
      nameList,
    )
    .option(
      '--byzantine-strategy <names>',
      `Byzantine strategy, or a comma list: ${Object.keys(BYZANTINE_STRATEGIES).join(', ')}`,
      nameList,
    )
    .option('--honest <H>', 'honest agents: 8, 4,8,16 or 1..4', numberList(1))
    .option('--total <N>', 'total agents N instead of --honest (honest = N − byzantine)', numberList(1))
    .option('--byzantine <B>', 'Byzantine agents: 0, 1,2 or 0..4', numberList(0))
    .option('--awareness <list>', 'may_exist, none_exist, or both comma-separated', nameList)
    .option('--range <lo..hi>', 'inclusive value range (default 0..50)', valueRange)
    .option('--runs <N>', 'runs per cell', wholeNumber(1))
    .option('--rounds <R>', 'maximum rounds before timeout', numberList(1))
    .option(
      '--decide <modes>',
      'who ends the game: vote, rule:NAME or hybrid:NAME (comma list; rules: plurality, median, trimmed-mean, confidence)',
      nameList,
    )
    .option('--after <K>', 'with rule/hybrid: the round from which the rule decides (default 3)', numberList(1))
    .option('--budget-rounds <N>', 'circuit breaker: escalate after N rounds without a decision', wholeNumber(1))
    .option('--budget-tokens <N>', 'circuit breaker: escalate once agents used N model tokens', wholeNumber(1))
    .option('--budget-seconds <S>', 'circuit breaker: escalate after S seconds of wall time', positiveNumber)
    .option('--seed <S>', 'base seed (every run derives its own from it)')
    .option('-o, --out <file>', 'results file (JSONL); default results/<experiment>.jsonl')
    .option('-c, --concurrency <C>', 'games in flight at once (for model-backed agents)', wholeNumber(1), 1)
    .option(
      '-w, --workers <W>',
      `threads that play rule-based runs: this one and W - 1 worker threads; they pay off on long sweeps (this machine has ${availableParallelism()} cores)`,
      wholeNumber(1),
      1,
    )
    .option(
      '--shard <i/n>',
      'run only shard i of n (join the files with `witness sim merge`); auto: from a SLURM array; auto/N: from a Kubernetes Indexed Job of N completions (docs/scale.md)',
    )
    .option(
      '--sign <key>',
      'sign the results file with this key file (`witness keys new`): hash-linked receipts per line and a signed checkpoint beside the file (verify with `witness verify FILE --keys DIR.json`)',
    )
    .option(
      '--sign-lines',
      'with --sign: also sign every line on its own (one Ed25519 signature per run; costs more than a rule-based game)',
    )
    .option('--json', 'print the summary as JSON on stdout')
    .option(
      '--wide',
      'print the table with full cell labels and every column (none, timeout, median rounds, first round); by default it fits 120 columns',
    )
    .option('-q, --quiet', 'no progress lines')
    .addHelpText(
      'after',
      `
Examples:
  $ witness sim                                   # smoke preset, rule-based agents
  $ witness sim --preset paper-byzantine --byzantine-strategy split,stall
  $ witness sim my-grid.yaml --shard 1/4 --out part1.jsonl
  $ witness sim my-grid.yaml --shard auto/8 --out /shared/part-$JOB_COMPLETION_INDEX.jsonl   # Kubernetes Indexed Job
  $ witness sim my-grid.yaml --shard auto --out /shared/part-$SLURM_ARRAY_TASK_ID.jsonl      # SLURM array
  $ witness sim --preset paper-benign --sign acme.key.json --out signed.jsonl   # then: witness verify signed.jsonl --keys trusted.json
  $ witness sim --preset paper-benign --runs 2000 --workers 2
  $ witness sim --preset paper-byzantine --decide vote,rule:trimmed-mean,hybrid:median --after 2 --budget-rounds 20
  $ witness sim --preset paper-benign --json > summary.json
  $ witness sim --preset paper-benign --agents llm --model Qwen/Qwen3-14B --endpoint http://127.0.0.1:8000/v1 -c 16
  $ witness sim --preset paper-byzantine --honest-agents llm --byzantine-agents policy:split --model qwen3:14b \\
      --endpoint http://127.0.0.1:11434/v1 --structured-output ollama --record sweep.cassette.jsonl
  $ witness sim --agents replay --cassette sweep.cassette.jsonl --out replayed.jsonl
  $ witness setup embedded && witness sim --agents embedded --model ./qwen3-0.6b-q8_0.gguf --honest 4 --runs 2
  $ witness sim prompts --role honest --stage vote     # what the LLM agents are told (docs/prompts.md)

Exit status: 0 finished, 1 failed, 2 bad usage or experiment file, or a results file that another sweep is writing or that holds another experiment, 130 interrupted (rerun to resume).`,
    )
    .action(async (file: string | undefined, options: SimOptions) => {
      await _runSim(ctx, file, options);
    });
  addLlmOptions(command);
  command.enablePositionalOptions();
  command.addCommand(_mergeCommand(ctx));
  command.addCommand(promptsCommand(ctx));
  command.addCommand(checkpointCommand(ctx));
  command.addCommand(_listCommand(ctx));
  return command;
}

async function _runSim(ctx: CliContext, file: string | undefined, options: SimOptions): Promise<void> {
  if (file && options.preset) throw new WitnessError('USAGE', 'Give an experiment file or --preset, not both.');
  checkAgentOptions(options, file, options.preset, options.out);
  if (options.signLines && !options.sign)
    throw new WitnessError('USAGE', '--sign-lines needs --sign KEY (the key that signs the lines).');
  const sign = options.sign
    ? { key: readKeyFile(resolvePath(ctx, options.sign)), lineSignatures: options.signLines ?? false }
    : undefined;
  const experiment = options.agents === 'replay' ? replayExperimentOf(ctx, options) : _experiment(ctx, file, options);
  const shard: Shard | undefined = options.shard ? resolveShard(options.shard) : undefined;
  const out = resolvePath(ctx, options.out ?? _defaultOut(experiment, shard));
  makeFolders(dirname(out));
  checkOutputFile(out);
  // Before the agents: a recorded cassette is opened (and its torn tail cut) there, and a second sweep must not touch it.
  const lock = lockFile(out, 'results file');
  const controller = new AbortController();
  const onSignal = () => controller.abort();
  process.once('SIGINT', onSignal);
  const progress = progressPrinter(ctx.io, { quiet: options.quiet });
  // The table covers every run of this experiment in the file, including resumed ones:
  // tallied as the resume reads the file and as records are written, not read back after.
  const tally = new CellSummaries();
  const paired = new PairedRuns();
  let summary: Awaited<ReturnType<typeof runExperiment>>;
  try {
    const agents = await prepareAgents(ctx, experiment, options, controller.signal);
    try {
      summary = await runExperiment({
        experiment,
        out,
        outLocked: true,
        shard,
        concurrency: options.concurrency,
        workers: options.workers,
        signal: controller.signal,
        onProgress: (p) => progress.update(p),
        agents,
        keepRecords: false,
        onFileTally: (r) => {
          tally.add(r);
          paired.add(r);
        },
        sign,
      });
    } finally {
      await agents?.close();
    }
  } finally {
    lock.release();
    process.removeListener('SIGINT', onSignal);
    progress.finish();
  }
  const cells = tally.cells();
  const inFile = cells.reduce((n, c) => n + c.runs, 0);
  if (options.json) {
    ctx.io.stdout(`${JSON.stringify({ experiment: experiment.name, file: out, planned: summary.planned, skipped: summary.skipped, ran: summary.ran, aborted: summary.aborted, ...(summary.pastCheckpoint ? { pastCheckpoint: summary.pastCheckpoint } : {}), cells, paired: paired.comparisons().map(pairedJson) }, null, 2)}
`);
  } else {
    const section = renderPairedTable(paired.comparisons());
    ctx.io.stdout(`${renderOutcomeTable(cells, { wide: options.wide })}\n${section ? `\n${section}\n` : ''}`);
  }
  if (summary.repairedBytes)
    ctx.io.stderr(`Cut a torn last line (${summary.repairedBytes} bytes) left by an earlier crash from ${out}.\n`);
  if (summary.pastCheckpoint) ctx.io.stderr(_pastCheckpointText(summary.pastCheckpoint));
  ctx.io.stderr(`Results: ${out} (${inFile} runs; ${summary.ran} new, ${summary.skipped} already there).\n`);
  if (sign)
    ctx.io.stderr(
      `Signed with key ${sign.key.kid}${sign.lineSignatures ? ', every line' : ''}; checkpoint: ${checkpointPath(out)}. Check it with: witness verify ${options.out ?? out} --keys DIR.json\n`,
    );
  if (summary.aborted) {
    ctx.io.stderr('Interrupted: rerun the same command to resume where it stopped.\n');
    ctx.exitCode = 130;
  }
}

/** What a signed resume did with the lines no checkpoint had signed (past-checkpoint.ts). */
function _pastCheckpointText(p: PastCheckpointReport): string {
  const parts: string[] = [];
  if (p.kept > 0) parts.push(`${p.kept} re-derived from their seeds and kept (played again, the same bytes)`);
  if (p.rerun > 0) parts.push(`${p.rerun} model-backed (not reproducible): dropped and re-run`);
  if (p.pending > 0) parts.push(`${p.pending} dropped, not played again yet (the next resume plays them)`);
  const forged = p.firstForged
    ? `Forged: line ${p.firstForged.line} (run ${p.firstForged.run})${p.forged > 1 ? ` and ${p.forged - 1} more` : ''} changed after it was written — its run played again from its seed gives another line. The replay replaced it; the forged line was not signed.\n`
    : '';
  return `Resumed after the last signed checkpoint: ${p.lines} lines from line ${p.firstLine} were signed by no one; ${parts.length > 0 ? parts.join('; ') : 'none kept'}.\n${forged}`;
}

function _experiment(ctx: CliContext, file: string | undefined, o: SimOptions): Experiment {
  const base: ExperimentInput = file ? loadExperimentFile(resolvePath(ctx, file)) : preset(o.preset ?? 'smoke');
  const grid = { ...base.grid };
  applyAgentOptions(grid, o);
  if (o.honestPolicy) grid.honestPolicy = o.honestPolicy;
  if (o.byzantineStrategy) grid.byzantineStrategy = o.byzantineStrategy;
  if (o.honest && o.total) throw new WitnessError('USAGE', 'Give --honest or --total, not both.');
  if (o.honest) {
    grid.honest = o.honest;
    delete grid.total;
  }
  if (o.total) {
    grid.total = o.total;
    delete grid.honest;
  }
  if (o.byzantine) grid.byzantine = o.byzantine;
  if (o.awareness) grid.awareness = o.awareness as Experiment['grid']['awareness'];
  if (o.range) grid.range = o.range;
  if (o.rounds) grid.rounds = o.rounds;
  if (o.decide) grid.decide = o.decide;
  if (o.after) grid.after = o.after;
  const input: ExperimentInput = { ...base, grid };
  if (o.budgetRounds !== undefined || o.budgetTokens !== undefined || o.budgetSeconds !== undefined) {
    input.budget = {
      ...base.budget,
      rounds: o.budgetRounds ?? base.budget?.rounds,
      tokens: o.budgetTokens ?? base.budget?.tokens,
      seconds: o.budgetSeconds ?? base.budget?.seconds,
    };
  }
  if (o.runs !== undefined) input.runs = o.runs;
  if (o.seed !== undefined) input.seed = /^-?\d+$/.test(o.seed) ? Number(o.seed) : o.seed;
  return parseExperiment(input, file ?? `preset ${o.preset ?? 'smoke'} with your options`);
}

function _defaultOut(experiment: Experiment, shard: Shard | undefined): string {
  const name = experiment.name.replace(/[^A-Za-z0-9._-]+/g, '_');
  return shard ? `results/${name}.shard-${shard.index}-of-${shard.count}.jsonl` : `results/${name}.jsonl`;
}

function _mergeCommand(ctx: CliContext): Command {
  return new Command('merge')
    .description(
      "join results files (e.g. the shards of one sweep) into one, in run order, without duplicates; with the sweep's experiment (a file or --preset, --runs), keep only the runs of its plan (dropping another experiment's or seed's) and name those that no file holds, exiting 1 until none is missing",
    )
    .argument('<files...>', 'results files to join')
    .requiredOption('-o, --out <file>', 'the merged results file (replaced if it exists)')
    .option('--plan <file>', 'the experiment file (YAML or JSON) the shards ran: check every planned run is there')
    .option('-p, --preset <name>', `or the built-in experiment the shards ran: ${Object.keys(PRESETS).join(', ')}`)
    .option('--runs <N>', 'with --plan or --preset: the --runs the shards were given', wholeNumber(1))
    .option('--seed <S>', 'with --plan or --preset: the --seed the shards were given')
    .option('--json', 'print counts as JSON')
    .addHelpText(
      'after',
      '\nExamples:\n  $ witness sim merge part1.jsonl part2.jsonl -o all.jsonl\n  $ witness sim merge /shared/part-*.jsonl --preset paper-benign --runs 2000 -o all.jsonl   # exit 1 and the missing runs until every shard is in\n\nExit status: 0 merged (and complete, with a plan), 1 runs of the plan missing, 2 bad usage or a missing or mixed input.',
    )
    .action(
      (
        files: string[],
        options: { out: string; plan?: string; preset?: string; runs?: number; seed?: string; json?: boolean },
      ) => {
        if (options.plan && options.preset)
          throw new WitnessError('USAGE', 'Give --plan FILE or --preset NAME, not both.');
        checkOutputFile(resolvePath(ctx, options.out)); // before the inputs are read
        const plan =
          options.plan || options.preset
            ? lazyPlan(
                _experiment(ctx, options.plan, {
                  preset: options.preset,
                  runs: options.runs,
                  seed: options.seed,
                } as SimOptions),
              )
            : undefined;
        const report = mergeResults(
          files.map((f) => resolvePath(ctx, f)),
          resolvePath(ctx, options.out),
          plan,
        );
        for (const p of report.problems) ctx.io.stderr(`${p.file}:${p.line}: skipped: ${p.message}\n`);
        if (options.json) ctx.io.stdout(`${JSON.stringify(report)}\n`);
        else
          ctx.io.stdout(
            `Merged ${report.lines} runs into ${options.out} (${report.duplicates} duplicates dropped, ${report.outside ? `${report.outside} runs outside the plan dropped, ` : ''}${report.problems.length} bad lines skipped${report.signed ? `; signed: the shards' checkpoints are in ${options.out}.checkpoint.json` : ''}).\n`,
          );
        if (report.missing.length > 0) {
          const shown = report.missing
            .slice(0, 10)
            .map((m) => `  seq ${m.seq} ${m.id} ${m.cell}`)
            .join('\n');
          const more =
            report.missing.length > 10 ? `\n  … and ${report.missing.length - 10} more (--json lists all)` : '';
          ctx.io.stderr(
            `Incomplete: ${report.missing.length} of the plan's ${report.planned} runs are in no input file:\n${shown}${more}\nRun or rerun the shards that hold them (same command, same --out: finished runs are skipped), then merge again.\n`,
          );
          ctx.exitCode = 1;
        }
      },
    );
}

function _listCommand(ctx: CliContext): Command {
  return new Command('list')
    .description('list presets, honest policies and Byzantine strategies')
    .option('--json', 'as JSON')
    .addHelpText('after', '\nExample:\n  $ witness sim list')
    .action((options: { json?: boolean }) => {
      const describe = (table: Readonly<Record<string, { description: string }>>) =>
        Object.entries(table).map(([name, v]) => ({ name, description: v.description }));
      const lists = {
        presets: describe(PRESETS),
        honestPolicies: describe(HONEST_POLICIES),
        byzantineStrategies: describe(BYZANTINE_STRATEGIES),
      };
      if (options.json) {
        ctx.io.stdout(`${JSON.stringify(lists, null, 2)}\n`);
        return;
      }
      for (const [title, items] of [
        ['Presets', lists.presets],
        ['Honest policies', lists.honestPolicies],
        ['Byzantine strategies', lists.byzantineStrategies],
      ] as const) {
        ctx.io.stdout(`${title}:\n${items.map((i) => `  ${i.name.padEnd(16)} ${i.description}`).join('\n')}\n\n`);
      }
    });
}
