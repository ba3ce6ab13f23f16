/**
 * A client may write its requests and close stdin at once (`printf … | witness
 * mailbox serve`): every request read before the end is still answered on stdout
 * before the process exits, and a pending wait_for_message ends early with its
 * (empty) answer instead of holding the process for its whole timeout.
 */
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { verifyMailbox } from '../../src/mailbox/index.js';
import { makeMailbox, witnessCommand } from './helpers.js';

interface Reply {
  id: number;
  result?: { structuredContent?: Record<string, unknown>; isError?: boolean };
  error?: unknown;
}

/** Runs a stdio server for `agent`, writes `requests` and ends stdin; resolves with its replies when it exits. */
function runToEnd(
  dir: string,
  agent: string,
  requests: unknown[],
): Promise<{ replies: Reply[]; code: number | null; ms: number }> {
  const [command, ...args] = witnessCommand();
  const started = Date.now();
  const proc = spawn(command!, [...args, 'mailbox', 'serve', '--dir', dir, '--agent', agent], {
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let out = '';
  proc.stdout.on('data', (d: Buffer) => {
    out += d.toString();
  });
  proc.stdin.end(requests.map((r) => `${JSON.stringify(r)}\n`).join(''));
  return new Promise((resolve, reject) => {
    proc.once('error', reject);
    proc.once('close', (code) =>
      resolve({
        replies: out
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l) as Reply),
        code,
        ms: Date.now() - started,
      }),
    );
  });
}

const tool = (id: number, name: string, args: Record<string, unknown>) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name, arguments: args },
});

describe('stdin closed right after the requests', () => {
  it('a send_message written just before the end is answered, stored and verified', async () => {
    const mb = await makeMailbox(['alice', 'bob']);
    const { replies, code } = await runToEnd(mb.dir, 'alice', [
      tool(1, 'send_message', { to: 'bob', body: 'last words' }),
    ]);
    expect(code).toBe(0);
    expect(replies).toEqual([
      {
        jsonrpc: '2.0',
        id: 1,
        result: expect.objectContaining({
          structuredContent: expect.objectContaining({ to: 'bob', deduplicated: false }),
        }),
      },
    ]);
    expect(await verifyMailbox(mb.dir)).toMatchObject({ ok: true, messages: 1 });
  }, 60_000);

  it('every one of several requests is answered', async () => {
    const mb = await makeMailbox(['alice', 'bob']);
    const requests = Array.from({ length: 8 }, (_, i) => tool(i + 1, 'send_message', { to: 'bob', body: `m${i}` }));
    const { replies } = await runToEnd(mb.dir, 'alice', [...requests, tool(9, 'whoami', {})]);
    expect(replies.map((r) => r.id).sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(replies.every((r) => r.result && !r.result.isError)).toBe(true);
    expect(await verifyMailbox(mb.dir)).toMatchObject({ ok: true, messages: 8 });
  }, 60_000);

  it('a pending wait_for_message is answered at once (empty, timed out) rather than after its timeout', async () => {
    const mb = await makeMailbox(['alice', 'bob']);
    const { replies, ms } = await runToEnd(mb.dir, 'bob', [tool(1, 'wait_for_message', { timeout_ms: 120_000 })]);
    expect(replies).toEqual([
      {
        jsonrpc: '2.0',
        id: 1,
        result: expect.objectContaining({ structuredContent: { messages: [], timed_out: true } }),
      },
    ]);
    expect(ms).toBeLessThan(60_000);
    expect(await verifyMailbox(mb.dir)).toMatchObject({ ok: true, calls: 1 });
  }, 90_000);
});
