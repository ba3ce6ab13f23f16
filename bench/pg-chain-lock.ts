/**
 * Which way to serialise appends to one hash chain in PostgreSQL ("an advisory
 * lock or a single-row head with FOR UPDATE; measure which is faster"), for the
 * PostgreSQL mailbox store's call log. Each append is one transaction: take the lock,
 * read the head, insert the next line chained to it, move the head, commit. 8
 * connections append at once; the rows are checked to form one unbroken chain.
 * Baseline, same run and database: a bare INSERT … COMMIT loop with no chain.
 *
 *   npx tsx bench/pg-chain-lock.ts [--n 2000] [--db postgres:///postgres]   (creates and drops pg_bench_*)
 */
import { createHash, randomBytes } from 'node:crypto';
import type { Pool, PoolClient } from 'pg';
import { openPool } from '../src/attest/postgres.js';

const arg = (name: string, fallback: string) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? (process.argv[i + 1] ?? fallback) : fallback;
};
const N = Number(arg('--n', '2000'));
const IN_FLIGHT = 8;
const ADMIN = arg('--db', process.env.WITNESS_TEST_DATABASE_URL ?? 'postgres:///postgres');
const sha = (text: string) => createHash('sha256').update(text).digest('hex');

type Append = (c: PoolClient, i: number) => Promise<void>;

async function _chained(
  c: PoolClient,
  i: number,
  head: { seq: number; hash: string },
  table: string,
): Promise<{ seq: number; hash: string }> {
  const text = JSON.stringify({ seq: head.seq + 1, prev: head.hash, i });
  await c.query(`INSERT INTO ${table} (seq, text) VALUES ($1, $2)`, [head.seq + 1, text]);
  return { seq: head.seq + 1, hash: sha(text) };
}

const METHODS: Array<[string, string, Append]> = [
  [
    'bare INSERT … COMMIT (baseline)',
    'bare',
    async (c, i) => {
      await c.query('INSERT INTO bare (text) VALUES ($1)', [String(i)]);
    },
  ],
  [
    'head row, SELECT … FOR UPDATE',
    'chain_head',
    async (c, i) => {
      // bigint comes back as a string from pg (it may exceed 2^53): read it as a number here.
      const head = (
        await c.query<{ seq: number; hash: string }>('SELECT seq::int AS seq, hash FROM head WHERE id = 1 FOR UPDATE')
      ).rows[0] as { seq: number; hash: string };
      const next = await _chained(c, i, head, 'chain_head');
      await c.query('UPDATE head SET seq = $1, hash = $2 WHERE id = 1', [next.seq, next.hash]);
    },
  ],
  [
    'advisory lock + last row',
    'chain_lock',
    async (c, i) => {
      await c.query('SELECT pg_advisory_xact_lock(42)');
      const last = (
        await c.query<{ seq: number; text: string }>(
          'SELECT seq::int AS seq, text FROM chain_lock ORDER BY seq DESC LIMIT 1',
        )
      ).rows[0];
      await _chained(c, i, last ? { seq: last.seq, hash: sha(last.text) } : { seq: 0, hash: '' }, 'chain_lock');
    },
  ],
];

async function run(pool: Pool, append: Append): Promise<number> {
  let next = 0;
  const started = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async () => {
      const c = await pool.connect();
      try {
        while (next < N) {
          const i = next++;
          await c.query('BEGIN');
          await append(c, i);
          await c.query('COMMIT');
        }
      } finally {
        c.release();
      }
    }),
  );
  return N / (Number(process.hrtime.bigint() - started) / 1e9);
}

async function unbroken(pool: Pool, table: string): Promise<boolean> {
  const rows = (
    await pool.query<{ seq: number; text: string }>(`SELECT seq::int AS seq, text FROM ${table} ORDER BY seq`)
  ).rows;
  let prev = '';
  return (
    rows.length === N &&
    rows.every((r, k) => {
      const ok = r.seq === k + 1 && (JSON.parse(r.text) as { prev: string }).prev === prev;
      prev = sha(r.text);
      return ok;
    })
  );
}

const name = `pg_bench_${randomBytes(4).toString('hex')}`;
const admin = await openPool(ADMIN, { purpose: 'PostgreSQL server', max: 1 });
await admin.query(`CREATE DATABASE ${name}`);
const url = new URL(ADMIN);
url.pathname = `/${name}`;
const pool = await openPool(url.toString(), { purpose: 'bench database', max: IN_FLIGHT });
try {
  await pool.query(
    "CREATE TABLE bare (id bigserial PRIMARY KEY, text text NOT NULL); CREATE TABLE chain_head (seq bigint PRIMARY KEY, text text NOT NULL); CREATE TABLE chain_lock (seq bigint PRIMARY KEY, text text NOT NULL); CREATE TABLE head (id int PRIMARY KEY, seq bigint NOT NULL, hash text NOT NULL); INSERT INTO head VALUES (1, 0, '')",
  );
  await run(pool, async (c) => void (await c.query('SELECT 1'))); // warm-up
  const rates = new Map<string, number[]>();
  // Alternate the methods over 3 rounds so load that drifts over the run falls on all of them.
  for (let round = 0; round < 3; round++) {
    for (const [label, table, append] of METHODS) {
      await pool.query(`TRUNCATE ${table}`);
      if (table === 'chain_head') await pool.query("UPDATE head SET seq = 0, hash = '' WHERE id = 1");
      const rate = await run(pool, append);
      if (table !== 'bare' && !(await unbroken(pool, table))) throw new Error(`${label}: the chain is broken`);
      rates.set(label, [...(rates.get(label) ?? []), rate]);
    }
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[1] as number;
  const base = median(rates.get(METHODS[0]?.[0] as string) as number[]);
  console.log('method                            appends/s (median of 3)  ratio to bare INSERT…COMMIT');
  for (const [label] of METHODS) {
    const m = median(rates.get(label) as number[]);
    console.log(`${label.padEnd(33)} ${m.toFixed(0).padStart(23)}  ${(m / base).toFixed(3)}`);
  }
  console.log(
    `\n${N} appends per run, ${IN_FLIGHT} connections in flight, each append its own transaction; both chains checked unbroken. Node ${process.version}; ${ADMIN}.`,
  );
} finally {
  await pool.end();
  await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await admin.end();
}
