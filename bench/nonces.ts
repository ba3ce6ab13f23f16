/**
 * Verifications per second of one process with each nonce store (attest.md §4),
 * as ratios to the same receipts verified with no nonce store, in the same run: what
 * remembering a nonce costs in a memory map, a SQLite file and a PostgreSQL database.
 * Sequential (one verification at a time) and 8 in flight (PostgreSQL claims overlap on
 * the pool's 8 connections; SQLite's are synchronous). Each PostgreSQL claim is one
 * committed INSERT, so it waits for the server's WAL flush.
 *
 *   npx tsx bench/nonces.ts [--n 2000] [--db postgres:///postgres]   (creates and drops a database pg_bench_*)
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { addKey, emptyDirectory, KeyDirectory } from '../src/attest/key-directory.js';
import { newSigningKey, publicJwk } from '../src/attest/keys.js';
import { MemoryNonceStore, type NonceStore, SqliteNonceStore } from '../src/attest/nonce-store.js';
import { PostgresNonceStore } from '../src/attest/nonce-store-pg.js';
import { openPool } from '../src/attest/postgres.js';
import { createReleaseSigner } from '../src/attest/signer.js';
import { verifyEvidence } from '../src/attest/verify.js';

const arg = (name: string, fallback: string) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? (process.argv[i + 1] ?? fallback) : fallback;
};
const N = Number(arg('--n', '2000'));
const ADMIN = arg('--db', process.env.WITNESS_TEST_DATABASE_URL ?? 'postgres:///postgres');

const now = Date.now();
const key = newSigningKey('bench');
const directory = new KeyDirectory(
  addKey(emptyDirectory(), publicJwk(key), { notBefore: now - 86_400_000, notAfter: now + 86_400_000 }),
);
const signer = createReleaseSigner({ key, instance: 'bench', clock: () => now });
const output = Buffer.from('the released output');
const receipts = await Promise.all(
  Array.from({ length: N }, () => signer.releaseOutput(output).then((r) => JSON.stringify(r))),
);

async function run(store: NonceStore | undefined, inFlight: number): Promise<number> {
  let next = 0;
  const started = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (next < receipts.length) {
        const text = receipts[next++] as string;
        const result = await verifyEvidence(text, output, { directory, now, ...(store ? { nonceStore: store } : {}) });
        if (!result.ok) throw new Error(`bench receipt refused: ${result.reasons.map((r) => r.code).join()}`);
      }
    }),
  );
  return N / (Number(process.hrtime.bigint() - started) / 1e9);
}

const name = `pg_bench_${randomBytes(4).toString('hex')}`;
const admin = await openPool(ADMIN, { purpose: 'PostgreSQL server', max: 1 });
await admin.query(`CREATE DATABASE ${name}`);
const url = new URL(ADMIN);
url.pathname = `/${name}`;
try {
  const stores: Array<[string, () => Promise<NonceStore | undefined>]> = [
    ['none (baseline)', async () => undefined],
    ['memory', async () => new MemoryNonceStore()],
    ['sqlite', async () => new SqliteNonceStore(join(mkdtempSync(join(tmpdir(), 'witness-bench-')), 'nonces.db'))],
    ['postgres', async () => PostgresNonceStore.open(url.toString())],
  ];
  const rows: Array<{ store: string; inFlight: number; perSecond: number; ratio: number }> = [];
  await run(undefined, 8); // warm-up: the baseline row must not pay for JIT compilation
  for (const inFlight of [1, 8]) {
    let baseline = 0;
    for (const [label, open] of stores) {
      const store = await open();
      await store?.prune(Number.MAX_SAFE_INTEGER);
      const perSecond = await run(store, inFlight);
      await store?.close();
      if (!store) baseline = perSecond;
      rows.push({ store: label, inFlight, perSecond, ratio: perSecond / baseline });
    }
  }
  console.log('store            in flight  verifications/s  ratio to no store (same run)');
  for (const r of rows)
    console.log(
      `${r.store.padEnd(16)} ${String(r.inFlight).padStart(9)}  ${r.perSecond.toFixed(0).padStart(15)}  ${r.ratio.toFixed(3)}`,
    );
  console.log(
    `\n${N} distinct receipts per row (each nonce claimed once); Node ${process.version}; PostgreSQL at ${ADMIN} (database ${name}, dropped after).`,
  );
} finally {
  await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await admin.end();
}
