/**
 * Every rejected tool call leaves a signed `ok: false` receipt, whoever rejects it —
 * our checks or the input schema — and whatever was wrong: a wrong type, a missing
 * field, a number out of range, an unknown tool, a `tools/call` without params, or
 * text that is not well-formed Unicode (a lone surrogate). Nothing of a rejected call
 * is stored, the client gets a one-line error (no schema library dump, no stack),
 * and the mailbox still verifies. Real McpServer and store, in-memory SDK transport.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMailboxServer, createRuntime, type MailboxRuntime, verifyMailbox } from '../../src/mailbox/index.js';
import { makeMailbox, type TestMailbox } from './helpers.js';

interface LoggedCall {
  seq: number;
  agent: string;
  tool: string;
  ok: boolean;
  error?: { code: string; message: string };
}

let mb: TestMailbox;
let runtime: MailboxRuntime;
let client: Client;

const lines = (path: string): string[] =>
  existsSync(path) ? readFileSync(path, 'utf8').split('\n').filter(Boolean) : [];
const logged = (): LoggedCall[] => lines(join(mb.dir, 'calls.jsonl')).map((l) => JSON.parse(l) as LoggedCall);
const inboxLines = (agent: string): number => lines(join(mb.dir, 'inbox', `${agent}.jsonl`)).length;

/** Sends a raw tools/call; returns the tool result, or the JSON-RPC error. */
async function rawCall(params: unknown): Promise<{
  result?: { isError?: boolean; content: Array<{ text?: string }> };
  error?: { code: number; message: string };
}> {
  try {
    const request = { method: 'tools/call', ...(params === undefined ? {} : { params }) } as {
      method: 'tools/call';
      params: { name: string };
    };
    return {
      result: (await client.request(request, CallToolResultSchema)) as {
        isError?: boolean;
        content: Array<{ text?: string }>;
      },
    };
  } catch (error) {
    return { error: { code: (error as { code: number }).code, message: (error as Error).message } };
  }
}

/** The one new receipt a rejected call must leave. */
async function rejectedWithReceipt(
  params: unknown,
): Promise<{ text: string; receipt: LoggedCall; protocolError?: number }> {
  const before = logged().length;
  const inboxBefore = inboxLines('bob');
  const answer = await rawCall(params);
  const after = logged();
  expect(after.length, 'exactly one receipt for the rejected call').toBe(before + 1);
  expect(inboxLines('bob'), 'nothing stored').toBe(inboxBefore);
  const receipt = after[after.length - 1]!;
  expect(receipt).toMatchObject({ agent: 'alice', ok: false });
  const text = answer.error ? answer.error.message : answer.result!.content.map((c) => c.text).join('\n');
  if (!answer.error) expect(answer.result!.isError).toBe(true);
  expect(text).not.toMatch(/\n|"code":|ZodError|\bat .*\.(js|ts):\d+/);
  expect(receipt.error!.message).toBe(text.replace(/^MCP error -?\d+: /, ''));
  return { text, receipt, ...(answer.error ? { protocolError: answer.error.code } : {}) };
}

beforeAll(async () => {
  mb = await makeMailbox(['alice', 'bob']);
  runtime = await createRuntime({ dir: mb.dir });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await createMailboxServer(runtime, 'alice').connect(serverSide);
  client = new Client({ name: 'witness-test', version: '0.0.0' });
  await client.connect(clientSide);
});
afterAll(async () => {
  await client?.close();
  await runtime?.store.close();
});

describe('arguments that fail the input schema', () => {
  const cases: Array<[string, string, Record<string, unknown>, RegExp]> = [
    [
      'a number as body',
      'send_message',
      { to: 'bob', body: 123 },
      /^Invalid arguments for send_message: body: expected a string, got a number\./,
    ],
    [
      'a list as recipient',
      'send_message',
      { to: ['bob'], body: 'x' },
      /^Invalid arguments for send_message: to: expected a string, got an array\./,
    ],
    ['no body', 'send_message', { to: 'bob' }, /^Invalid arguments for send_message: body: required\./],
    [
      'a negative limit',
      'check_inbox',
      { limit: -5 },
      /^Invalid arguments for check_inbox: limit: must be at least 1\./,
    ],
    [
      'a fractional limit',
      'check_inbox',
      { limit: 1.5 },
      /^Invalid arguments for check_inbox: limit: expected a whole number/,
    ],
    [
      'a limit above the documented 100',
      'check_inbox',
      { limit: 1000 },
      /^Invalid arguments for check_inbox: limit: must be at most 100\./,
    ],
    [
      'a wait limit above the documented 100',
      'wait_for_message',
      { timeout_ms: 0, limit: 101 },
      /^Invalid arguments for wait_for_message: limit: must be at most 100\./,
    ],
    [
      'a string as peek',
      'check_inbox',
      { peek: 'yes' },
      /^Invalid arguments for check_inbox: peek: expected a boolean, got a string\./,
    ],
    ['no timeout_ms', 'wait_for_message', {}, /^Invalid arguments for wait_for_message: timeout_ms: required\./],
  ];
  for (const [what, tool, args, message] of cases) {
    it(`${tool} with ${what} is a tool error with an ok:false receipt`, async () => {
      const { text, receipt, protocolError } = await rejectedWithReceipt({ name: tool, arguments: args });
      expect(protocolError).toBeUndefined();
      expect(text).toMatch(message);
      expect(receipt).toMatchObject({ tool, error: { code: 'INVALID_INPUT' } });
    });
  }
});

describe('text that is not well-formed Unicode (a lone surrogate)', () => {
  const cases: Array<[string, Record<string, unknown>, RegExp]> = [
    ['body', { to: 'bob', body: 'hi \ud800 there' }, /arguments\.body holds a lone surrogate \(U\+D800 at index 3\)/],
    [
      'idempotency_key',
      { to: 'bob', body: 'x', idempotency_key: 'k\udc00' },
      /arguments\.idempotency_key holds a lone surrogate \(U\+DC00 at index 1\)/,
    ],
    ['to', { to: 'b\udbffob', body: 'x' }, /arguments\.to holds a lone surrogate/],
    ['an extra argument', { to: 'bob', body: 'x', note: '\udfff' }, /arguments\.note holds a lone surrogate/],
    ['an argument name', { to: 'bob', body: 'x', '\ud801': 1 }, /a key of arguments holds a lone surrogate/],
  ];
  for (const [where, args, message] of cases) {
    it(`in ${where}: refused before anything is stored, with an ok:false receipt`, async () => {
      const { text, receipt } = await rejectedWithReceipt({ name: 'send_message', arguments: args });
      expect(text).toMatch(message);
      expect(receipt).toMatchObject({ tool: 'send_message', error: { code: 'INVALID_INPUT' } });
    });
  }
});

describe('calls that name no tool of this server', () => {
  it('an unknown tool is a -32602 protocol error, logged as unknown_tool with the name', async () => {
    const { text, receipt, protocolError } = await rejectedWithReceipt({ name: 'delete_everything', arguments: {} });
    expect(protocolError).toBe(-32602);
    expect(text).toMatch(
      /Unknown tool "delete_everything"\. This server's tools: whoami, list_agents, send_message, check_inbox, wait_for_message, message_status, ack_message\./,
    );
    expect(receipt).toMatchObject({ tool: 'unknown_tool', error: { code: 'NOT_FOUND' } });
  });

  it('an unknown tool name with a lone surrogate is logged escaped', async () => {
    const { receipt } = await rejectedWithReceipt({ name: 'x\ud800', arguments: {} });
    expect(receipt.error!.message).toContain('"x\\ud800"');
  });

  it('a very long unknown tool name is cut in the receipt', async () => {
    const { receipt } = await rejectedWithReceipt({ name: 'y'.repeat(100_000) });
    expect(receipt.error!.message.length).toBeLessThan(400);
  });

  for (const [what, params] of [
    ['no params', undefined],
    ['a number as name', { name: 5 }],
    ['no name', { arguments: {} }],
  ] as Array<[string, unknown]>) {
    it(`tools/call with ${what} is a -32602 protocol error with a receipt`, async () => {
      const { text, receipt, protocolError } = await rejectedWithReceipt(params);
      expect(protocolError).toBe(-32602);
      expect(text).toMatch(/Invalid params: tools\/call needs params \{name: string, arguments\?: object\}/);
      expect(receipt).toMatchObject({ tool: 'unknown_tool', error: { code: 'INVALID_INPUT' } });
    });
  }

  it('arguments that are not an object are a -32602 protocol error logged under the tool', async () => {
    const { protocolError, receipt } = await rejectedWithReceipt({ name: 'send_message', arguments: ['bob', 'x'] });
    expect(protocolError).toBe(-32602);
    expect(receipt).toMatchObject({ tool: 'send_message', error: { code: 'INVALID_INPUT' } });
  });
});

describe('after every rejection', () => {
  it('tools/list shows the read limit as the schema maximum the docs give (100)', async () => {
    const { tools } = await client.listTools();
    const limit = (name: string) =>
      (tools.find((t) => t.name === name)?.inputSchema.properties as Record<string, { maximum?: number }> | undefined)
        ?.limit?.maximum;
    expect([limit('check_inbox'), limit('wait_for_message')]).toEqual([100, 100]);
  });

  it('a good call still works and the mailbox verifies clean', async () => {
    const result = await client.callTool({ name: 'send_message', arguments: { to: 'bob', body: 'fine \ud83d\ude00' } });
    expect(result.isError).toBeFalsy();
    expect(inboxLines('bob')).toBe(1);
    const report = await verifyMailbox(mb.dir);
    expect(report.problems).toEqual([]);
    expect(report.ok).toBe(true);
  });

  it('other unknown methods are still "Method not found" (-32601)', async () => {
    await expect(
      client.request({ method: 'prompts/list' } as { method: 'prompts/list' }, CallToolResultSchema),
    ).rejects.toMatchObject({ code: -32601 });
  });
});
