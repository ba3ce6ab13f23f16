/**
 * Bench: this checkout's mailbox against another checkout's (an earlier commit, a
 * branch), sends/s and server CPU per send, on each store kind.
 *
 * A single run of bench/mailbox.ts cannot tell two versions apart by a few per cent on
 * a shared machine: its own fsync baseline moves 2× inside one run. Here both versions
 * run at once, each on its own mailbox (created by its own CLI, so each uses its own
 * formats) on the same disk or database server, driven in alternating blocks; each
 * block pair gives one ratio and a row reports their median with the range.
 * Rows per store: stdio (one agent, 8 sends in flight) and HTTP (8 agents, plain
 * JSON-RPC POSTs, one in flight each). Each mailbox is verified by its own CLI at the end.
 *
 * The base checkout needs its dependencies, e.g.:
 *   git worktree add /tmp/base REV && ln -s "$PWD/node_modules" /tmp/base/node_modules
 * Run: npx tsx bench/mailbox-ab.ts --base /tmp/base [--stores jsonl,sqlite,postgres]
 *      [--block N] [--blocks N] [--warm-up N]   (defaults: 500, 12, 2000; PostgreSQL at
 *      $WITNESS_TEST_DATABASE_URL or postgres:///postgres)
 * Exit 1 when a mailbox does not verify clean, 2 on a bad argument.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { dropDatabases, freshDatabase } from './support/pg-database.js';
import { AGENTS, fmt, httpTarget, interleaved, numberArg, stdioTarget, witnessCommand } from './support/alternating.js';

const STORE_KINDS = ['jsonl', 'sqlite', 'postgres'] as const;
type StoreKind = (typeof STORE_KINDS)[number];

interface Side {
  label: string;
  witness: string[];
}

interface Mailbox {
  dir: string;
  tokens: Record<string, string>;
}

function usage(message: string): never {
  console.error(
    `bench/mailbox-ab: ${message}\nusage: npx tsx bench/mailbox-ab.ts --base DIR [--stores jsonl,sqlite,postgres] [--block N] [--blocks N] [--warm-up N]`,
  );
  process.exit(2);
}

function parseArgs(): { base: string; stores: StoreKind[]; blocks: { block: number; blocks: number; warmUp: number } } {
  const at = process.argv.indexOf('--base');
  const base = at < 0 ? undefined : process.argv[at + 1];
  if (!base) usage('--base DIR is required: a checkout of the version to compare against');
  const root = resolve(base);
  if (!existsSync(join(root, 'src/cli/main.ts'))) usage(`${root} is not a Witness checkout (no src/cli/main.ts)`);
  if (!existsSync(join(root, 'node_modules/tsx/dist/loader.mjs')))
    usage(`${root} has no node_modules/tsx: run npm ci there, or link this checkout's node_modules into it`);
  const s = process.argv.indexOf('--stores');
  const stores = (s < 0 ? 'jsonl,sqlite,postgres' : (process.argv[s + 1] ?? '')).split(',');
  for (const k of stores)
    if (!(STORE_KINDS as readonly string[]).includes(k))
      usage(`unknown store "${k}" in --stores (choose from ${STORE_KINDS.join(', ')})`);
  try {
    return {
      base: root,
      stores: stores as StoreKind[],
      blocks: {
        block: numberArg('--block', 500),
        blocks: numberArg('--blocks', 12),
        warmUp: numberArg('--warm-up', 2000),
      },
    };
  } catch (error) {
    usage((error as Error).message);
  }
}

function revision(root: string): string {
  try {
    return execFileSync('git', ['-C', root, 'log', '-1', '--format=%h %s'], { encoding: 'utf8' }).trim().slice(0, 90);
  } catch {
    return root;
  }
}

async function main(): Promise<void> {
  const { base, stores, blocks } = parseArgs();
  const here = resolve(import.meta.dirname, '..');
  const sides: [Side, Side] = [
    { label: `base ${revision(base)}`, witness: witnessCommand(base) },
    { label: `this ${revision(here)}`, witness: witnessCommand(here) },
  ];
  const work = mkdtempSync(join(tmpdir(), 'witness-bench-ab-'));
  console.log(
    `Mailbox sends, two versions side by side (${blocks.blocks} alternating blocks of ${blocks.block} sends, after ${blocks.warmUp} warm-up sends):`,
  );
  for (const s of sides) console.log(`- ${s.label}`);
  console.log(
    '\n| store | row | base sends/s | this sends/s | this ÷ base: median block pair [range] | base CPU µs/send | this | CPU base ÷ this: median [range] |',
  );
  console.log('|---|---|---:|---:|---:|---:|---:|---:|');
  let worst = Number.POSITIVE_INFINITY;
  try {
    for (const kind of stores) {
      const made: Mailbox[] = [];
      for (const [i, side] of sides.entries()) {
        const store = kind === 'postgres' ? await freshDatabase(`pg_bench_ab_${process.pid}_${i}`) : kind;
        made.push(mailbox(side, join(work, `${kind}-${i}`), store));
      }
      const [a, b] = made as [Mailbox, Mailbox];
      for (const [name, start] of [
        ['stdio, 1 agent, 8 in flight', (s: Side, m: Mailbox) => stdioTarget(s.witness, m.dir, [])],
        ['HTTP, 8 agents, plain JSON-RPC POSTs', (s: Side, m: Mailbox) => httpTarget(s.witness, m.dir, m.tokens, [])],
      ] as const) {
        const row = await interleaved(await start(sides[0], a), await start(sides[1], b), blocks);
        worst = Math.min(worst, row.rate.median);
        console.log(
          `| ${kind} | ${name} | ${row.baseRate.toFixed(0)} | ${row.candidateRate.toFixed(0)} | ${fmt(row.rate)} | ${row.baseCpu.toFixed(0)} | ${row.candidateCpu.toFixed(0)} | ${fmt(row.cpu)} |`,
        );
      }
      for (const [i, m] of made.entries()) {
        const side = sides[i] as Side;
        try {
          execFileSync(side.witness[0] as string, [...side.witness.slice(1), 'mailbox', 'verify', m.dir], {
            stdio: 'ignore',
          });
        } catch {
          console.error(`verify ${m.dir} (${side.label}): FAILED`);
          process.exitCode = 1;
        }
      }
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
    await dropDatabases();
  }
  console.log(`\nworst row, this ÷ base (median of block pairs): ${worst.toFixed(3)}`);
}

/** A mailbox made by `side`'s own CLI, with `sink` and the bench agents registered. */
function mailbox(side: Side, dir: string, store: string): Mailbox {
  const run = (args: string[]) =>
    execFileSync(side.witness[0] as string, [...side.witness.slice(1), ...args], { encoding: 'utf8' });
  run(['mailbox', 'init', dir, '--store', store, '--key', `${dir}.key.json`, '--json']);
  const tokens: Record<string, string> = {};
  for (const agent of ['sink', ...AGENTS])
    tokens[agent] = (JSON.parse(run(['mailbox', 'add-agent', dir, agent, '--json'])) as { token: string }).token;
  return { dir, tokens };
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
