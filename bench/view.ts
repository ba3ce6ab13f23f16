/**
 * Benchmark for `witness view` on a large results file: time until the cell table is
 * ready (index built, overview answered) and peak RSS of the process that serves it,
 * against reading the whole file into memory (every line parsed and kept, then the
 * cells summarised) — both in this run, each in its own child process so one's peak
 * memory is not the other's. The whole-file side reads line by line (a 2,000,000-run
 * file, ~4 GiB, is past V8's longest string) and gets a heap large enough to keep every
 * record (--max-old-space-size, WHOLE_HEAP_MB); the index runs on Node's default heap.
 * The file is generated: the smoke preset's runs repeated with fresh ids, seqs and run
 * indexes until it holds RUNS runs.
 *
 * Run: npx tsx bench/view.ts [RUNS] [--json]    (default 200,000 runs; the 2,000,000-run row takes
 *      about 10 min and ~10 GiB for the whole-file side)
 */
import { spawnSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmSync, statSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RunRecord } from '../src/sim/experiment/record.js';
import { preset } from '../src/sim/experiment/presets.js';
import { fileLines } from '../src/sim/experiment/results-stream.js';
import { runExperiment } from '../src/sim/experiment/run.js';
import { parseExperiment } from '../src/sim/experiment/schema.js';
import { summarizeCells } from '../src/sim/stats.js';
import { ViewModel } from '../src/view/model.js';
import { ResultsIndex } from '../src/view/results-index.js';

const [mode, file] = process.argv.slice(2);
if (mode === '--index' || mode === '--whole') {
  const started = performance.now();
  let cells: number;
  if (mode === '--index') {
    const model = new ViewModel([ResultsIndex.build(file!)], [file!]);
    cells = model.overview().files[0]!.cells.length;
  } else {
    const records: RunRecord[] = [];
    for (const { raw } of fileLines(file!)) if (raw.length > 0) records.push(JSON.parse(raw) as RunRecord);
    cells = summarizeCells(records).length;
  }
  const ms = performance.now() - started;
  process.stdout.write(JSON.stringify({ ms, cells, peak_rss_mb: process.resourceUsage().maxRSS / 1024 }));
  process.exit(0);
}

const runs = Number(process.argv.slice(2).find((a) => /^\d+$/.test(a)) ?? 200_000);
const json = process.argv.includes('--json');
const dir = mkdtempSync(join(tmpdir(), 'witness-bench-view-'));
const path = join(dir, 'large.jsonl');
const smoke = (await runExperiment({ experiment: parseExperiment(preset('smoke')) })).records;
const cellsOf = new Set(smoke.map((r) => r.cell)).size;
const fd = openSync(path, 'w');
let lines: string[] = [];
for (let seq = 0; seq < runs; seq++) {
  const r = smoke[seq % smoke.length]!;
  const index = Math.floor(seq / cellsOf);
  lines.push(JSON.stringify({ ...r, id: `r-${seq.toString(16).padStart(16, '0')}`, seq, index, seed: r.seed + index }));
  if (lines.length === 10_000) {
    writeSync(fd, `${lines.join('\n')}\n`);
    lines = [];
  }
}
if (lines.length) writeSync(fd, `${lines.join('\n')}\n`);
closeSync(fd);
const bytes = statSync(path).size;

const WHOLE_HEAP_MB = 20_000;
const child = (m: string) => {
  const heap = m === '--whole' ? [`--max-old-space-size=${WHOLE_HEAP_MB}`] : [];
  const out = spawnSync(process.execPath, [...heap, '--import', 'tsx', import.meta.filename, m, path], {
    encoding: 'utf8',
    maxBuffer: 1 << 20,
  });
  if (out.status !== 0)
    return {
      ms: Number.NaN,
      cells: 0,
      peak_rss_mb: Number.NaN,
      failed: out.stderr.split('\n').find((l) => /Error/.test(l)) ?? `exit ${out.status}`,
    };
  return JSON.parse(out.stdout) as { ms: number; cells: number; peak_rss_mb: number; failed?: string };
};
const index = child('--index');
const whole = child('--whole');
rmSync(dir, { recursive: true, force: true });
const row = {
  runs,
  file_mb: bytes / 2 ** 20,
  index,
  whole,
  time_ratio: index.ms / whole.ms,
  rss_ratio: index.peak_rss_mb / whole.peak_rss_mb,
};
if (json) console.log(JSON.stringify(row));
else {
  const f = (x: number) => (Number.isNaN(x) ? 'failed' : x.toFixed(0));
  console.log(`witness view, ${runs} runs (${row.file_mb.toFixed(0)} MiB, ${index.cells} cells)`);
  console.log(`  index (view):      ${f(index.ms)} ms to the cell table, peak RSS ${f(index.peak_rss_mb)} MiB`);
  console.log(
    `  whole file loaded: ${f(whole.ms)} ms, peak RSS ${f(whole.peak_rss_mb)} MiB${whole.failed ? ` (${whole.failed})` : ''}`,
  );
  console.log(`  ratio view / whole: time ${row.time_ratio.toFixed(2)}, peak RSS ${row.rss_ratio.toFixed(2)}`);
}
