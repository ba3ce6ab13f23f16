import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cli, sign, workspace } from './cli-helpers.js';
import { freshDatabase } from './postgres.js';

describe('witness keys', () => {
  it('writes the key file readable by its owner only', async () => {
    const cwd = await workspace();
    expect(statSync(join(cwd, 'child.key.json')).mode & 0o777).toBe(0o600);
  });
  it('refuses to overwrite an existing key file (exit 2)', async () => {
    const cwd = await workspace();
    const r = await cli(cwd, 'keys', 'new', '--deployer', 'x', '--out', 'child.key.json');
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/already exists/);
  });
  it('copies only the public part of a key file into the directory', async () => {
    const cwd = await workspace();
    const dir = readFileSync(join(cwd, 'trusted.json'), 'utf8');
    expect(dir).not.toContain(JSON.parse(readFileSync(join(cwd, 'child.key.json'), 'utf8')).d);
    const listed = JSON.parse((await cli(cwd, 'keys', 'list', '--dir', 'trusted.json', '--json')).out) as Array<{
      deployer: string;
      status: string;
    }>;
    expect(listed.map((k) => [k.deployer, k.status])).toEqual([
      ['org-parent', 'active'],
      ['org-child', 'active'],
    ]);
  });
  it('keys public writes the key file without its secret, which keys add trusts and a signature made with the key verifies against', async () => {
    const cwd = await workspace();
    const wrote = await cli(cwd, 'keys', 'public', 'child.key.json', '-o', 'child.pub.json');
    expect([wrote.code, wrote.err]).toEqual([0, '']);
    const key = JSON.parse(readFileSync(join(cwd, 'child.key.json'), 'utf8'));
    const pub = JSON.parse(readFileSync(join(cwd, 'child.pub.json'), 'utf8'));
    const { d: _secret, ...expected } = key;
    expect(pub).toEqual(expected);
    expect((await cli(cwd, 'keys', 'public', 'child.key.json')).out).toBe(
      readFileSync(join(cwd, 'child.pub.json'), 'utf8'),
    );
    expect((await cli(cwd, 'keys', 'add', 'child.pub.json', '--dir', 'fresh.json')).code).toBe(0);
    await sign(cwd, 'r.json', '--key', 'child.key.json', '--output', 'answer.txt');
    expect((await cli(cwd, 'verify', 'r.json', '--output', 'answer.txt', '--keys', 'fresh.json')).code).toBe(0);
    const again = await cli(cwd, 'keys', 'public', 'child.key.json', '-o', 'child.pub.json');
    expect([again.code, again.err]).toEqual([2, expect.stringMatching(/already exists/)]);
  });
  it('refuses a key file that others can read, saying how to fix it', async () => {
    const cwd = await workspace();
    const { chmodSync } = await import('node:fs');
    chmodSync(join(cwd, 'child.key.json'), 0o644);
    const r = await cli(cwd, 'attest', 'sign', '--key', 'child.key.json', '--output', 'answer.txt');
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/chmod 600/);
  });
  it('names the problem in a damaged key file: not JSON, or a private part that does not match', async () => {
    const cwd = await workspace();
    const { chmodSync } = await import('node:fs');
    writeFileSync(join(cwd, 'broken.key.json'), '{"v": 1,', { mode: 0o600 });
    const notJson = await cli(cwd, 'attest', 'sign', '--key', 'broken.key.json', '--output', 'answer.txt');
    expect([notJson.code, notJson.err]).toEqual([
      2,
      expect.stringMatching(/broken\.key\.json is not valid JSON at line 1/),
    ]);
    const child = JSON.parse(readFileSync(join(cwd, 'child.key.json'), 'utf8'));
    const parent = JSON.parse(readFileSync(join(cwd, 'parent.key.json'), 'utf8'));
    writeFileSync(join(cwd, 'mixed.key.json'), JSON.stringify({ ...child, d: parent.d }));
    chmodSync(join(cwd, 'mixed.key.json'), 0o600);
    const mixed = await cli(cwd, 'attest', 'sign', '--key', 'mixed.key.json', '--output', 'answer.txt');
    expect([mixed.code, mixed.err]).toEqual([
      2,
      expect.stringMatching(/private key \(d\) does not belong to the public key/),
    ]);
  });
  it('rotates a key: the old key no longer signs validly, the new one does', async () => {
    const cwd = await workspace();
    const oldKid = JSON.parse(readFileSync(join(cwd, 'child.key.json'), 'utf8')).kid as string;
    expect((await cli(cwd, 'keys', 'new', '--deployer', 'org-child', '--out', 'child2.key.json')).code).toBe(0);
    const rotated = await cli(
      cwd,
      'keys',
      'rotate',
      oldKid,
      'child2.key.json',
      '--dir',
      'trusted.json',
      '--at',
      '2025-01-01T00:00:00Z',
      '--days',
      '36500',
    );
    expect(rotated.code, rotated.err).toBe(0);
    await sign(cwd, 'old.json', '--key', 'child.key.json', '--output', 'answer.txt');
    await sign(cwd, 'new.json', '--key', 'child2.key.json', '--output', 'answer.txt');
    expect((await cli(cwd, 'verify', 'old.json', '--output', 'answer.txt', '--keys', 'trusted.json')).out).toMatch(
      /KEY_NOT_VALID_AT_ISSUE/,
    );
    expect((await cli(cwd, 'verify', 'new.json', '--output', 'answer.txt', '--keys', 'trusted.json')).code).toBe(0);
  });
  it('names the problem in a damaged key directory (exit 2)', async () => {
    const cwd = await workspace();
    writeFileSync(join(cwd, 'bad.json'), '{"v":1,"keys":[{"kid":"x"}]}');
    await sign(cwd, 'r.json', '--key', 'child.key.json', '--output', 'answer.txt');
    const r = await cli(cwd, 'verify', 'r.json', '--output', 'answer.txt', '--keys', 'bad.json');
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/bad\.json is not a key directory: keys\.0\./);
  });
});

describe('witness attest sign and witness verify', () => {
  it('signs an output and verifies it: exit 0', async () => {
    const cwd = await workspace();
    await sign(cwd, 'r.json', '--key', 'child.key.json', '--output', 'answer.txt');
    const r = await cli(cwd, 'verify', 'r.json', '--output', 'answer.txt', '--keys', 'trusted.json');
    expect([r.code, r.out]).toEqual([0, expect.stringMatching(/^valid: 11 bytes/)]);
  });
  it('prints the reasons and exits 1 when the output was changed', async () => {
    const cwd = await workspace();
    await sign(cwd, 'r.json', '--key', 'child.key.json', '--output', 'answer.txt');
    writeFileSync(join(cwd, 'answer.txt'), 'the summarY');
    const r = await cli(cwd, 'verify', 'r.json', '--output', 'answer.txt', '--keys', 'trusted.json', '--json');
    expect(r.code).toBe(1);
    expect(JSON.parse(r.out)).toMatchObject({
      ok: false,
      type: 'output',
      legacy: false,
      problems: [{ code: 'OUTPUT_MISMATCH' }],
    });
  });
  it('reports REPLAY for the second verification sharing a --nonces store', async () => {
    const cwd = await workspace();
    await sign(cwd, 'r.json', '--key', 'child.key.json', '--output', 'answer.txt');
    const args = ['verify', 'r.json', '--output', 'answer.txt', '--keys', 'trusted.json', '--nonces', 'nonces.db'];
    expect((await cli(cwd, ...args)).code).toBe(0);
    const again = await cli(cwd, ...args);
    expect([again.code, again.out]).toEqual([1, expect.stringMatching(/REPLAY/)]);
  });
  it('prunes the --nonces store by the real clock, never by --now: an accepted receipt stays a REPLAY after a future audit', async () => {
    const cwd = await workspace();
    await sign(cwd, 'r.json', '--key', 'child.key.json', '--output', 'answer.txt');
    await sign(cwd, 'r2.json', '--key', 'child.key.json', '--output', 'answer.txt');
    const args = ['--output', 'answer.txt', '--keys', 'trusted.json', '--nonces', 'nonces.db'];
    expect((await cli(cwd, 'verify', 'r.json', ...args)).code).toBe(0);
    const future = new Date(Date.now() + 2 * 86_400_000).toISOString();
    expect((await cli(cwd, 'verify', 'r2.json', ...args, '--now', future)).out).toMatch(/EXPIRED/);
    const again = await cli(cwd, 'verify', 'r.json', ...args);
    expect([again.code, again.out]).toEqual([1, expect.stringMatching(/REPLAY/)]);
  });
  it('is a usage error (exit 2) when the --nonces store cannot be opened', async () => {
    const cwd = await workspace();
    await sign(cwd, 'r.json', '--key', 'child.key.json', '--output', 'answer.txt');
    const r = await cli(
      cwd,
      'verify',
      'r.json',
      '--output',
      'answer.txt',
      '--keys',
      'trusted.json',
      '--nonces',
      'no-such-dir/n.db',
    );
    expect([r.code, r.err]).toEqual([2, expect.stringMatching(/--nonces: Cannot open the nonce store/)]);
  });
  it('reports REPLAY for the second verification sharing a PostgreSQL --nonces store, named by URL or by WITNESS_DATABASE_URL', async () => {
    const db = await freshDatabase('cli');
    const saved = process.env.WITNESS_DATABASE_URL;
    try {
      const cwd = await workspace();
      await sign(cwd, 'r.json', '--key', 'child.key.json', '--output', 'answer.txt');
      const args = ['verify', 'r.json', '--output', 'answer.txt', '--keys', 'trusted.json', '--nonces'];
      const first = await cli(cwd, ...args, db.url);
      expect([first.code, first.err]).toEqual([0, '']);
      process.env.WITNESS_DATABASE_URL = db.url;
      const again = await cli(cwd, ...args, 'postgres');
      expect([again.code, again.out]).toEqual([1, expect.stringMatching(/REPLAY/)]);
      delete process.env.WITNESS_DATABASE_URL;
      const unset = await cli(cwd, ...args, 'postgres');
      expect([unset.code, unset.err]).toEqual([
        2,
        expect.stringMatching(/--nonces postgres reads the database URL from WITNESS_DATABASE_URL, which is not set/),
      ]);
      const down = await cli(cwd, ...args, 'postgres://127.0.0.1:1/none');
      expect([down.code, down.err]).toEqual([
        2,
        expect.stringMatching(/--nonces: Cannot reach the nonce store at postgres:\/\/127\.0\.0\.1:1\/none/),
      ]);
    } finally {
      if (saved === undefined) delete process.env.WITNESS_DATABASE_URL;
      else process.env.WITNESS_DATABASE_URL = saved;
      await db.drop();
    }
  });
  it('builds and verifies a dag delegation with the parent co-signature', async () => {
    const cwd = await workspace();
    await sign(cwd, 'task.json', '--key', 'parent.key.json', '--output', 'task.txt', '--construction', 'dag');
    await sign(
      cwd,
      'answer.json',
      '--key',
      'child.key.json',
      '--output',
      'answer.txt',
      '--parent',
      'task.json',
      '--construction',
      'dag',
      '--cosign-key',
      'parent.key.json',
    );
    const r = await cli(
      cwd,
      'verify',
      'answer.json',
      '--output',
      'answer.txt',
      '--keys',
      'trusted.json',
      '--construction',
      'dag',
    );
    expect([r.code, r.out]).toEqual([0, expect.stringMatching(/at depth 1 of a dag path/)]);
  });
  it('refuses a chain answer when the verifier pins dag', async () => {
    const cwd = await workspace();
    await sign(cwd, 'task.json', '--key', 'parent.key.json', '--output', 'task.txt');
    await sign(cwd, 'answer.json', '--key', 'child.key.json', '--output', 'answer.txt', '--parent', 'task.json');
    const r = await cli(
      cwd,
      'verify',
      'answer.json',
      '--output',
      'answer.txt',
      '--keys',
      'trusted.json',
      '--construction',
      'dag',
    );
    expect([r.code, r.out]).toEqual([1, expect.stringMatching(/CONSTRUCTION_MISMATCH/)]);
  });
  it('is a usage error to sign a dag edge without the parent co-signing key, or with another deployer key', async () => {
    const cwd = await workspace();
    await sign(cwd, 'task.json', '--key', 'parent.key.json', '--output', 'task.txt', '--construction', 'dag');
    const missing = await cli(
      cwd,
      'attest',
      'sign',
      '--key',
      'child.key.json',
      '--output',
      'answer.txt',
      '--parent',
      'task.json',
      '--construction',
      'dag',
    );
    expect([missing.code, missing.err]).toEqual([2, expect.stringMatching(/--cosign-key/)]);
    const wrong = await cli(
      cwd,
      'attest',
      'sign',
      '--key',
      'child.key.json',
      '--output',
      'answer.txt',
      '--parent',
      'task.json',
      '--construction',
      'dag',
      '--cosign-key',
      'child.key.json',
    );
    expect([wrong.code, wrong.err]).toEqual([
      2,
      expect.stringMatching(/belongs to org-child, but the parent receipt was released by org-parent/),
    ]);
  });
  it('answers MALFORMED, exit 1, for a receipt with a missing field', async () => {
    const cwd = await workspace();
    await sign(cwd, 'r.json', '--key', 'child.key.json', '--output', 'answer.txt');
    const receipt = JSON.parse(readFileSync(join(cwd, 'r.json'), 'utf8'));
    delete receipt.nonce;
    writeFileSync(join(cwd, 'r.json'), JSON.stringify(receipt));
    const r = await cli(cwd, 'verify', 'r.json', '--output', 'answer.txt', '--keys', 'trusted.json');
    expect([r.code, r.out]).toEqual([1, expect.stringMatching(/MALFORMED\s+receipt\.nonce/)]);
  });
  it('is a usage error to sign under a parent file that is not a receipt, naming the problem', async () => {
    const cwd = await workspace();
    writeFileSync(join(cwd, 'bad.json'), '{"v":1,"v":1}');
    const r = await cli(
      cwd,
      'attest',
      'sign',
      '--key',
      'child.key.json',
      '--output',
      'answer.txt',
      '--parent',
      'bad.json',
    );
    expect([r.code, r.err]).toEqual([2, expect.stringMatching(/NON_CANONICAL: .*duplicate key "v"/)]);
  });
  it('verifies a receipt after the key was revoked before issue as REVOKED_KEY', async () => {
    const cwd = await workspace();
    const kid = JSON.parse(readFileSync(join(cwd, 'child.key.json'), 'utf8')).kid as string;
    expect((await cli(cwd, 'keys', 'revoke', kid, '--dir', 'trusted.json', '--at', '2021-01-01T00:00:00Z')).code).toBe(
      0,
    );
    await sign(cwd, 'r.json', '--key', 'child.key.json', '--output', 'answer.txt');
    const r = await cli(cwd, 'verify', 'r.json', '--output', 'answer.txt', '--keys', 'trusted.json');
    expect([r.code, r.out]).toEqual([1, expect.stringMatching(/REVOKED_KEY/)]);
  });
});

describe('witness attest export and matrix', () => {
  it('exports a DSSE envelope that witness verify accepts', async () => {
    const cwd = await workspace();
    await sign(cwd, 'r.json', '--key', 'child.key.json', '--output', 'answer.txt');
    const exported = await cli(
      cwd,
      'attest',
      'export',
      'r.json',
      '--format',
      'dsse',
      '--key',
      'child.key.json',
      '--name',
      'answer.txt',
    );
    expect(exported.code).toBe(0);
    expect(JSON.parse(exported.out).payloadType).toBe('application/vnd.in-toto+json');
    writeFileSync(join(cwd, 'env.json'), exported.out);
    expect((await cli(cwd, 'verify', 'env.json', '--output', 'answer.txt', '--keys', 'trusted.json')).code).toBe(0);
  });
  it('does not let a DSSE envelope with a zeroed signature burn the nonce of the genuine receipt inside (shared --nonces)', async () => {
    const cwd = await workspace();
    await sign(cwd, 'r.json', '--key', 'child.key.json', '--output', 'answer.txt');
    const envelope = JSON.parse((await cli(cwd, 'attest', 'export', 'r.json', '--key', 'child.key.json')).out);
    writeFileSync(
      join(cwd, 'zeroed.json'),
      JSON.stringify({
        ...envelope,
        signatures: [{ keyid: envelope.signatures[0].keyid, sig: Buffer.alloc(64).toString('base64') }],
      }),
    );
    const args = ['--output', 'answer.txt', '--keys', 'trusted.json', '--nonces', 'nonces.db'];
    const forged = await cli(cwd, 'verify', 'zeroed.json', ...args);
    expect([forged.code, forged.out]).toEqual([1, expect.stringMatching(/BAD_SIGNATURE/)]);
    const genuine = await cli(cwd, 'verify', 'r.json', ...args);
    expect([genuine.code, genuine.out]).toEqual([0, expect.stringMatching(/^valid/)]);
  });
  it('prints the adversary matrix and exits 0 when every cell is as expected', async () => {
    const r = await cli(tmpdir(), 'attest', 'matrix');
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/child key only: claims a parent\s+accepted\s+accepted\s+rejected COSIGNATURE_MISSING/);
    expect(r.out).toMatch(/0 unexpected/);
  });
  it('prints the matrix cells as JSON with --json', async () => {
    const cells = JSON.parse((await cli(tmpdir(), 'attest', 'matrix', '--json')).out) as Array<{ asExpected: boolean }>;
    expect(cells.length).toBeGreaterThan(100);
    expect(cells.every((c) => c.asExpected)).toBe(true);
  });
  for (const command of [
    ['attest', 'sign'],
    ['attest', 'export'],
    ['attest', 'matrix'],
    ['verify'],
    ['keys', 'new'],
    ['keys', 'add'],
    ['keys', 'revoke'],
    ['keys', 'rotate'],
    ['keys', 'list'],
  ]) {
    it(`shows an example in witness ${command.join(' ')} --help`, async () => {
      const r = await cli(tmpdir(), ...command, '--help');
      expect(r.code).toBe(0);
      expect(r.out).toMatch(/Example:\n\s+\$ witness /);
    });
  }
});
