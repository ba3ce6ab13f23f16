/**
 * `witness mailbox install`: merges the server into each runtime's config file,
 * never replaces what is there, and shows the diff.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { cli, makeMailbox, type TestMailbox, tempDir } from './helpers.js';

const SERVER = '["node","/opt/witness/main.js"]';
let mb: TestMailbox;
let project: string;
let home: string;
const savedHome = process.env.HOME;

beforeEach(async () => {
  mb = await makeMailbox(['alice']);
  project = tempDir('witness-proj-');
  home = tempDir('witness-home-');
  process.env.HOME = home; // the user-scope files (OpenHands) live under HOME
});
afterEach(() => {
  process.env.HOME = savedHome;
});

const install = (runtime: string, extra: string[] = [], code = 0) =>
  cli(
    [
      'mailbox',
      'install',
      runtime,
      '--dir',
      mb.dir,
      '--agent',
      'alice',
      '--project',
      project,
      '--server-command',
      SERVER,
      ...extra,
    ],
    code,
  );
const readJson = (path: string) => JSON.parse(readFileSync(path, 'utf8'));

describe('mailbox install', () => {
  it('adds an opencode "mcp" entry next to existing settings and servers', async () => {
    writeFileSync(
      join(project, 'opencode.json'),
      JSON.stringify({ theme: 'dark', mcp: { other: { type: 'local', command: ['x'] } } }, null, 2),
    );
    const { out } = await install('opencode');
    const config = readJson(join(project, 'opencode.json'));
    expect(config.theme).toBe('dark');
    expect(config.mcp.other).toEqual({ type: 'local', command: ['x'] });
    expect(config.mcp['witness-mailbox']).toEqual({
      type: 'local',
      command: [
        'node',
        '/opt/witness/main.js',
        'mailbox',
        'serve',
        '--dir',
        mb.dir,
        '--agent',
        'alice',
        '--tool-prefix',
        'mailbox_',
      ],
      enabled: true,
      environment: {},
    });
    expect(out).toMatch(/^\+\s+"witness-mailbox": \{$/m);
    expect(out).toMatch(/^ {2}\s+"theme": "dark",$/m);
  });

  it("writes qwen's project .qwen/settings.json with command, args and env", async () => {
    await install('qwen');
    const entry = readJson(join(project, '.qwen', 'settings.json')).mcpServers['witness-mailbox'];
    expect(entry).toEqual({
      command: 'node',
      args: [
        '/opt/witness/main.js',
        'mailbox',
        'serve',
        '--dir',
        mb.dir,
        '--agent',
        'alice',
        '--tool-prefix',
        'mailbox_',
      ],
      env: {},
    });
  });

  it("writes OpenHands' ~/.openhands/mcp.json", async () => {
    await install('openhands');
    expect(readJson(join(home, '.openhands', 'mcp.json')).mcpServers['witness-mailbox'].command).toBe('node');
  });

  it("writes Claude Code's .mcp.json with type stdio", async () => {
    await install('claude');
    expect(readJson(join(project, '.mcp.json')).mcpServers['witness-mailbox'].type).toBe('stdio');
  });

  it("claude --channel serves with --channel, prints the launch flag and the agents' rules; other runtimes refuse it", async () => {
    const { err } = await install('claude', ['--channel']);
    const entry = readJson(join(project, '.mcp.json')).mcpServers['witness-mailbox'];
    expect(entry.args).toContain('--channel');
    expect(err).toMatch(/claude --dangerously-load-development-channels server:witness-mailbox/);
    expect(err).toMatch(/never a built-in tool of your runtime with a similar name/);
    expect((await install('qwen', ['--channel'], 2)).err).toMatch(
      /--channel is Claude Code's channel contract; qwen has none/,
    );
  });

  it('--dry-run prints the diff and writes nothing', async () => {
    const { out, err } = await install('claude', ['--dry-run']);
    expect(out).toMatch(/^\+\+\+ .*\.mcp\.json$/m);
    expect(err).toMatch(/Dry run/);
    expect(() => readFileSync(join(project, '.mcp.json'))).toThrow();
  });

  it('refuses to replace a different entry with the same name, and leaves the file as it was', async () => {
    const before = JSON.stringify({ mcpServers: { 'witness-mailbox': { command: 'mine' } } });
    writeFileSync(join(project, '.mcp.json'), before);
    const { err } = await install('claude', [], 2);
    expect(err).toMatch(/already has a different "witness-mailbox" entry.*--name.*--force/);
    expect(readFileSync(join(project, '.mcp.json'), 'utf8')).toBe(before);
  });

  it('running it twice changes nothing the second time', async () => {
    await install('opencode');
    const first = readFileSync(join(project, 'opencode.json'), 'utf8');
    const { out, err } = await install('opencode');
    expect(out).toBe('');
    expect(err).toMatch(/already has this "witness-mailbox" entry/);
    expect(readFileSync(join(project, 'opencode.json'), 'utf8')).toBe(first);
  });

  it('refuses a config file that is not plain JSON instead of losing its comments', async () => {
    mkdirSync(join(project, '.qwen'));
    const jsonc = '{\n  // my comment\n  "theme": "x"\n}\n';
    writeFileSync(join(project, '.qwen', 'settings.json'), jsonc);
    const { err } = await install('qwen', [], 2);
    expect(err).toMatch(/not plain JSON/);
    expect(readFileSync(join(project, '.qwen', 'settings.json'), 'utf8')).toBe(jsonc);
  });

  it("appends Codex's [mcp_servers.NAME] table to ~/.codex/config.toml, keeping what is there, once", async () => {
    mkdirSync(join(home, '.codex'));
    const file = join(home, '.codex', 'config.toml');
    const mine = 'model = "o4"\n\n[mcp_servers.other]\ncommand = "x"\n';
    writeFileSync(file, mine);
    const { out } = await install('codex', ['--scope', 'user']);
    const text = readFileSync(file, 'utf8');
    expect(text.startsWith(mine)).toBe(true);
    expect(text.slice(mine.length)).toBe(
      `\n[mcp_servers.witness-mailbox]\ncommand = "node"\nargs = ["/opt/witness/main.js", "mailbox", "serve", "--dir", ${JSON.stringify(mb.dir)}, "--agent", "alice", "--tool-prefix", "mailbox_"]\n`,
    );
    expect(out).toMatch(/^\+ \[mcp_servers\.witness-mailbox\]$/m);
    expect((await install('codex', ['--scope', 'user'])).err).toMatch(/already has this "witness-mailbox" entry/);
    expect(readFileSync(file, 'utf8')).toBe(text);
  });

  it('replaces a different Codex table of that name only with --force, and leaves the tables after it alone', async () => {
    mkdirSync(join(home, '.codex'));
    const file = join(home, '.codex', 'config.toml');
    const before = '[mcp_servers.witness-mailbox]\ncommand = "mine"\n\n[mcp_servers.after]\ncommand = "y"\n';
    writeFileSync(file, before);
    expect((await install('codex', ['--scope', 'user'], 2)).err).toMatch(
      /already has a different \[mcp_servers\.witness-mailbox\] table.*--force/,
    );
    expect(readFileSync(file, 'utf8')).toBe(before);
    await install('codex', ['--scope', 'user', '--force']);
    const text = readFileSync(file, 'utf8');
    expect(text).not.toMatch(/"mine"/);
    expect(text).toMatch(
      /^\[mcp_servers\.witness-mailbox\]\ncommand = "node"\nargs = \[.*\]\n\n\[mcp_servers\.after\]\ncommand = "y"\n$/,
    );
  });

  it('merges a "mcpServers" entry into Gemini CLI\'s existing ~/.gemini/settings.json, keeping every other key, and replaces one only with --force', async () => {
    mkdirSync(join(home, '.gemini'));
    const file = join(home, '.gemini', 'settings.json');
    writeFileSync(
      file,
      JSON.stringify(
        {
          security: { auth: { selectedType: 'gemini-api-key' } },
          mcpServers: { other: { command: 'x' }, 'witness-mailbox': { command: 'mine' } },
        },
        null,
        2,
      ),
    );
    const refused = await install('gemini', ['--scope', 'user'], 2);
    expect(refused.err).toMatch(/already has a different "witness-mailbox" entry under "mcpServers".*--force/);
    expect(readJson(file).mcpServers['witness-mailbox']).toEqual({ command: 'mine' });
    await install('gemini', ['--scope', 'user', '--force']);
    const config = readJson(file);
    expect(config.security).toEqual({ auth: { selectedType: 'gemini-api-key' } });
    expect(config.mcpServers.other).toEqual({ command: 'x' });
    expect(config.mcpServers['witness-mailbox']).toEqual({
      command: 'node',
      args: [
        '/opt/witness/main.js',
        'mailbox',
        'serve',
        '--dir',
        mb.dir,
        '--agent',
        'alice',
        '--tool-prefix',
        'mailbox_',
      ],
      env: {},
    });
  });

  it("writes Gemini CLI's project .gemini/settings.json and says the folder must be trusted", async () => {
    const { err } = await install('gemini');
    expect(readJson(join(project, '.gemini', 'settings.json')).mcpServers['witness-mailbox'].command).toBe('node');
    expect(err).toMatch(
      /Gemini CLI reads .* only in a folder it trusts.*GEMINI_CLI_TRUST_WORKSPACE=true.*--scope user/,
    );
  });

  it('refuses an unknown runtime, listing the known ones', async () => {
    const { err } = await install('vscode', [], 2);
    expect(err).toMatch(/opencode, qwen, openhands, claude, codex, gemini/);
  });
});
