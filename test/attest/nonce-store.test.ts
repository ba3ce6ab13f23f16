import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { writeDirectoryFile } from '../../src/attest/key-directory.js';
import { MemoryNonceStore, type NonceStore, SqliteNonceStore } from '../../src/attest/nonce-store.js';
import { keysFor, NOW, signerAt, trust } from './helpers.js';

const run = promisify(execFile);
const fresh = () => mkdtempSync(join(tmpdir(), 'witness-nonce-'));

// One suite, every implementation (STYLE.md): both stores keep the same contract.
const implementations: Array<[string, () => NonceStore]> = [
  ['MemoryNonceStore', () => new MemoryNonceStore()],
  ['SqliteNonceStore', () => new SqliteNonceStore(join(fresh(), 'nonces.db'))],
];

for (const [name, open] of implementations) {
  describe(name, () => {
    it('accepts a nonce the first time and refuses it the second', async () => {
      const store = open();
      expect(await store.claim('k:n1', NOW + 1000)).toBe(true);
      expect(await store.claim('k:n1', NOW + 1000)).toBe(false);
      store.close();
    });
    it('keeps different nonces apart', async () => {
      const store = open();
      expect(await store.claim('k:a', NOW)).toBe(true);
      expect(await store.claim('k:b', NOW)).toBe(true);
      store.close();
    });
    it('prunes only entries that expired before the given time', async () => {
      const store = open();
      await store.claim('old', NOW - 1);
      await store.claim('edge', NOW);
      expect(await store.prune(NOW)).toBe(1);
      expect(await store.claim('edge', NOW)).toBe(false);
      expect(await store.claim('old', NOW)).toBe(true);
      store.close();
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
    expect(() => new SqliteNonceStore(join(fresh(), 'missing-dir', 'x.db'))).toThrow(/Cannot open the nonce store .* writable SQLite file/);
  });

  async function setup() {
    const dir = fresh();
    const [key] = keysFor('org-a');
    if (!key) throw new Error('no key');
    writeDirectoryFile(join(dir, 'keys.json'), trust([key]).file);
    const output = Buffer.from('the released output');
    writeFileSync(join(dir, 'out.bin'), output);
    writeFileSync(join(dir, 'receipt.json'), JSON.stringify(await signerAt(key, NOW).releaseOutput(output)));
    const args = [join(import.meta.dirname, '..', 'fixtures', 'attest', 'verify-process.ts'), join(dir, 'receipt.json'), join(dir, 'out.bin'), join(dir, 'keys.json'), join(dir, 'nonces.db'), String(NOW)];
    const verifyInChild = async () => JSON.parse((await run(process.execPath, ['--import', 'tsx', ...args], { cwd: join(import.meta.dirname, '..', '..') })).stdout) as { pid: number; ok: boolean; codes: string[] };
    return { dir, verifyInChild };
  }

  it('refuses in a second verifier process a receipt the first process accepted, and again after both exited', async () => {
    const { verifyInChild } = await setup();
    const first = await verifyInChild();
    const second = await verifyInChild();
    expect(first).toMatchObject({ ok: true, codes: [] });
    expect(second).toMatchObject({ ok: false, codes: ['REPLAY'] });
    expect(second.pid).not.toBe(first.pid);
    // A restart: a new process on the same file still remembers.
    expect(await verifyInChild()).toMatchObject({ ok: false, codes: ['REPLAY'] });
  });
  it('lets exactly one of two processes racing on the same receipt accept it', async () => {
    const { verifyInChild } = await setup();
    const results = await Promise.all([verifyInChild(), verifyInChild()]);
    expect(results.map((r) => r.ok).sort()).toEqual([false, true]);
    expect(results.find((r) => !r.ok)?.codes).toEqual(['REPLAY']);
  });
});
