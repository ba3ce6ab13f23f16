import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeDirectoryFile } from '../../src/attest/key-directory.js';
import { newSigningKey, writeKeyFile } from '../../src/attest/keys.js';
import { memoryIo } from '../../src/cli/io.js';
import { runMain } from '../../src/cli/main.js';
import { startWorld, trust, type World } from './helpers.js';

let world: World;
let dir: string;
beforeAll(async () => {
  world = await startWorld();
  dir = mkdtempSync(join(tmpdir(), 'witness-a2a-cli-'));
  writeDirectoryFile(join(dir, 'trusted.json'), world.file);
  writeDirectoryFile(join(dir, 'other.json'), trust([newSigningKey('org-other')]).file);
  writeKeyFile(join(dir, 'child.key.json'), world.child);
});
afterAll(async () => {
  await world.close();
  rmSync(dir, { recursive: true, force: true });
});

async function cli(...argv: string[]) {
  const io = memoryIo(dir);
  const code = await runMain(argv, io);
  return { code, out: io.out, err: io.err };
}

describe('witness a2a card verify', () => {
  it('exits 0 for a card signed by a key in your directory', async () => {
    const { code, out } = await cli('a2a', 'card', 'verify', world.agent.url, '--keys', 'trusted.json');
    expect(code).toBe(0);
    expect(out).toBe(`valid: the card is signed by ${world.child.kid}, which your directory trusts for org-child.\n`);
  });

  it('exits 1 with CARD_UNKNOWN_KEY when your directory does not hold the signing key', async () => {
    const { code, out } = await cli('a2a', 'card', 'verify', `${world.agent.url}/.well-known/agent-card.json`, '--keys', 'other.json');
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
    expect(err).toMatch(/broken.json is not JSON/);
  });

  it('exits 1 saying the agent may not be running when nothing answers', async () => {
    const { code, err } = await cli('a2a', 'card', 'verify', 'http://127.0.0.1:1', '--keys', 'trusted.json');
    expect(code).toBe(1);
    expect(err).toMatch(/Is the agent running/);
  });
});

describe('witness a2a options', () => {
  it('refuses a --cosigner that is not DEPLOYER=URL', async () => {
    const { code, err } = await cli('a2a', 'serve', '--key', 'child.key.json', '--tool', world.tool.url, '--cosigner', 'org-parent');
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

  it.each(['serve', 'cosigner', 'tool', 'bench'])('shows an example in `witness a2a %s --help`', async (sub) => {
    const { code, out } = await cli('a2a', sub, '--help');
    expect(code).toBe(0);
    expect(out).toMatch(new RegExp(`Example:\\n  \\$ witness a2a ${sub}`));
  });
});

describe('src/a2a dependencies', () => {
  it('import only core, attest, mailbox and llm among our modules', () => {
    const root = join(import.meta.dirname, '../../src/a2a');
    const offending: string[] = [];
    for (const name of readdirSync(root)) {
      const text = readFileSync(join(root, name), 'utf8');
      for (const m of text.matchAll(/from '\.\.\/([a-z]+)\//g)) if (!['core', 'attest', 'mailbox', 'llm'].includes(m[1] ?? '')) offending.push(`${name}: ${m[0]}`);
    }
    expect(offending).toEqual([]);
  });
});
