/**
 * The mailbox driven by the MCP Inspector CLI — a client nobody here wrote — over
 * stdio and over Streamable HTTP, the whole tool set in each protocol era (2025-11-25
 * and 2026-07-28 on the same endpoint). The Inspector wants Node >= 22, so it is not a
 * devDependency (`npm ci` warned EBADENGINE): scripts/tools.mjs installs it into
 * .tools/inspector, and it runs on the conformance suite's Node 22.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { verifyMailbox } from '../../src/mailbox/index.js';
import { negotiated, readSessions } from '../../src/probe/sessions.js';
import { node22 } from '../support/mcp-conformance.js';
import { makeMailbox, ROOT, startHttp, tempDir, witnessCommand } from './helpers.js';

const INSPECTOR = join(
  ROOT,
  '.tools/inspector/node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js',
);
const NODE22 = node22();
const missing = !existsSync(INSPECTOR)
  ? `${INSPECTOR} is not installed: run node scripts/tools.mjs`
  : 'missing' in NODE22
    ? NODE22.missing
    : undefined;
if (missing) console.warn(`skipping the MCP Inspector tests: ${missing}`);

/** Runs the Inspector CLI with a throwaway HOME (it keeps a catalog there); returns its parsed JSON output. */
function inspector(args: string[]): Record<string, unknown> {
  const home = tempDir('witness-insp-');
  mkdirSync(home, { recursive: true });
  if (!('path' in NODE22)) throw new Error(NODE22.missing);
  const result = spawnSync(NODE22.path, [INSPECTOR, '--cli', ...args], {
    encoding: 'utf8',
    timeout: 120_000,
    env: { ...process.env, HOME: home },
  });
  if (result.status !== 0) throw new Error(`mcp-inspector exited ${result.status}: ${result.stderr}${result.stdout}`);
  return JSON.parse(result.stdout.slice(result.stdout.indexOf('{'))) as Record<string, unknown>;
}

const serve = (dir: string, agent: string) => [...witnessCommand(), 'mailbox', 'serve', '--dir', dir, '--agent', agent];

describe.skipIf(missing !== undefined)('MCP Inspector CLI', () => {
  it('lists the seven tools with their schemas over stdio', async () => {
    const mb = await makeMailbox(['alice', 'bob']);
    const out = inspector([...serve(mb.dir, 'alice'), '--method', 'tools/list']) as {
      tools: Array<{ name: string; outputSchema?: unknown }>;
    };
    expect(out.tools.map((t) => t.name).sort()).toEqual([
      'ack_message',
      'check_inbox',
      'list_agents',
      'message_status',
      'send_message',
      'wait_for_message',
      'whoami',
    ]);
    expect(out.tools.every((t) => t.outputSchema)).toBe(true);
  }, 120_000);

  it('sends as alice and reads as bob over stdio', async () => {
    const mb = await makeMailbox(['alice', 'bob']);
    const sent = inspector([
      ...serve(mb.dir, 'alice'),
      '--method',
      'tools/call',
      '--tool-name',
      'send_message',
      '--tool-arg',
      'to=bob',
      'body=from the inspector',
    ]) as { structuredContent: { id: string } };
    const read = inspector([...serve(mb.dir, 'bob'), '--method', 'tools/call', '--tool-name', 'check_inbox']) as {
      structuredContent: { messages: Array<{ id: string; from: string; body: string }> };
    };
    expect(read.structuredContent.messages).toEqual([
      expect.objectContaining({ id: sent.structuredContent.id, from: 'alice', body: 'from the inspector' }),
    ]);
    expect((await verifyMailbox(mb.dir)).problems).toEqual([]);
  }, 120_000);

  for (const era of ['legacy', 'modern'] as const) {
    it(`runs the whole tool set over Streamable HTTP as a ${era === 'legacy' ? '2025-11-25' : '2026-07-28'} client (--protocol-era ${era})`, async () => {
      const mb = await makeMailbox(['alice', 'bob']);
      const sessionLog = join(mb.dir, '..', 'sessions.jsonl');
      const server = await startHttp(mb.dir, ['--session-log', sessionLog]);
      const as = (agent: string, tool: string, args: Record<string, unknown> = {}) =>
        (
          inspector([
            server.url,
            '--transport',
            'http',
            '--protocol-era',
            era,
            '--header',
            `Authorization: Bearer ${mb.tokens[agent]}`,
            '--method',
            'tools/call',
            '--tool-name',
            tool,
            '--tool-args-json',
            JSON.stringify(args),
          ]) as { structuredContent: Record<string, unknown> }
        ).structuredContent;
      try {
        expect(as('alice', 'whoami')).toEqual({ name: 'alice' });
        expect((as('alice', 'list_agents').agents as Array<{ name: string }>).map((a) => a.name)).toEqual([
          'alice',
          'bob',
        ]);
        const sent = as('alice', 'send_message', { to: 'bob', body: `from the inspector, ${era}` }) as { id: string };
        expect((as('bob', 'check_inbox').messages as Array<{ id: string }>).map((m) => m.id)).toEqual([sent.id]);
        expect(as('bob', 'ack_message', { message_id: sent.id, reply: 'seen' })).toMatchObject({ id: sent.id });
        expect(as('alice', 'message_status', { message_id: sent.id })).toMatchObject({
          state: 'acknowledged',
          acknowledged: { reply: 'seen' },
        });
        expect(as('bob', 'wait_for_message', { timeout_ms: 100 })).toMatchObject({ messages: [], timed_out: true });
      } finally {
        await server.stop();
      }
      expect((await verifyMailbox(mb.dir)).problems).toEqual([]);
      // The era the server saw, from its own session log: initialize (2025) or server/discover (2026).
      expect(negotiated(readSessions(sessionLog), 'alice')?.versions).toEqual([
        era === 'legacy' ? '2025-11-25' : '2026-07-28',
      ]);
    }, 240_000);
  }

  it('calls whoami over Streamable HTTP with a bearer token', async () => {
    const mb = await makeMailbox(['alice']);
    const server = await startHttp(mb.dir);
    try {
      const out = inspector([
        server.url,
        '--transport',
        'http',
        '--header',
        `Authorization: Bearer ${mb.tokens.alice}`,
        '--method',
        'tools/call',
        '--tool-name',
        'whoami',
      ]) as { structuredContent: unknown };
      expect(out.structuredContent).toEqual({ name: 'alice' });
    } finally {
      await server.stop();
    }
  }, 120_000);
});
