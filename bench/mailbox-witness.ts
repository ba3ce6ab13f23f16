/**
 * Bench: what a witness costs a mailbox's sends (goal: within 5 %).
 *
 * Two mailboxes on the same disk, each served by its own live `witness mailbox serve`
 * process started the same way, one of them with `--witness` pointed at a real
 * `witness anchor serve` (the defaults: a checkpoint every 1000 receipts or 10 s).
 * Both are warmed up, then driven in alternating blocks (A B B A A B …), so whatever
 * the shared machine is doing lands on both about equally; each block pair gives one
 * ratio, and the row reports the median of those ratios with their range, for wall
 * time (sends/s) and for the server process's CPU per send. The witness's state is read
 * at the end: the row also says how many checkpoints it cosigned, so a row where no
 * submission happened cannot pass for a cheap witness.
 *
 * Rows: stdio (one agent, 8 sends in flight) and HTTP (8 agents, plain JSON-RPC POSTs,
 * one in flight each).
 *
 * Run: npx tsx bench/mailbox-witness.ts [--block N] [--blocks N] [--warm-up N]
 *      (defaults: blocks of 500 sends, 12 blocks per server per row, 2000 warm-up sends)
 * Exit 1 when a mailbox does not verify clean or the witness cosigned nothing.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { newSigningKey, writeKeyFile } from '../src/attest/keys.js';
import { addAgent, initMailbox, mailboxVerifierKey, verifyMailbox } from '../src/mailbox/index.js';
import { listWitnessed } from '../src/mailbox/witnessed.js';
import { AGENTS, fmt, httpTarget, interleaved, numberArg, stdioTarget, witnessCommand } from './support/alternating.js';

const WITNESS = witnessCommand(resolve(import.meta.dirname, '..'));
const BLOCKS = {
  block: numberArg('--block', 500),
  blocks: numberArg('--blocks', 12),
  warmUp: numberArg('--warm-up', 2000),
};

interface Mailbox {
  dir: string;
  tokens: Record<string, string>;
}

async function main(): Promise<void> {
  const work = mkdtempSync(join(tmpdir(), 'witness-bench-witness-'));
  try {
    const plain = await mailbox(join(work, 'plain'));
    const witnessed = await mailbox(join(work, 'witnessed'));
    const witness = await startWitness(work, [mailboxVerifierKey(plain.dir), mailboxVerifierKey(witnessed.dir)]);
    const flags = ['--witness', witness.url, '--witness-key', witness.vkey];
    console.log(
      `What a witness costs mailbox sends: two live servers on two mailboxes (same disk), one submitting to a witness; ${BLOCKS.blocks} alternating blocks of ${BLOCKS.block} sends each, after ${BLOCKS.warmUp} warm-up sends.\n`,
    );
    console.log(
      '| row | sends/s without | sends/s with | with ÷ without: median block pair [range] | server CPU µs/send without | with | CPU ratio: median [range] | cosigned checkpoints |',
    );
    console.log('|---|---:|---:|---:|---:|---:|---:|---:|');
    let worst = Number.POSITIVE_INFINITY;
    try {
      for (const [name, start] of [
        ['stdio, 1 agent, 8 in flight', (m: Mailbox, extra: string[]) => stdioTarget(WITNESS, m.dir, extra)],
        [
          'HTTP, 8 agents, plain JSON-RPC POSTs',
          (m: Mailbox, extra: string[]) => httpTarget(WITNESS, m.dir, m.tokens, extra),
        ],
      ] as const) {
        const before = cosignedSize(witnessed.dir);
        const row = await interleaved(await start(plain, []), await start(witnessed, flags), BLOCKS);
        const cosigned = cosignedSize(witnessed.dir);
        worst = Math.min(worst, row.rate.median);
        console.log(
          `| ${name} | ${row.baseRate.toFixed(0)} | ${row.candidateRate.toFixed(0)} | ${fmt(row.rate)} | ${row.baseCpu.toFixed(0)} | ${row.candidateCpu.toFixed(0)} | ${fmt(row.cpu)} | up to ${cosigned} receipts (${cosigned - before} in this row) |`,
        );
        if (cosigned <= before) {
          console.error(`the witness cosigned nothing during "${name}": the row measured no submission`);
          process.exitCode = 1;
        }
      }
    } finally {
      witness.proc.kill('SIGTERM');
    }
    console.log(
      `\ngoal: with ÷ without ≥ 0.95 (median of block pairs): ${worst >= 0.95 ? 'yes' : 'no'} (worst row ${worst.toFixed(3)})`,
    );
    for (const m of [plain, witnessed]) {
      const report = await verifyMailbox(m.dir);
      console.log(
        `verify ${m.dir}: ${report.ok ? 'clean' : 'FAILED'} (${report.calls} receipts, ${report.messages} messages)`,
      );
      if (!report.ok) process.exitCode = 1;
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

async function mailbox(dir: string): Promise<Mailbox> {
  await initMailbox(dir, { keyPath: `${dir}.key.json` });
  const tokens: Record<string, string> = {};
  for (const a of ['sink', ...AGENTS]) tokens[a] = (await addAgent(dir, a)).token;
  return { dir, tokens };
}

/** The largest checkpoint size the witness cosigned for this mailbox (0 when none). */
function cosignedSize(dir: string): number {
  return Math.max(0, ...listWitnessed(dir).map((w) => w.size ?? 0));
}

async function startWitness(work: string, logs: string[]): Promise<{ url: string; vkey: string; proc: ChildProcess }> {
  const keyPath = join(work, 'bench-witness.key.json');
  writeKeyFile(keyPath, newSigningKey('bench-witness'));
  const [command, ...args] = WITNESS;
  const proc = spawn(
    command as string,
    [
      ...args,
      'anchor',
      'serve',
      '--key',
      keyPath,
      '--name',
      'bench.example/witness',
      '--state',
      join(work, 'witness.db'),
      ...logs.flatMap((l) => ['--log', l]),
      '--json',
    ],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  const ready = await new Promise<{ url: string; vkey: string }>((resolveReady, reject) => {
    let out = '';
    proc.stdout?.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('\n')) resolveReady(JSON.parse(out.split('\n')[0] as string) as { url: string; vkey: string });
    });
    proc.once('exit', () => reject(new Error('the witness exited before it was ready')));
  });
  return { ...ready, proc };
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
