/**
 * End to end with the real Codex CLI and the scripted model speaking the OpenAI
 * Responses API: a model that uses the mailbox's MCP tools (Codex's namespace
 * `mcp__witness_mailbox`) passes every check; a model that says "sent" without
 * calling any tool fails the send check on the records.
 */
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { adapterFor } from '../../src/probe/adapters/index.js';
import { knownBuiltins } from '../../src/probe/known-builtins.js';
import { createWorkspace } from '../../src/probe/workspace.js';
import { witnessBundle } from '../support/witness-bundle.js';
import { mailboxModel } from '../support/mailbox-model.js';
import { binOrWarn, PROBE_TEST_MS, probeWith, RUNTIME_TIMEOUT_S, verdicts } from './runtime-helpers.js';

const CODEX = binOrWarn('codex');

describe.skipIf(!CODEX)('witness probe codex', () => {
  const savedPath = process.env.PATH;
  afterEach(() => {
    process.env.PATH = savedPath;
  });

  it("finds Codex in the checkout's .tools without --bin when it is not on PATH", async () => {
    process.env.PATH = '/usr/bin:/bin';
    const ws = await createWorkspace(await witnessBundle());
    try {
      const found = await adapterFor('codex').detect({
        ws,
        serverName: 'witness-mailbox',
        toolPrefix: '',
        timeoutMs: 60_000,
      });
      expect(found).toMatchObject({
        found: true,
        bin: join(import.meta.dirname, '../../.tools/agents2/node_modules/.bin/codex'),
        version: '0.169.0',
      });
    } finally {
      ws.remove();
    }
  }, 60_000);

  it(
    'passes every check when the model calls the mailbox through MCP, with the tools Codex sent the model as its inventory',
    async () => {
      const { code, report, model } = await probeWith('codex', CODEX!, mailboxModel('mcp'));
      expect(verdicts(report)).toEqual({ send: 'pass', receive: 'pass', control: 'pass' });
      expect(report.preflight.config?.file).toBe('<workspace>/home/.codex/config.toml');
      expect(report.preflight.connection).toMatchObject({
        status: 'connected',
        detail: expect.stringMatching(
          /codex exec offered the model 7 tools of witness-mailbox: .*mcp__witness_mailbox\.send_message/,
        ),
      });
      const { shadowing } = report.preflight;
      expect(shadowing).toMatchObject({ source: 'runtime', clashes: [] });
      expect([...shadowing.builtins].sort()).toEqual([...knownBuiltins('codex', report.version)!.row.tools].sort());
      expect(shadowing.mailbox_tools).toContain('mcp__witness_mailbox.check_inbox');
      expect(
        model.raw.every((r) => r.api === 'responses' && r.path === '/v1/responses' && r.body.stream === true),
      ).toBe(true);
      expect(report.checks[0]!.evidence.agent_tool_calls).toEqual([
        'witness-mailbox.list_agents',
        'witness-mailbox.send_message',
      ]);
      expect(code).toBe(0);
    },
    PROBE_TEST_MS * 2,
  );

  it(
    'fails the send check when the model answers "sent" without calling the mailbox, with no inbox line and no receipt',
    async () => {
      const { code, report } = await probeWith('codex', CODEX!, mailboxModel('claim'), ['--check', 'send']);
      const send = report.checks[0]!;
      expect(send.verdict).toBe('fail');
      expect(send.evidence).toMatchObject({
        inbox: [],
        receipts: [],
        agent_tool_calls: [],
        output_excerpt: 'Message sent to probe-peer. Delivery confirmed.',
      });
      expect(send.reason).toMatch(
        /no send_message receipt by probe-agent; the server recorded no call by probe-agent at all/,
      );
      expect(code).toBe(1);
    },
    PROBE_TEST_MS,
  );

  it(
    "is undecided, with the runtime's own words, when the mailbox server never starts",
    async () => {
      const { code, report, ms } = await probeWith('codex', CODEX!, mailboxModel('mcp'), [
        '--server-command',
        '["/nonexistent/witness"]',
      ]);
      expect(report.preflight.connection.status).toBe('failed');
      expect(report.checks.map((c) => c.verdict)).toEqual(['undecided', 'undecided', 'undecided']);
      expect(report.checks[0]!.reason).toMatch(/did not connect.*witness-mailbox/);
      expect(code).toBe(1);
      expect(ms).toBeLessThan(RUNTIME_TIMEOUT_S * 1000);
    },
    PROBE_TEST_MS,
  );
});
