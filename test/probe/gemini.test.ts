/**
 * End to end with the real Gemini CLI and the scripted model speaking the Gemini
 * API: a model that uses the mailbox's MCP tools (`mcp_witness-mailbox_<tool>`)
 * passes every check, with the tools Gemini CLI declared in its own request as the
 * inventory; a model that says "sent" without calling any tool fails the send
 * check on the records.
 */
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { adapterFor } from '../../src/probe/adapters/index.js';
import { knownBuiltins } from '../../src/probe/known-builtins.js';
import { createWorkspace } from '../../src/probe/workspace.js';
import { mailboxModel } from '../support/mailbox-model.js';
import { witnessBundle } from '../support/witness-bundle.js';
import { binOrWarn, PROBE_TEST_MS, probeWith, RUNTIME_TIMEOUT_S, verdicts } from './runtime-helpers.js';

const GEMINI = binOrWarn('gemini');

describe.skipIf(!GEMINI)('witness probe gemini', () => {
  const savedPath = process.env.PATH;
  afterEach(() => {
    process.env.PATH = savedPath;
  });

  it("finds Gemini CLI in the checkout's .tools without --bin when it is not on PATH", async () => {
    process.env.PATH = '/usr/bin:/bin';
    const ws = await createWorkspace(await witnessBundle());
    try {
      const found = await adapterFor('gemini').detect({
        ws,
        serverName: 'witness-mailbox',
        toolPrefix: '',
        timeoutMs: 60_000,
      });
      expect(found).toMatchObject({
        found: true,
        bin: join(import.meta.dirname, '../../.tools/gemini/node_modules/.bin/gemini'),
        version: '0.61.0',
      });
    } finally {
      ws.remove();
    }
  }, 60_000);

  it(
    'passes every check when the model calls the mailbox through MCP, with the tools Gemini CLI declared as its inventory',
    async () => {
      const { code, report, model } = await probeWith('gemini', GEMINI!, mailboxModel('mcp'));
      expect(verdicts(report)).toEqual({ send: 'pass', receive: 'pass', control: 'pass' });
      expect(report.preflight.config?.file).toBe('<workspace>/home/.gemini/settings.json');
      expect(report.preflight.connection).toMatchObject({
        status: 'connected',
        detail: expect.stringMatching(/witness-mailbox.*Connected/),
      });
      const { shadowing } = report.preflight;
      expect(shadowing).toMatchObject({ source: 'runtime', clashes: [] });
      expect([...shadowing.builtins].sort()).toEqual([...knownBuiltins('gemini', report.version)!.row.tools].sort());
      expect(shadowing.mailbox_tools).toContain('mcp_witness-mailbox_send_message');
      expect(model.raw.length).toBeGreaterThan(0);
      expect(
        model.raw.every(
          (r) => r.api === 'gemini' && r.path === '/v1beta/models/scripted:streamGenerateContent?alt=sse',
        ),
      ).toBe(true);
      expect(report.checks[0]!.evidence.agent_tool_calls).toEqual([
        'mcp_witness-mailbox_list_agents',
        'mcp_witness-mailbox_send_message',
      ]);
      expect(report.protocol?.clients).toContain('gemini-cli-mcp-client 0.61.0');
      expect(code).toBe(0);
    },
    PROBE_TEST_MS * 2,
  );

  it(
    'fails the send check when the model answers "sent" without calling the mailbox, with no inbox line and no receipt',
    async () => {
      const { code, report } = await probeWith('gemini', GEMINI!, mailboxModel('claim'), ['--check', 'send']);
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
      const { code, report, ms } = await probeWith('gemini', GEMINI!, mailboxModel('mcp'), [
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
