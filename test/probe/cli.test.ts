/**
 * `witness probe` as a command: usage errors exit 2 naming what was wrong, the
 * help has examples, exit status follows the verdicts, and runtimes that are not
 * installed here (OpenHands, Claude Code) are undecided with the reason, fast —
 * after their adapters wrote their config through `mailbox install`.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { memoryIo } from '../../src/cli/io.js';
import { runMain } from '../../src/cli/main.js';
import { adapterFor, type ProbeContext, type ProbeReport } from '../../src/probe/index.js';
import { createWorkspace } from '../../src/probe/workspace.js';
import { witnessBundle } from '../support/witness-bundle.js';

async function witness(argv: string[]): Promise<{ code: number; out: string; err: string }> {
  const io = memoryIo();
  const code = await runMain(argv, io);
  return { code, out: io.out, err: io.err };
}

const server = async () => ['--server-command', JSON.stringify(await witnessBundle())];

describe('witness probe usage', () => {
  it('refuses an unknown runtime and lists the known ones', async () => {
    const { code, err } = await witness(['probe', 'vscode']);
    expect(code).toBe(2);
    expect(err).toMatch(/opencode, qwen, openhands, claude, codex, gemini, command, reference, liar/);
  });

  it('refuses the command runtime without a --template containing {prompt}', async () => {
    expect((await witness(['probe', 'command'])).err).toMatch(/needs --template/);
    const { code, err } = await witness(['probe', 'command', '--template', 'mycli run']);
    expect(code).toBe(2);
    expect(err).toMatch(/--template must be a command line containing \{prompt\}/);
  });

  it('refuses a model endpoint that is not an http URL', async () => {
    const { code, err } = await witness(['probe', 'qwen', '--model-endpoint', 'localhost:8000']);
    expect(code).toBe(2);
    expect(err).toMatch(/--model-endpoint must be an http\(s\) URL/);
  });

  it('refuses an unknown --check and a tool prefix the server would reject', async () => {
    expect(await witness(['probe', 'reference', '--check', 'deliver'])).toMatchObject({
      code: 2,
      err: expect.stringMatching(/--check "deliver" is not a check/),
    });
    expect(await witness(['probe', 'reference', '--tool-prefix', 'a/b'])).toMatchObject({
      code: 2,
      err: expect.stringMatching(/--tool-prefix "a\/b" must be/),
    });
  });

  it('shows examples in --help', async () => {
    const { code, out } = await witness(['probe', '--help']);
    expect(code).toBe(0);
    expect(out).toMatch(/Examples:\n {2}\$ witness probe reference/);
    expect(out).toMatch(/--tool-prefix mailbox_/);
  });
});

describe('witness probe exit status and report', () => {
  it('exits 0 with a JSON report when every check passes', async () => {
    const { code, out } = await witness(['probe', 'reference', '--json', ...(await server())]);
    const report = JSON.parse(out) as ProbeReport;
    expect(code).toBe(0);
    expect(report).toMatchObject({ format: 'witness-probe/1', runtime: 'reference', ok: true });
    expect(new Set(report.checks.map((c) => c.canary)).size).toBe(3);
  }, 60_000);

  it('exits 1 and prints the evidence when a check fails', async () => {
    const { code, out } = await witness(['probe', 'liar', '--check', 'send', ...(await server())]);
    expect(code).toBe(1);
    expect(out).toMatch(/send {5}FAIL/);
    expect(out).toMatch(/inbox lines: {2}none\n {4}receipts: {5}none/);
  }, 60_000);

  for (const runtime of ['openhands', 'claude']) {
    it(`is undecided with the reason when ${runtime} is not installed, within seconds`, async () => {
      const started = Date.now();
      const { code, out } = await witness([
        'probe',
        runtime,
        '--bin',
        `/nonexistent/${runtime}`,
        '--json',
        ...(await server()),
      ]);
      const report = JSON.parse(out) as ProbeReport;
      expect(code).toBe(1);
      expect(report.checks.map((c) => c.verdict)).toEqual(['undecided', 'undecided', 'undecided']);
      expect(report.checks[0]!.reason).toMatch(
        new RegExp(`runtime not available: .*not installed: no executable "/nonexistent/${runtime}"`),
      );
      expect(Date.now() - started).toBeLessThan(60_000);
    }, 60_000);
  }
});

describe('the text report', () => {
  it("says a missing runtime's install hint once, not once more per check", async () => {
    const { code, out } = await witness(['probe', 'claude', '--bin', '/nonexistent/claude', ...(await server())]);
    expect(code).toBe(1);
    expect(out.split('/nonexistent/claude').length - 1).toBe(1);
    expect(out).toMatch(/send +UNDECIDED +runtime not available \(see above\)/);
  }, 60_000);
});

describe('adapters: the config they write', () => {
  const context = async (): Promise<ProbeContext> => ({
    ws: await createWorkspace(await witnessBundle()),
    serverName: 'witness-mailbox',
    toolPrefix: 'mailbox_',
    timeoutMs: 10_000,
  });

  it("writes OpenHands' ~/.openhands/mcp.json inside the probe's own HOME", async () => {
    const ctx = await context();
    const config = adapterFor('openhands').install(ctx)!;
    expect(config.file).toBe(`${ctx.ws.home}/.openhands/mcp.json`);
    const entry = JSON.parse(readFileSync(config.file, 'utf8')).mcpServers['witness-mailbox'];
    expect(entry.args).toEqual(
      expect.arrayContaining(['serve', '--agent', 'probe-agent', '--tool-prefix', 'mailbox_']),
    );
    ctx.ws.remove();
  });

  it("writes Claude Code's ~/.claude.json inside the probe's own HOME, with a stdio entry (a project .mcp.json waits for an approval claude -p never asks)", async () => {
    const ctx = await context();
    const config = adapterFor('claude').install(ctx)!;
    expect(config.file).toBe(`${ctx.ws.home}/.claude.json`);
    expect(JSON.parse(readFileSync(config.file, 'utf8')).mcpServers['witness-mailbox'].type).toBe('stdio');
    ctx.ws.remove();
  });

  it("writes Codex's ~/.codex/config.toml inside the probe's own HOME and reads the table back", async () => {
    const ctx = await context();
    const config = adapterFor('codex').install(ctx)!;
    expect(config).toEqual({ file: `${ctx.ws.home}/.codex/config.toml`, has_server: true });
    expect(readFileSync(config.file, 'utf8')).toMatch(
      /^\[mcp_servers\.witness-mailbox\]\ncommand = ".*"\nargs = \[.*"--agent", "probe-agent", "--tool-prefix", "mailbox_".*\]\n$/,
    );
    ctx.ws.remove();
  });
});

describe('the command runtime', () => {
  const fixture = `${import.meta.dirname}/fixtures/mcp-agent.mjs`;

  it('passes a CLI given as a template that reaches the server it is handed', async () => {
    const { code, out } = await witness([
      'probe',
      'command',
      '--template',
      `${process.execPath} ${fixture} {prompt}`,
      '--json',
      ...(await server()),
    ]);
    expect(JSON.parse(out).checks.map((c: { verdict: string }) => c.verdict)).toEqual(['pass', 'pass', 'pass']);
    expect(code).toBe(0);
  }, 60_000);

  it('is undecided, not failed, when a template CLI leaves no record: it cannot be asked whether it started the server', async () => {
    const { code, out } = await witness([
      'probe',
      'command',
      '--template',
      'echo sent {prompt}',
      '--check',
      'send',
      '--json',
      ...(await server()),
    ]);
    const send = (JSON.parse(out) as ProbeReport).checks[0]!;
    expect(send.verdict).toBe('undecided');
    expect(send.reason).toMatch(/cannot be asked whether it started the server/);
    expect(code).toBe(1);
  }, 60_000);

  it('kills a runtime that outlives --timeout, with its whole process group, and is undecided', async () => {
    const started = Date.now();
    const { code, out } = await witness([
      'probe',
      'command',
      '--template',
      'sleep 120 & sleep 120; echo {prompt}',
      '--check',
      'send',
      '--timeout',
      '3',
      '--json',
      ...(await server()),
    ]);
    const send = (JSON.parse(out) as ProbeReport).checks[0]!;
    expect(send.verdict).toBe('undecided');
    expect(send.reason).toMatch(/did not finish within the time limit/);
    expect(code).toBe(1);
    expect(Date.now() - started).toBeLessThan(30_000);
  }, 60_000);
});
