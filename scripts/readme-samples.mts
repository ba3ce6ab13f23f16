// README samples from real runs: each region of README.md between `<!-- sample:NAME -->`
// and `<!-- /sample:NAME -->` is the output of the command below, run on the embedded
// defaults in a fresh directory. test/readme-samples.test.ts fails when they drift.
// Run: npm run docs:readme            (rewrites the regions)
//      npm run docs:readme -- --check (exit 1 and name the regions that drifted)
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { memoryIo } from '../src/cli/io.js';
import { runMain } from '../src/cli/main.js';

/** Each sample: the `witness` arguments whose standard output the region shows. */
export const SAMPLES: Readonly<Record<string, readonly string[]>> = {
  smoke: ['sim', '--quiet'],
};

export const README = join(import.meta.dirname, '..', 'README.md');

/** Runs one sample's command in a fresh directory and returns what it printed. */
export async function runSample(name: string): Promise<string> {
  const args = SAMPLES[name];
  if (!args)
    throw new Error(
      `README.md has a sample region "${name}" that scripts/readme-samples.mts does not know; known: ${Object.keys(SAMPLES).join(', ')}.`,
    );
  const dir = mkdtempSync(join(tmpdir(), 'witness-readme-'));
  try {
    const io = memoryIo(dir);
    const code = await runMain([...args], io);
    if (code !== 0) throw new Error(`witness ${args.join(' ')} exited ${code}: ${io.err.trim()}`);
    return io.out;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const _region = /(<!-- sample:([a-z0-9-]+) -->\n)([\s\S]*?)(<!-- \/sample:\2 -->)/g;

/** The names of the sample regions in a README text, in order. */
export function sampleNames(readme: string): string[] {
  return [...readme.matchAll(_region)].map((m) => m[2]!);
}

/** The README with every sample region holding a fenced block of that sample's output. */
export function applySamples(readme: string, outputs: ReadonlyMap<string, string>): string {
  return readme.replace(_region, (_all, open: string, name: string, _old: string, close: string) => {
    const out = outputs.get(name);
    if (out === undefined) throw new Error(`no output for the README sample "${name}"`);
    return `${open}\`\`\`\n${out.endsWith('\n') ? out : `${out}\n`}\`\`\`\n${close}`;
  });
}

/** The samples' outputs today, by name, for every region of the README. */
export async function runSamples(readme: string): Promise<Map<string, string>> {
  const outputs = new Map<string, string>();
  for (const name of sampleNames(readme)) outputs.set(name, await runSample(name));
  return outputs;
}

/** The regions whose text differs from what their commands print today. */
export function driftedSamples(readme: string, outputs: ReadonlyMap<string, string>): string[] {
  const now = applySamples(readme, outputs);
  const regions = (text: string) => new Map([...text.matchAll(_region)].map((m) => [m[2]!, m[3]!]));
  const [was, is] = [regions(readme), regions(now)];
  return [...was.keys()].filter((name) => was.get(name) !== is.get(name));
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const readme = readFileSync(README, 'utf8');
  const outputs = await runSamples(readme);
  const drifted = driftedSamples(readme, outputs);
  if (process.argv.includes('--check')) {
    if (drifted.length) {
      console.error(`README.md samples drifted: ${drifted.join(', ')}. Run npm run docs:readme to rewrite them.`);
      process.exit(1);
    }
    console.log(`README.md samples are up to date (${outputs.size}).`);
  } else {
    writeFileSync(README, applySamples(readme, outputs));
    console.log(
      drifted.length
        ? `Rewrote README.md samples: ${drifted.join(', ')}.`
        : `README.md samples were already up to date (${outputs.size}).`,
    );
  }
}
