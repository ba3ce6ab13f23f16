import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeDirectoryFile } from '../../src/attest/key-directory.js';
import { MemoryNonceStore, type NonceStore, openNonceStore, SqliteNonceStore } from '../../src/attest/nonce-store.js';
import { PostgresNonceStore } from '../../src/attest/nonce-store-pg.js';
import { freshDatabase } from './postgres.js';
import { keysFor, NOW, signerAt, trust } from './helpers.js';

const run = promisify(execFile);
const fresh = () => mkdtempSync(join(tmpdir(), 'witness-nonce-'));

/**
 * A signed receipt in a fresh folder and a function that verifies it in a new process
 * against the nonce store `nonces` names (default: a SQLite file in that folder).
 */
async function childVerifier(nonces?: string) {
  const dir = fresh();
  const [key] = keysFor('org-a');
  if (!key) throw new Error('no key');
  writeDirectoryFile(join(dir, 'keys.json'), trust([key]).file);
  const output = Buffer.from('the released output');
  writeFileSync(join(dir, 'out.bin'), output);
  writeFileSync(join(dir, 'receipt.json'), JSON.stringify(await signerAt(key, NOW).releaseOutput(output)));
  const args = [
    join(import.meta.dirname, '..', 'fixtures', 'attest', 'verify-process.ts'),
    join(dir, 'receipt.json'),
    join(dir, 'out.bin'),
    join(dir, 'keys.json'),
    nonces ?? join(dir, 'nonces.db'),
    String(NOW),
  ];
  return async () =>
    JSON.parse(
      (await run(process.execPath, ['--import', 'tsx', ...args], { cwd: join(import.meta.dirname, '..', '..') }))
        .stdout,
    ) as { pid: number; ok: boolean; codes: string[] };
}

// One database for this file's contract cases; each case empties the table first.
let database: Awaited<ReturnType<typeof freshDatabase>> | undefined;
beforeAll(async () => {
  database = await freshDatabase('nonce');
});
afterAll(async () => {
  await database?.drop();
});

// One suite, every implementation (STYLE.md): all stores keep the same contract.
const implementations: Array<[string, () => NonceStore | Promise<NonceStore>]> = [
  ['MemoryNonceStore', () => new MemoryNonceStore()],
  ['SqliteNonceStore', () => new SqliteNonceStore(join(fresh(), 'nonces.db'))],
  [
    'PostgresNonceStore',
    async () => {
      const store = await PostgresNonceStore.open((database as { url: string }).url);
      await store.prune(Number.MAX_SAFE_INTEGER);
      return store;
    },
  ],
];

for (const [name, open] of implementations) {
  describe(name, () => {
    it('accepts a nonce the first time and refuses it the second', async () => {
      const store = await open();
      expect(await store.claim('k:n1', NOW + 1000)).toBe(true);
      expect(await store.claim('k:n1', NOW + 1000)).toBe(false);
      await store.close();
    });
    it('keeps different nonces apart', async () => {
      const store = await open();
      expect(await store.claim('k:a', NOW)).toBe(true);
      expect(await store.claim('k:b', NOW)).toBe(true);
      await store.close();
    });
    it('prunes only entries that expired before the given time', async () => {
      const store = await open();
      await store.claim('old', NOW - 1);
      await store.claim('edge', NOW);
      expect(await store.prune(NOW)).toBe(1);
      expect(await store.claim('edge', NOW)).toBe(false);
      expect(await store.claim('old', NOW)).toBe(true);
      await store.close();
    });
  });
}

describe('SqliteNonceStore across restarts and processes', () => {
  it('remembers a nonce after the store is closed and opened again', () => {
    const path = join(fresh(), 'nonces.db');
    const first = new SqliteNonceStore(path);
    expect(first.claim('k:n', NOW + 1000)).toBe(true);
    first.close();
    const second = new SqliteNonceStore(path);
    expect(second.claim('k:n', NOW + 1000)).toBe(false);
    second.close();
  });
  it('says what to do when the file cannot be opened', () => {
    expect(() => new SqliteNonceStore(join(fresh(), 'missing-dir', 'x.db'))).toThrow(
      /Cannot open the nonce store .* writable SQLite file/,
    );
  });

  it('refuses in a second verifier process a receipt the first process accepted, and again after both exited', async () => {
    const verifyInChild = await childVerifier();
    const first = await verifyInChild();
    const second = await verifyInChild();
    expect(first).toMatchObject({ ok: true, codes: [] });
    expect(second).toMatchObject({ ok: false, codes: ['REPLAY'] });
    expect(second.pid).not.toBe(first.pid);
    // A restart: a new process on the same file still remembers.
    expect(await verifyInChild()).toMatchObject({ ok: false, codes: ['REPLAY'] });
  });
  it('lets exactly one of two processes racing on the same receipt accept it', async () => {
    const verifyInChild = await childVerifier();
    const results = await Promise.all([verifyInChild(), verifyInChild()]);
    expect(results.map((r) => r.ok).sort()).toEqual([false, true]);
    expect(results.find((r) => !r.ok)?.codes).toEqual(['REPLAY']);
  });
});

describe('PostgresNonceStore across verifier processes', () => {
  // A database per case: the receipts of two cases share nothing.
  async function withDatabase<T>(work: (url: string) => Promise<T>): Promise<T> {
    const db = await freshDatabase('nonce');
    try {
      return await work(db.url);
    } finally {
      await db.drop();
    }
  }
  it('refuses in a second verifier process a receipt the first accepted (REPLAY)', async () => {
    await withDatabase(async (url) => {
      const verify = await childVerifier(url);
      const first = await verify();
      const second = await verify();
      expect(first).toMatchObject({ ok: true, codes: [] });
      expect(second).toMatchObject({ ok: false, codes: ['REPLAY'] });
      expect(second.pid).not.toBe(first.pid);
    });
  });
  it('lets exactly one of 20 concurrent claims of one nonce succeed, each on its own connection', async () => {
    await withDatabase(async (url) => {
      const stores = await Promise.all(Array.from({ length: 20 }, () => PostgresNonceStore.open(url)));
      try {
        const won = await Promise.all(stores.map((s) => s.claim('k:same', NOW + 1000)));
        expect(won.filter(Boolean)).toHaveLength(1);
      } finally {
        await Promise.all(stores.map((s) => s.close()));
      }
    });
  });
  // Processes as well as connections (each child loads tsx, ~3 s of CPU here: 4, not 20).
  it('lets exactly one of 4 concurrent verifier processes accept the same receipt', async () => {
    await withDatabase(async (url) => {
      const verify = await childVerifier(url);
      const results = await Promise.all(Array.from({ length: 4 }, () => verify()));
      expect(results.filter((r) => r.ok)).toHaveLength(1);
      expect(results.filter((r) => !r.ok).every((r) => r.codes.join() === 'REPLAY')).toBe(true);
    });
  }, 120_000);
  it('opens one store from a URL through openNonceStore in two processes at once (the schema is created once)', async () => {
    await withDatabase(async (url) => {
      const [a, b] = await Promise.all([openNonceStore(url), openNonceStore(url)]);
      expect(await a?.claim('k:x', NOW)).toBe(true);
      expect(await b?.claim('k:x', NOW)).toBe(false);
      await a?.close();
      await b?.close();
    });
  });
  it('says what is wrong when the database cannot be reached', async () => {
    await expect(openNonceStore('postgres://127.0.0.1:1/none')).rejects.toThrow(
      /Cannot reach the nonce store at postgres:\/\/127\.0\.0\.1:1\/none: .*ECONNREFUSED/,
    );
  });
});
