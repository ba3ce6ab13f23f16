/**
 * The key `mailbox verify --key` is given is the key it checks with: one it cannot
 * read is an error (never a quiet fall back to the key mailbox.json names), and
 * another mailbox's key is one line saying so, not a forgery per receipt.
 */
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openStore } from '../../src/mailbox/index.js';
import { cli, makeMailbox } from './helpers.js';

async function withMail() {
  const mb = await makeMailbox(['alice', 'bob']);
  const store = await openStore(mb.dir);
  for (const body of ['one', 'two', 'three']) await store.send('alice', { to: 'bob', body });
  await store.close();
  return mb;
}

describe('mailbox verify --key', () => {
  it('a key file that does not exist is an error (exit 2), not a fall back to mailbox.json', async () => {
    const mb = await withMail();
    const missing = join(mb.dir, '..', 'nosuch.json');
    const { out, err } = await cli(['mailbox', 'verify', mb.dir, '--key', missing], 2);
    expect(out).toBe('');
    expect(err).toBe(
      `witness: The mailbox signing key ${missing} does not exist. Pass --key with the key created by \`witness mailbox init\`.\n`,
    );
  });

  it("another mailbox's key is one wrong_key line (exit 1) naming both keys", async () => {
    const mb = await withMail();
    const other = await makeMailbox(['x']);
    const { out } = await cli(['mailbox', 'verify', mb.dir, '--key', other.keyPath], 1);
    const lines = out.trim().split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(
      new RegExp(
        `^${other.keyPath}:0: wrong_key: this is not the mailbox's key: .* holds ed25519:[0-9a-f]{16}, the mailbox signs with ed25519:[0-9a-f]{16}`,
      ),
    );
    expect(lines[1]).toMatch(/^FAILED: .* 1 problem\(s\)/);
    const report = JSON.parse((await cli(['mailbox', 'verify', mb.dir, '--key', other.keyPath, '--json'], 1)).out);
    expect(report.problems.map((p: { code: string }) => p.code)).toEqual(['WRONG_KEY']);
  });

  it('mailbox.json naming another algorithm than its key file holds is one wrong_key line (exit 1)', async () => {
    const mb = await withMail();
    const configPath = join(mb.dir, 'mailbox.json');
    const config = JSON.parse(readFileSync(configPath, 'utf8'));
    writeFileSync(configPath, JSON.stringify({ ...config, signing: { ...config.signing, alg: 'hmac-sha256' } }));
    const { out } = await cli(['mailbox', 'verify', mb.dir], 1);
    expect(out).toMatch(
      /wrong_key: mailbox\.json says the mailbox signs with hmac-sha256, but .* holds an ed25519 key/,
    );
  });

  it('without --key, a missing default key still falls back to the public key in mailbox.json, with a warning', async () => {
    const mb = await withMail();
    rmSync(mb.keyPath);
    const { out, err } = await cli(['mailbox', 'verify', mb.dir], 0);
    expect(out).toMatch(/^OK: 3 call receipts, 3 messages, 0 problem\(s\)/);
    expect(err).toMatch(/not found: trusting the public key written in mailbox.json/);
  });
});
