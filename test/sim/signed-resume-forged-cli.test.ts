/**
 * A resume never signs a line it did not produce, through the real CLI: a signed
 * rule-based sweep is killed with SIGKILL, an outcome is edited on a line past its last
 * checkpoint and the chain after it recomputed (content digest and `prev` links need no
 * key), and the same command is run again. The resume plays the unsigned lines' runs
 * again from their seeds, names the forged line, and signs the replay instead; the
 * file then verifies and holds the runs as an uninterrupted sweep wrote them.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readFileSync, watch, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { canonicalize } from '../../src/core/canonical-json.js';
import { sha256Hex } from '../../src/core/hash.js';
import { preset } from '../../src/sim/experiment/presets.js';
import { runExperiment } from '../../src/sim/experiment/run.js';
import { parseExperiment } from '../../src/sim/experiment/schema.js';
import { receiptDigest, signedLine, splitSignedLine } from '../../src/sim/transcript/format.js';
import { witnessBundle } from '../support/witness-bundle.js';

const dir = mkdtempSync(join(tmpdir(), 'witness-forged-'));
const at = (name: string) => join(dir, name);
// 6000 policy-agent runs: the kill lands long before the sweep's first checkpoint after the one it signs on opening (1 s).
const SWEEP = [
  'sim',
  '--preset',
  'paper-benign',
  '--runs',
  '1000',
  '--quiet',
  '--sign',
  at('lab.key.json'),
  '--out',
  at('sweep.jsonl'),
];

async function witness(args: string[]): Promise<{ code: number | null; out: string; err: string }> {
  const [node, main] = await witnessBundle();
  const child = spawn(node as string, [main as string, ...args], { cwd: dir });
  let out = '';
  let err = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (err += d));
  const [code] = await once(child, 'exit');
  return { code, out, err };
}

const linesOf = (path: string) => (existsSync(path) ? readFileSync(path, 'utf8').split('\n').slice(0, -1) : []);
const contentOf = (line: string) => (splitSignedLine(line, JSON.parse(line)) as { content: string }).content;

/** Kills the sweep with SIGKILL once its file holds `n` lines (woken by file-system events, not a timer). */
async function killedSweep(n: number): Promise<void> {
  const [node, main] = await witnessBundle();
  const child = spawn(node as string, [main as string, ...SWEEP], { cwd: dir, stdio: 'ignore' });
  const exited = once(child, 'exit');
  let reached!: () => void;
  const watcher = watch(dir, () => {
    if (linesOf(at('sweep.jsonl')).length >= n) reached();
  });
  try {
    await Promise.race([new Promise<void>((resolve) => (reached = resolve)), exited]);
  } finally {
    watcher.close();
  }
  child.kill('SIGKILL');
  await exited;
}

/** Edits the outcome on line `n` (1-based) and recomputes its content digest and every `prev` after it, as anyone could. */
function forge(lines: string[], n: number): string {
  let head: string | null = null;
  for (let i = n - 1; i < lines.length; i++) {
    const raw = lines[i] as string;
    const split = splitSignedLine(raw, JSON.parse(raw)) as { content: string; receipt: Record<string, unknown> };
    const content =
      i === n - 1
        ? split.content.replace(/"outcome":"(\w+)"/, (_, o) => `"outcome":"${o === 'valid' ? 'none' : 'valid'}"`)
        : split.content;
    const receipt = {
      ...split.receipt,
      content_sha256: sha256Hex(content),
      prev: i === n - 1 ? split.receipt.prev : head,
    };
    head = receiptDigest(canonicalize(receipt));
    lines[i] = signedLine(content, canonicalize(receipt));
  }
  return contentOf(lines[n - 1] as string);
}

let covered = 0;
let killedAt = 0;
let forgedLine = 0;
let forgedContent = '';
let forgedRun = '';
let resumed: { code: number | null; err: string };
let verdict: { code: number | null; out: string };

beforeAll(async () => {
  expect((await witness(['keys', 'new', '--deployer', 'lab', '--out', at('lab.key.json')])).code).toBe(0);
  expect((await witness(['keys', 'add', at('lab.key.json'), '--dir', at('trusted.json')])).code).toBe(0);
  await killedSweep(300);
  const lines = linesOf(at('sweep.jsonl'));
  killedAt = lines.length;
  covered = (
    JSON.parse(readFileSync(at('sweep.jsonl.checkpoint.json'), 'utf8')) as { checkpoints: { count: number }[] }
  ).checkpoints[0]!.count;
  forgedLine = covered + Math.ceil((killedAt - covered) / 2);
  if (forgedLine > covered && forgedLine <= killedAt) {
    forgedContent = forge(lines, forgedLine);
    forgedRun = (JSON.parse(forgedContent) as { id: string }).id;
    writeFileSync(at('sweep.jsonl'), lines.map((l) => `${l}\n`).join(''));
  }
  resumed = await witness(SWEEP);
  verdict = await witness(['verify', at('sweep.jsonl'), '--keys', at('trusted.json')]);
}, 600_000);

describe('a signed sweep killed with SIGKILL, a line past its checkpoint forged and re-chained, then resumed', () => {
  it('was killed with lines past its last checkpoint', () => {
    expect(killedAt, 'the sweep should be killed midway; make it longer if this fails').toBeLessThan(6000);
    expect(
      killedAt,
      `the checkpoint covers ${covered} of ${killedAt} lines: the kill should land before the next checkpoint`,
    ).toBeGreaterThan(covered);
  });
  it('names the forged line in its report, and the lines it re-derived and kept', () => {
    expect(resumed.code, resumed.err).toBe(0);
    expect(resumed.err).toContain(`Forged: line ${forgedLine} (run ${forgedRun})`);
    expect(resumed.err).toContain(
      `${killedAt - covered} lines from line ${covered + 1} were signed by no one; ${killedAt - covered - 1} re-derived from their seeds and kept`,
    );
  });
  it('signs the replay, never the forged line: the file holds what an uninterrupted sweep writes', async () => {
    const plain = at('plain.jsonl');
    await runExperiment({ experiment: parseExperiment({ ...preset('paper-benign'), runs: 1000 }), out: plain });
    const contents = linesOf(at('sweep.jsonl')).map(contentOf);
    expect(contents).not.toContain(forgedContent);
    expect(contents).toEqual(linesOf(plain));
  });
  it('verifies clean', () => {
    expect(verdict.code, verdict.out).toBe(0);
    expect(verdict.out).toMatch(/^valid: /);
  });
});
