import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeDirectoryFile } from '../../src/attest/key-directory.js';
import { newSigningKey, writeKeyFile } from '../../src/attest/keys.js';
import { startWorld, trust, type World } from './helpers.js';
import { runCli } from '../support/cli.js';

let world: World;
let dir: string;
beforeAll(async () => {
  world = await startWorld();
  dir = mkdtempSync(join(tmpdir(), 'witness-a2a-cli-'));
  writeDirectoryFile(join(dir, 'trusted.json'), world.file);
  writeDirectoryFile(join(dir, 'other.json'), trust([newSigningKey('org-other')]).file);
  writeKeyFile(join(dir, 'child.key.json'), world.child);
  writeKeyFile(join(dir, 'parent.key.json'), world.parent);
});
afterAll(async () => {
  await world.close();
  rmSync(dir, { recursive: true, force: true });
});

const cli = (...argv: string[]) => runCli(argv, dir);

describe('witness a2a card verify', () => {
  it('exits 0 for a card signed by a key in your directory', async () => {
    const { code, out } = await cli('a2a', 'card', 'verify', world.agent.url, '--keys', 'trusted.json');
    expect(code).toBe(0);
    expect(out).toBe(`valid: the card is signed by ${world.child.kid}, which your directory trusts for org-child.\n`);
  });

  it('exits 1 with CARD_UNKNOWN_KEY when your directory does not hold the signing key', async () => {
    const { code, out } = await cli(
      'a2a',
      'card',
      'verify',
      `${world.agent.url}/.well-known/agent-card.json`,
      '--keys',
      'other.json',
    );
    expect(code).toBe(1);
    expect(out).toMatch(/CARD_UNKNOWN_KEY/);
  });

  it('prints {ok, kid, deployer, reasons} with --json', async () => {
    const { out } = await cli('a2a', 'card', 'verify', world.agent.url, '--keys', 'trusted.json', '--json');
    expect(JSON.parse(out)).toEqual({ ok: true, reasons: [], kid: world.child.kid, deployer: 'org-child' });
  });

  it('checks a card file, and exits 1 when it was edited', async () => {
    writeFileSync(join(dir, 'card.json'), JSON.stringify({ ...world.agent.card, name: 'edited' }));
    const { code, out } = await cli('a2a', 'card', 'verify', 'card.json', '--keys', 'trusted.json');
    expect(code).toBe(1);
    expect(out).toMatch(/CARD_BAD_SIGNATURE/);
  });

  it('exits 2 for a card file that is not JSON', async () => {
    writeFileSync(join(dir, 'broken.json'), '{"name": ');
    const { code, err } = await cli('a2a', 'card', 'verify', 'broken.json', '--keys', 'trusted.json');
    expect(code).toBe(2);
    expect(err).toMatch(/broken.json is not valid JSON at line 1/);
  });

  it('exits 1 saying the agent may not be running when nothing answers', async () => {
    const { code, err } = await cli('a2a', 'card', 'verify', 'http://127.0.0.1:1', '--keys', 'trusted.json');
    expect(code).toBe(1);
    expect(err).toMatch(/Is the agent running/);
  });
});

describe('witness a2a options', () => {
  it('refuses a --cosigner that is not DEPLOYER=URL', async () => {
    const { code, err } = await cli(
      'a2a',
      'serve',
      '--key',
      'child.key.json',
      '--tool',
      world.tool.url,
      '--cosigner',
      'org-parent',
    );
    expect(code).toBe(2);
    expect(err).toMatch(/must be DEPLOYER=URL/);
  });

  it('asks for --endpoint and --model before starting an LLM child', async () => {
    const { code, err } = await cli('a2a', 'bench', '--agent', 'llm', '--out', 'x.json');
    expect(code).toBe(2);
    expect(err).toMatch(/--agent llm needs --endpoint URL/);
  });

  it('asks for the GGUF file of an embedded child instead of starting a policy one', async () => {
    const { code, err } = await cli('a2a', 'bench', '--agent', 'embedded', '--out', 'x.json');
    expect(code).toBe(2);
    expect(err).toMatch(/--agent embedded needs --model FILE\.gguf/);
  });

  it('refuses --endpoint and --model where the backend does not use them', async () => {
    const endpoint = await cli(
      'a2a',
      'serve',
      '--key',
      'child.key.json',
      '--tool',
      world.tool.url,
      '--endpoint',
      'http://127.0.0.1:8000/v1',
    );
    expect([endpoint.code, endpoint.err]).toEqual([2, expect.stringMatching(/--endpoint applies only to --agent llm/)]);
    const model = await cli('a2a', 'bench', '--model', 'x.gguf', '--out', 'x.json');
    expect([model.code, model.err]).toEqual([
      2,
      expect.stringMatching(/--model applies only to --agent llm or embedded/),
    ]);
  });

  it.each(['serve', 'cosigner', 'tool', 'bench'])('shows an example in `witness a2a %s --help`', async (sub) => {
    const { code, out } = await cli('a2a', sub, '--help');
    expect(code).toBe(0);
    expect(out).toMatch(new RegExp(`Example:\\n  \\$ witness a2a ${sub}`));
  });
});

describe('witness a2a servers: bad addresses and files are one line with the documented exit status', () => {
  /** One line on stderr, no stack trace, no "internal error". */
  const oneLine = (err: string) => {
    expect(err.trim().split('\n')).toHaveLength(1);
    expect(err).not.toMatch(/internal error|\n\s+at /);
  };
  const servers = (): string[][] => [
    ['a2a', 'tool'],
    ['a2a', 'cosigner', '--key', 'parent.key.json'],
    ['a2a', 'serve', '--key', 'child.key.json', '--tool', world.tool.url],
  ];

  it('--port 70000: exit 2', async () => {
    for (const args of servers()) {
      const r = await cli(...args, '--port', '70000');
      expect([r.code, r.err], args.join(' ')).toEqual([2, expect.stringMatching(/"70000" is not a TCP port/)]);
      oneLine(r.err);
    }
  });

  it('a --host that is not a host name: exit 2', async () => {
    for (const args of servers()) {
      const r = await cli(...args, '--host', 'not a host');
      expect([r.code, r.err], args.join(' ')).toEqual([2, expect.stringMatching(/is not a host name or IP address/)]);
      oneLine(r.err);
    }
  });

  it('a port in use: exit 2, saying so', async () => {
    const port = new URL(world.tool.url).port;
    for (const args of servers()) {
      const r = await cli(...args, '--port', port);
      expect([r.code, r.err], args.join(' ')).toEqual([2, expect.stringMatching(/already in use/)]);
      oneLine(r.err);
    }
  });

  it('a directory as the admin token file or the key: exit 2, naming the file', async () => {
    mkdirSync(join(dir, 'a-dir'), { recursive: true });
    const token = await cli('a2a', 'cosigner', '--key', 'parent.key.json', '--admin-token-file', 'a-dir');
    expect([token.code, token.err]).toEqual([2, expect.stringMatching(/admin token file .*a-dir is a directory/)]);
    oneLine(token.err);
    const key = await cli('a2a', 'cosigner', '--key', 'a-dir');
    expect([key.code, key.err]).toEqual([2, expect.stringMatching(/key file .*a-dir is a directory/)]);
  });

  it('a missing admin token file is created (mode 0600, a random token) and named on stderr; an existing one is read, never replaced', async () => {
    const port = new URL(world.tool.url).port; // in use: the server stops after the token file is settled
    const first = await cli(
      'a2a',
      'cosigner',
      '--key',
      'parent.key.json',
      '--admin-token-file',
      'new-grants.token',
      '--port',
      port,
    );
    expect(first.err).toMatch(/Created the admin token file .*new-grants\.token \(mode 0600\)/);
    const path = join(dir, 'new-grants.token');
    const token = readFileSync(path, 'utf8');
    expect(token).toMatch(/^[A-Za-z0-9_-]{32}\n$/);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    const second = await cli(
      'a2a',
      'cosigner',
      '--key',
      'parent.key.json',
      '--admin-token-file',
      'new-grants.token',
      '--port',
      port,
    );
    expect(second.err).not.toMatch(/Created/);
    expect(readFileSync(path, 'utf8')).toBe(token);
  });

  it('a2a bench --out naming a directory or a missing folder: exit 2 before any trial runs', async () => {
    mkdirSync(join(dir, 'out-dir'), { recursive: true });
    const directory = await cli('a2a', 'bench', '--out', 'out-dir');
    expect([directory.code, directory.err]).toEqual([2, expect.stringMatching(/out-dir exists and is a directory/)]);
    const missing = await cli('a2a', 'bench', '--out', 'no-such-folder/r.json');
    expect([missing.code, missing.err]).toEqual([2, expect.stringMatching(/folder .*no-such-folder does not exist/)]);
  });

  it('--max-request-bytes 0: exit 2; --help gives each server its own default', async () => {
    const defaults: Record<string, string> = { tool: '1048576', cosigner: '65536', serve: '1048576' };
    for (const args of servers()) {
      const r = await cli(...args, '--max-request-bytes', '0');
      expect([r.code, r.err], args.join(' ')).toEqual([
        2,
        expect.stringMatching(/--max-request-bytes.*below the minimum of 1/),
      ]);
      oneLine(r.err);
      const help = await cli('a2a', args[1]!, '--help');
      expect(help.out.replace(/\s+/g, ' '), args[1]).toContain(
        `a larger one is refused with 413 (default ${defaults[args[1]!]})`,
      );
    }
  });

  it('--task-store postgres without WITNESS_DATABASE_URL: exit 2, naming the variable', async () => {
    const saved = process.env.WITNESS_DATABASE_URL;
    delete process.env.WITNESS_DATABASE_URL;
    try {
      const r = await cli(...servers()[2]!, '--task-store', 'postgres');
      expect([r.code, r.err]).toEqual([2, expect.stringMatching(/--task-store postgres reads .*WITNESS_DATABASE_URL/)]);
      oneLine(r.err);
    } finally {
      if (saved !== undefined) process.env.WITNESS_DATABASE_URL = saved;
    }
  });

  it('a --task-store file that cannot be opened: exit 1, one line naming it and what to give', async () => {
    const r = await cli(...servers()[2]!, '--task-store', 'no-such-folder/tasks.sqlite');
    expect([r.code, r.err]).toEqual([
      1,
      expect.stringMatching(/Cannot open the task store .*no-such-folder\/tasks\.sqlite.*writable SQLite file/),
    ]);
    oneLine(r.err);
  });

  it('binding beyond loopback without --allowed-host: exit 2', async () => {
    const r = await cli('a2a', 'tool', '--host', '0.0.0.0');
    expect([r.code, r.err]).toEqual([2, expect.stringMatching(/pass --allowed-host NAME/)]);
  });
});

describe('src/a2a dependencies', () => {
  it('import only core, attest, mailbox and llm among our modules', () => {
    const src = join(import.meta.dirname, '../../src');
    const root = join(src, 'a2a');
    const offending: string[] = [];
    for (const name of readdirSync(root, { recursive: true }) as string[]) {
      if (!name.endsWith('.ts')) continue;
      const text = readFileSync(join(root, name), 'utf8');
      for (const m of text.matchAll(/from '(\.\.?\/[^']+)'/g)) {
        const module = relative(src, resolve(dirname(join(root, name)), m[1] ?? '')).split(sep)[0];
        if (!['a2a', 'core', 'attest', 'mailbox', 'llm'].includes(module ?? '')) offending.push(`${name}: ${m[0]}`);
      }
    }
    expect(offending).toEqual([]);
  });
});
