/**
 * End to end with the real Qwen Code CLI and a scripted OpenAI-compatible model:
 * a model that uses the mailbox's MCP tools passes every check; a model that calls
 * Qwen Code's own `send_message` — the incident in mailbox.md — fails the send
 * check on the records, and the report names the shadowing built-in.
 */
import { describe, expect, it } from 'vitest';
import { mailboxModel } from '../support/mailbox-model.js';
import { binOrWarn, PROBE_TEST_MS, probeWith, RUNTIME_TIMEOUT_S, verdicts } from './runtime-helpers.js';

const QWEN = binOrWarn('qwen');

describe.skipIf(!QWEN)('witness probe qwen', () => {
  // One probe per check keeps each test under a minute on a loaded 2-core machine.
  it(
    'passes the send check when the model calls the mailbox through MCP under --tool-prefix mailbox_, still warning of the look-alike built-ins',
    async () => {
      const { code, report } = await probeWith('qwen', QWEN!, mailboxModel('mcp', { prefix: 'mailbox_' }), [
        '--tool-prefix',
        'mailbox_',
        '--check',
        'send',
      ]);
      expect(verdicts(report)).toEqual({ send: 'pass' });
      // Qwen Code's own list, asked in the preflight: its send_message names the same action as mailbox_send_message.
      expect(report.preflight.shadowing.source).toBe('runtime');
      expect(report.preflight.shadowing.clashes.map((c) => [c.tool, c.shadows, c.same_name])).toEqual([
        ['list_agents', 'mailbox_list_agents', false],
        ['send_message', 'mailbox_send_message', false],
      ]);
      expect(report.preflight.warnings).toEqual([
        expect.stringMatching(
          /in another spelling: list_agents \(≈ mailbox_list_agents\), send_message \(≈ mailbox_send_message\)/,
        ),
      ]);
      expect(report.version).toMatch(/^\d+\.\d+\.\d+/);
      expect(code).toBe(0);
    },
    PROBE_TEST_MS,
  );

  for (const check of ['receive', 'control'] as const) {
    it(
      `passes the ${check} check when the model calls the mailbox through MCP`,
      async () => {
        const { code, report } = await probeWith('qwen', QWEN!, mailboxModel('mcp'), ['--check', check]);
        expect(verdicts(report)).toEqual({ [check]: 'pass' });
        expect(report.preflight.connection.status).toBe('connected');
        expect(code).toBe(0);
      },
      PROBE_TEST_MS,
    );
  }

  it(
    'fails the send check when the model calls the built-in send_message, with no inbox line, no receipt and the shadowing named',
    async () => {
      const { code, report, model } = await probeWith('qwen', QWEN!, mailboxModel('builtin'), ['--check', 'send']);
      // The model really did call Qwen Code's own tool (through its deferred tool_call).
      const called = model.requests
        .flatMap((r) => r.messages.flatMap((m) => m.tool_calls ?? []))
        .map((c) => `${c.function.name} ${c.function.arguments}`);
      expect(called.some((c) => /send_message/.test(c) && !/mcp__/.test(c))).toBe(true);
      const send = report.checks[0]!;
      expect(send.verdict).toBe('fail');
      expect(send.evidence.inbox).toEqual([]);
      expect(send.evidence.receipts.filter((r) => r.tool === 'send_message')).toEqual([]);
      expect(send.evidence.output_excerpt).toMatch(/Delivery confirmed/);
      expect(report.preflight.warnings.join(' ')).toMatch(
        /built-in tools named list_agents, send_message.*--tool-prefix mailbox_/,
      );
      expect(report.preflight.shadowing.source).toBe('runtime');
      expect(send.reason).toMatch(
        /note: built-in list_agents \(≈ list_agents\), send_message \(≈ send_message\) shadow mailbox tools \(in the runtime's own tool list/,
      );
      expect(code).toBe(1);
    },
    PROBE_TEST_MS,
  );

  it(
    "is undecided, with the runtime's own words, when the mailbox server never starts",
    async () => {
      const { code, report, ms } = await probeWith('qwen', QWEN!, mailboxModel('mcp'), [
        '--server-command',
        '["/nonexistent/witness"]',
      ]);
      expect(report.preflight.connection.status).toBe('failed');
      expect(report.checks.map((c) => c.verdict)).toEqual(['undecided', 'undecided', 'undecided']);
      expect(report.checks[0]!.reason).toMatch(/did not connect.*Disconnected/);
      expect(code).toBe(1);
      expect(ms).toBeLessThan(RUNTIME_TIMEOUT_S * 1000); // decided before the runtime's deadline, not by it
    },
    PROBE_TEST_MS,
  );
});
