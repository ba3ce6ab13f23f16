/**
 * End to end with the real Claude Code CLI and the scripted model speaking the
 * Anthropic Messages API: a model that uses the mailbox's MCP tools (loaded through
 * Claude Code's ToolSearch) passes every check; a model that calls Claude Code's
 * own SendMessage fails the send check on the records, and the report names it.
 */
import { describe, expect, it } from 'vitest';
import { knownBuiltins } from '../../src/probe/known-builtins.js';
import { mailboxModel } from '../support/mailbox-model.js';
import { binOrWarn, PROBE_TEST_MS, probeWith, RUNTIME_TIMEOUT_S, verdicts } from './runtime-helpers.js';

const CLAUDE = binOrWarn('claude');

describe.skipIf(!CLAUDE)('witness probe claude', () => {
  it(
    'passes every check when the model calls the mailbox through MCP, listing the built-ins from Claude Code itself',
    async () => {
      const { code, report, model } = await probeWith('claude', CLAUDE!, mailboxModel('mcp'));
      expect(verdicts(report)).toEqual({ send: 'pass', receive: 'pass', control: 'pass' });
      expect(report.preflight.connection).toMatchObject({
        status: 'connected',
        detail: expect.stringMatching(/witness-mailbox: .* - ✔ Connected/),
      });
      expect(report.preflight.config?.file).toBe('<workspace>/home/.claude.json');
      const { shadowing } = report.preflight;
      expect(shadowing.source).toBe('runtime');
      expect(shadowing.builtins).toEqual(
        expect.arrayContaining([...knownBuiltins('claude', report.version)!.row.tools]),
      );
      expect(shadowing.clashes.map((c) => [c.tool, c.shadows, c.same_name])).toEqual([
        ['ListAgents', 'list_agents', false],
        ['SendMessage', 'send_message', false],
      ]);
      // Claude Code's own API, streamed, as the runtime really speaks it.
      expect(model.raw.length).toBeGreaterThan(0);
      expect(
        model.raw.every((r) => r.api === 'anthropic' && r.path.startsWith('/v1/messages') && r.body.stream === true),
      ).toBe(true);
      expect(report.checks[0]!.evidence.agent_tool_calls).toEqual(
        expect.arrayContaining([
          'ToolSearch',
          'mcp__witness-mailbox__list_agents',
          'mcp__witness-mailbox__send_message',
        ]),
      );
      expect(code).toBe(0);
    },
    PROBE_TEST_MS * 2,
  );

  it(
    'fails the send check when the model calls the built-in SendMessage, with no inbox line, no receipt and SendMessage named',
    async () => {
      const { code, report, model } = await probeWith(
        'claude',
        CLAUDE!,
        mailboxModel('builtin', { builtins: { list: 'ListAgents', send: 'SendMessage' } }),
        ['--check', 'send'],
      );
      // The model really called Claude Code's own tool, and Claude Code answered it.
      const called = model.requests
        .flatMap((r) => r.messages.flatMap((m) => m.tool_calls ?? []))
        .map((c) => c.function.name);
      expect(called).toContain('SendMessage');
      const send = report.checks[0]!;
      expect(send.verdict).toBe('fail');
      expect(send.evidence.inbox).toEqual([]);
      expect(send.evidence.receipts.filter((r) => r.tool === 'send_message')).toEqual([]);
      expect(send.evidence.agent_tool_calls).toContain('SendMessage');
      expect(send.evidence.output_excerpt).toBe('Message sent to probe-peer. Delivery confirmed.');
      expect(send.reason).toMatch(
        /note: built-in ListAgents \(≈ list_agents\), SendMessage \(≈ send_message\) shadow mailbox tools \(in the runtime's own tool list/,
      );
      expect(report.preflight.warnings.join(' ')).toMatch(
        /Claude Code has built-in tools that name a mailbox action in another spelling: ListAgents \(≈ list_agents\), SendMessage \(≈ send_message\)/,
      );
      expect(code).toBe(1);
    },
    PROBE_TEST_MS,
  );

  it(
    "is undecided, with the runtime's own words, when the mailbox server never starts",
    async () => {
      const { code, report, ms } = await probeWith('claude', CLAUDE!, mailboxModel('mcp'), [
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
