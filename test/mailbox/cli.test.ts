/**
 * The `witness mailbox` command line: help with examples, init and its key, agents,
 * and `tail` following messages as they arrive.
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openStore } from '../../src/mailbox/index.js';
import { cli, makeMailbox, tempDir, waitFor, witnessCommand } from './helpers.js';

describe('witness mailbox CLI', () => {
  for (const sub of ['init', 'add-agent', 'serve', 'verify', 'install', 'tail', 'recover']) {
    it(`mailbox ${sub} --help shows an example`, async () => {
      const { out } = await cli(['mailbox', sub, '--help']);
      expect(out).toMatch(/Example/);
      expect(out).toContain(`witness mailbox ${sub}`);
    });
  }

  it('init creates the store and a 0600 key at --key, outside the mailbox', async () => {
    const root = tempDir();
    const { out } = await cli(['mailbox', 'init', join(root, 'mb'), '--key', join(root, 'secret', 'k.json'), '--json']);
    const config = JSON.parse(out) as { store: string; signing: { key_path: string; alg: string } };
    expect(config.signing.key_path).toBe(join(root, 'secret', 'k.json'));
    expect(config.signing.alg).toBe('ed25519');
    expect(statSync(config.signing.key_path).mode & 0o777).toBe(0o600);
    for (const f of ['agents.json', 'inbox', 'cursors', 'mailbox.json'])
      expect(existsSync(join(root, 'mb', f))).toBe(true);
    expect(readFileSync(join(root, 'mb', 'mailbox.json'), 'utf8')).not.toContain('"secret"');
  });

  it('init refuses to overwrite an existing mailbox', async () => {
    const mb = await makeMailbox([]);
    const { err } = await cli(['mailbox', 'init', mb.dir, '--key', join(tempDir(), 'k2.json')], 2);
    expect(err).toMatch(/already holds a mailbox/);
  });

  it('init with --alg hmac-sha256 gives a mailbox whose receipts verify', async () => {
    const mb = await makeMailbox(['a', 'b'], { alg: 'hmac-sha256' });
    const store = await openStore(mb.dir);
    await store.send('a', { to: 'b', body: 'x' });
    await store.close();
    const report = JSON.parse((await cli(['mailbox', 'verify', mb.dir, '--json'])).out) as {
      ok: boolean;
      key: { alg: string };
    };
    expect(report).toMatchObject({ ok: true, key: { alg: 'hmac-sha256' } });
  });

  it('add-agent prints a token once and stores only its hash', async () => {
    const mb = await makeMailbox(['alice']);
    const agents = readFileSync(join(mb.dir, 'agents.json'), 'utf8');
    expect(mb.tokens.alice).toMatch(/^wmb_/);
    expect(agents).not.toContain(mb.tokens.alice!);
    expect(agents).toContain('token_sha256');
  });

  it('add-agent refuses a name that is already registered', async () => {
    const mb = await makeMailbox(['alice']);
    expect((await cli(['mailbox', 'add-agent', mb.dir, 'alice'], 2)).err).toMatch(/already registered/);
  });

  it('serve without --agent or --http says how to choose', async () => {
    const mb = await makeMailbox(['alice']);
    const saved = process.env.WITNESS_MAILBOX_AGENT;
    delete process.env.WITNESS_MAILBOX_AGENT;
    try {
      expect((await cli(['mailbox', 'serve', '--dir', mb.dir], 2)).err).toMatch(/--agent NAME.*--http/);
    } finally {
      if (saved !== undefined) process.env.WITNESS_MAILBOX_AGENT = saved;
    }
  });

  it('a command on a folder that is not a mailbox says how to create one', async () => {
    expect((await cli(['mailbox', 'verify', tempDir()], 2)).err).toMatch(/not a mailbox.*witness mailbox init/);
  });

  it('tail prints each message as it is stored', async () => {
    const mb = await makeMailbox(['a', 'b']);
    const [command, ...args] = witnessCommand();
    const proc = spawn(command!, [...args, 'mailbox', 'tail', mb.dir, '--json'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    proc.stdout.on('data', (d: Buffer) => {
      out += d.toString();
    });
    let err = '';
    proc.stderr.on('data', (d: Buffer) => {
      err += d.toString();
    });
    const store = await openStore(mb.dir);
    try {
      // tail starts with what is already there and shows only newer messages; keep sending until one shows.
      const sent: string[] = [];
      await waitFor(
        async () => {
          sent.push((await store.send('a', { to: 'b', body: `live ${sent.length}` })).id);
          return out.includes('"body":"live');
        },
        75_000,
        () => 'tail to print a message',
      );
      const shown = out
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { id: string; from: string; to: string });
      expect(shown.every((m) => sent.includes(m.id) && m.from === 'a' && m.to === 'b')).toBe(true);
      expect(err).toMatch(
        /^Waiting for new messages in .* \(those already stored are shown with --all\); Ctrl-C stops\.\n$/,
      ); // on stderr: stdout stays JSON lines
    } finally {
      proc.kill();
      await store.close();
    }
  }, 90_000);
});
