/**
 * Bench: how far the progress line's ETA is from the time the command really took.
 * Runs `witness sim --preset paper-benign --runs N` (or another preset; rule-based, one
 * thread) in a pseudo-terminal (`script`), so the progress line is redrawn every
 * 100 ms, and stamps each redraw with the time it arrived. At the first redraw past
 * 25 % and past 50 % of the runs it compares the ETA shown with what was really left:
 * the time from that redraw until the command exited (the summary included, since the
 * user waits for it too). Error = (ETA − real) / real: negative is optimistic.
 *
 * `--trace` also prints the runs done at each tenth of the time the runs took, to see
 * where the rate changes.
 *
 * Run: nice npx tsx bench/eta.ts [--runs 50000] [--preset paper-benign] [--repeat 3] [--cli dist/cli/main.js] [--trace]
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const arg = (name: string, fallback: string) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? (process.argv[i + 1] as string) : fallback;
};
const runs = arg('--runs', '50000');
const presetName = arg('--preset', 'paper-benign');
const repeat = Number(arg('--repeat', '3'));
const cli = resolve(arg('--cli', join(import.meta.dirname, '../dist/cli/main.js')));

interface Sample {
  at: number;
  done: number;
  total: number;
  eta?: number;
}

/** Seconds from the printer's `_duration` text: 8s, 1m05s, 2h03m. */
function seconds(text: string): number {
  const m = /^(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$/.exec(text);
  if (!m) return Number.NaN;
  return Number(m[1] ?? 0) * 3600 + Number(m[2] ?? 0) * 60 + Number(m[3] ?? 0);
}

async function once(): Promise<{ samples: Sample[]; started: number; ended: number }> {
  const dir = mkdtempSync(join(tmpdir(), 'witness-bench-eta-'));
  const command = [process.execPath, cli, 'sim', '--preset', presetName, '--runs', runs, '--out', join(dir, 'r.jsonl')]
    .map((a) => `'${a}'`)
    .join(' ');
  const started = performance.now();
  const child = spawn('script', ['-qfec', command, '/dev/null'], { stdio: ['ignore', 'pipe', 'inherit'] });
  const samples: Sample[] = [];
  let carry = '';
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (chunk: string) => {
    const at = performance.now();
    const parts = (carry + chunk).split(/[\r\n]/);
    carry = parts.pop() ?? '';
    for (const p of parts) {
      const m = /runs (\d+)\/(\d+)(?: ETA (\S+))?/.exec(p);
      if (m) samples.push({ at, done: Number(m[1]), total: Number(m[2]), eta: m[3] ? seconds(m[3]) : undefined });
    }
  });
  const code = await new Promise<number | null>((done) => child.on('exit', done));
  const ended = performance.now();
  rmSync(dir, { recursive: true, force: true });
  if (code !== 0) throw new Error(`witness sim exited ${code}`);
  return { samples, started, ended };
}

console.log(`witness sim --preset ${presetName} --runs ${runs} (${cli})`);
console.log(
  `${'run'.padEnd(4)} ${'at'.padStart(4)} ${'ETA s'.padStart(6)} ${'real s'.padStart(7)} ${'error'.padStart(7)}   last run → exit`,
);
for (let r = 1; r <= repeat; r++) {
  const { samples, started, ended } = await once();
  const last = samples.find((s) => s.done === s.total);
  const tail = last ? `${((ended - last.at) / 1000).toFixed(1)} s of ${((ended - started) / 1000).toFixed(1)} s` : '?';
  for (const share of [0.25, 0.5]) {
    const s = samples.find((x) => x.done >= x.total * share && x.eta !== undefined);
    if (!s) continue;
    const real = (ended - s.at) / 1000;
    const error = (s.eta! - real) / real;
    console.log(
      `${String(r).padEnd(4)} ${`${share * 100}%`.padStart(4)} ${String(s.eta).padStart(6)} ${real.toFixed(1).padStart(7)} ${`${(error * 100).toFixed(0)} %`.padStart(7)}   ${share === 0.25 ? tail : ''}`,
    );
  }
  if (process.argv.includes('--trace') && last) {
    const first = samples[0]!.at;
    const tenths = Array.from(
      { length: 10 },
      (_, k) => samples.find((x) => x.at - first >= ((k + 1) / 10) * (last.at - first))!,
    );
    console.log(
      `     runs done at each tenth of ${((last.at - first) / 1000).toFixed(1)} s: ${tenths.map((x) => `${((x.done / x.total) * 100).toFixed(0)}%`).join(' ')}`,
    );
  }
}
