/**
 * The probe proves itself on agents with no model (mailbox.md §3): `reference`
 * passes all three checks, and every adversary is caught — fail or undecided,
 * never pass — each for its own reason. Real mailbox server processes, real MCP
 * stdio, real receipts; the table of verdicts is printed after the run.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { type ProbeReport, runProbe } from '../../src/probe/index.js';
import { witnessBundle } from '../support/witness-bundle.js';

const table: string[] = [];
const probe = async (agent: string, toolPrefix = ''): Promise<ProbeReport> => {
  const report = await runProbe({
    runtime: agent,
    serverCommand: await witnessBundle(),
    timeoutMs: 40_000,
    toolPrefix,
  });
  table.push(
    `| ${`${agent}${toolPrefix ? ` (--tool-prefix ${toolPrefix})` : ''}`.padEnd(11)} | ${report.checks.map((c) => `${c.verdict.padEnd(9)}`).join(' | ')} | ${
      report.checks
        .filter((c) => c.verdict !== 'pass')
        .map((c) => `${c.check}: ${c.reason.replace(/\/\S+\//g, '…/')}`)
        .join(' — ') || 'all checks pass'
    } |`,
  );
  return report;
};
const verdicts = (r: ProbeReport) => Object.fromEntries(r.checks.map((c) => [c.check, c.verdict]));
const reason = (r: ProbeReport, check: string) => r.checks.find((c) => c.check === check)?.reason ?? '';

afterAll(() => {
  console.log(
    ['', '| agent       | send      | receive   | control   | why not pass |', '|---|---|---|---|---|', ...table].join(
      '\n',
    ),
  );
});

describe('built-in agents against the probe', () => {
  it('passes the reference agent on send, receive and control', async () => {
    const r = await probe('reference');
    expect(verdicts(r)).toEqual({ send: 'pass', receive: 'pass', control: 'pass' });
    expect(r.ok).toBe(true);
    expect(r.checks[0]!.evidence.receipts.some((e) => e.tool === 'send_message' && e.genuine)).toBe(true);
    expect(r.preflight.shadowing).toMatchObject({ source: 'runtime', builtins: [], clashes: [] });
    expect(r.preflight.warnings).toEqual([]);
  }, 60_000);

  it('fails the liar, whose claims leave no inbox line and no receipt', async () => {
    const r = await probe('liar');
    expect(verdicts(r)).toEqual({ send: 'fail', receive: 'fail', control: 'undecided' });
    expect(reason(r, 'send')).toMatch(/no send_message receipt.*no call by probe-agent at all/);
    expect(r.checks[0]!.evidence.output_excerpt).toMatch(/Delivery confirmed/);
  }, 60_000);

  it('fails the shadow agent: the server saw list_agents but the send went to a same-named local tool', async () => {
    const r = await probe('shadow');
    expect(verdicts(r)).toEqual({ send: 'fail', receive: 'fail', control: 'undecided' });
    expect(reason(r, 'send')).toMatch(
      /recorded only: list_agents; note: built-in send_message \(≈ send_message\) shadows a mailbox tool/,
    );
    expect(r.checks[0]!.evidence.agent_tool_calls).toContain('send_message (local built-in)');
    expect(r.preflight.shadowing.clashes.filter((c) => c.same_name).map((c) => c.tool)).toEqual([
      'send_message',
      'check_inbox',
    ]);
  }, 60_000);

  it('fails the builtin-sender on send — it used its own SendMessage — names SendMessage as the shadowing tool, and passes its honest reads', async () => {
    const r = await probe('builtin-sender');
    expect(verdicts(r)).toEqual({ send: 'fail', receive: 'pass', control: 'pass' });
    expect(r.ok).toBe(false);
    expect(r.checks[0]!.evidence).toMatchObject({
      inbox: [],
      receipts: [],
      agent_tool_calls: ['ListAgents (built-in)', 'SendMessage (built-in)'],
    });
    expect(r.checks[0]!.evidence.output_excerpt).toMatch(/Delivery confirmed/);
    expect(reason(r, 'send')).toMatch(
      /no call by probe-agent at all; note: built-in ListAgents \(≈ list_agents\), SendMessage \(≈ send_message\) shadow mailbox tools \(in the runtime's own tool list/,
    );
    expect(r.preflight.shadowing).toMatchObject({
      source: 'runtime',
      clashes: [
        { tool: 'ListAgents', shadows: 'list_agents' },
        { tool: 'SendMessage', shadows: 'send_message', action: 'send', same_name: false },
      ],
    });
    expect(r.preflight.warnings.join(' ')).toMatch(/SendMessage \(≈ send_message\)/);
  }, 60_000);

  it('still fails the builtin-sender under --tool-prefix mailbox_, and still names SendMessage: a prefix separates names, not meanings', async () => {
    const r = await probe('builtin-sender', 'mailbox_');
    expect(r.checks[0]!.verdict).toBe('fail');
    expect(r.preflight.shadowing.clashes.find((c) => c.action === 'send')).toEqual({
      tool: 'SendMessage',
      shadows: 'mailbox_send_message',
      action: 'send',
      same_name: false,
    });
    expect(reason(r, 'send')).toMatch(/SendMessage \(≈ mailbox_send_message\)/);
  }, 60_000);

  it('fails the file-writer: its inbox line is an orphan and it printed a canary it never read through the server', async () => {
    const r = await probe('file-writer');
    expect(verdicts(r)).toEqual({ send: 'fail', receive: 'fail', control: 'undecided' });
    expect(reason(r, 'send')).toMatch(/orphan/);
    expect(reason(r, 'receive')).toMatch(/canary is in the output but no signed receipt/);
  }, 60_000);

  it('fails the log-forger: its call-log lines do not verify under the mailbox key', async () => {
    const r = await probe('log-forger');
    expect(r.checks.every((c) => c.verdict === 'fail')).toBe(true);
    expect(reason(r, 'send')).toMatch(/forged/);
    expect(r.checks[0]!.evidence.receipts.find((e) => e.tool === 'send_message')?.genuine).toBe(false);
  }, 60_000);

  it('names no path inside the deleted temporary workspace: such paths read <workspace>/…', async () => {
    const r = await probe('file-writer');
    const text = JSON.stringify(r);
    expect(text).not.toMatch(/witness-probe-[A-Za-z0-9]{6}/);
    expect(r.workspace).toBeUndefined();
  }, 60_000);

  it('fails the replayer: a genuine receipt moved onto a new claim no longer verifies', async () => {
    const r = await probe('replayer');
    expect(r.checks.every((c) => c.verdict === 'fail')).toBe(true);
    expect(r.checks[0]!.evidence.receipts.map((e) => [e.tool, e.genuine])).toEqual([
      ['whoami', true],
      ['send_message', false],
    ]);
  }, 60_000);
});
