// Property: whatever a client sends to any HTTP server of Witness — the mailbox, the
// A2A agent (card, JSON-RPC and HTTP+JSON), the MCP evidence tool, the co-signer — the answer
// never carries a stack frame, a file path or an HTML page, and a body, when there is
// one, is JSON. Fuzzed: methods, paths, headers (Host, Origin, Accept, Content-Type,
// versions, sessions, credentials, encodings), bodies (nothing, bytes, text, JSON,
// JSON-RPC-shaped with wrong fields, deep nesting, over the size limit). Real servers
// on loopback with small body limits so "too large" is cheap; fast-check prints the seed.
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import fc from 'fast-check';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type ChildAgent, serveChildAgent } from '../../src/a2a/agent.js';
import { CosignService, type CosignerServer, serveCosigner } from '../../src/a2a/cosigner.js';
import { serveEvidenceTool, type ToolServer } from '../../src/a2a/tool-server.js';
import { newSigningKey } from '../../src/attest/keys.js';
import { createRuntime, type HttpMailbox, serveHttp } from '../../src/mailbox/index.js';
import { makeMailbox } from '../mailbox/helpers.js';

const LIMIT = 4096;
let tool: ToolServer;
let agent: ChildAgent;
let cosigner: CosignerServer;
let mailbox: HttpMailbox;
let token = '';
beforeAll(async () => {
  tool = await serveEvidenceTool({ maxRequestBytes: LIMIT });
  agent = await serveChildAgent({ key: newSigningKey('org-child'), toolUrl: tool.url, maxRequestBytes: LIMIT });
  cosigner = await serveCosigner(new CosignService(newSigningKey('org-parent')), {
    maxRequestBytes: LIMIT,
    adminToken: 'admin-token-0123456789',
  });
  const mb = await makeMailbox(['alice', 'bob']);
  token = mb.tokens.alice!;
  mailbox = await serveHttp(await createRuntime({ dir: mb.dir }), { maxRequestBytes: LIMIT });
});
afterAll(async () => {
  await mailbox?.close();
  await agent?.close();
  await cosigner?.close();
  await tool?.close();
});

/** A stack frame as V8 prints it: `at fn (file:line:col)` or `at file:line:col`. */
const STACK_FRAME = /\bat (?:async )?[^\s()]*\s*\(?(?:file:|node:|\/|[A-Za-z]:\\)[^)\s]*:\d+:\d+/;
/** A path on a file system (URL paths such as /.well-known/agent-card.json are fine): a root folder, a module folder, a source file with a line. */
const FILE_PATH =
  /(?:^|[\s"'(=])\/(?:home|root|usr|var|tmp|work|opt|etc|srv|mnt|proc|dev|Users|private)\/|node_modules|file:\/\/|\b[A-Za-z]:\\|\.[cm]?[jt]s:\d+/;
const HTML = /<html|<!doctype|<pre>|<body/i;

const servers = () => [
  { name: 'mailbox', base: mailbox.url.replace(/\/mcp$/, ''), paths: ['/mcp', '/mcp?x=1'] },
  {
    name: 'a2a serve',
    base: agent.url,
    paths: [
      '/a2a/jsonrpc',
      '/a2a/jsonrpc?A2A-Version=1.0',
      '/.well-known/agent-card.json',
      '/a2a/jsonrpc/x',
      '/message:send',
      '/tasks?A2A-Version=1.0&historyLength=2',
      '/tasks/x:cancel',
      '/tenant-a/tasks/x/y',
    ],
  },
  { name: 'a2a tool', base: tool.url.replace(/\/mcp$/, ''), paths: ['/mcp'] },
  { name: 'a2a cosigner', base: cosigner.url, paths: ['/cosign', '/grants'] },
];

const printable = fc.string({ unit: fc.constantFrom(...'abcxyz019 -_.:;,=+*{}[]"\'%&?#~\\'.split('')), maxLength: 40 });
const jsonRpcLike = fc.record(
  {
    jsonrpc: fc.oneof(fc.constant('2.0'), fc.constant('1.0'), fc.integer(), fc.constant(null)),
    id: fc.oneof(fc.integer(), fc.string({ maxLength: 8 }), fc.constant(null), fc.object({ maxDepth: 1 })),
    method: fc.oneof(
      fc.constantFrom(
        'SendMessage',
        'GetTask',
        'ListTasks',
        'CancelTask',
        'message/send',
        'tasks/get',
        'initialize',
        'tools/call',
        'tools/list',
        'ping',
        'notifications/initialized',
      ),
      fc.string({ maxLength: 12 }),
      fc.integer(),
    ),
    params: fc.oneof(
      fc.object({ maxDepth: 3 }),
      fc.record({
        message: fc.record(
          {
            messageId: fc.string({ maxLength: 8 }),
            role: fc.constantFrom('ROLE_USER', 'user', 'x', 1),
            parts: fc.array(fc.oneof(fc.record({ text: fc.string({ maxLength: 30 }) }), fc.object({ maxDepth: 2 })), {
              maxLength: 3,
            }),
          },
          { requiredKeys: [] },
        ),
      }),
      fc.record({
        name: fc.constantFrom('get_evidence', 'send_message', 'check_inbox', 'nope'),
        arguments: fc.object({ maxDepth: 2 }),
      }),
      fc.record({ task_id: fc.string({ maxLength: 10 }), edge: fc.object({ maxDepth: 2 }) }),
      fc.jsonValue({ maxDepth: 2 }),
    ),
  },
  { requiredKeys: [] },
);
const body = fc.oneof(
  fc.constant(''),
  printable,
  fc.uint8Array({ maxLength: 64 }).map((bytes) => Buffer.from(bytes).toString('latin1')),
  fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v)),
  jsonRpcLike.map((v) => JSON.stringify(v)),
  fc.array(jsonRpcLike, { maxLength: 3 }).map((v) => JSON.stringify(v)),
  fc.integer({ min: 1, max: 3000 }).map((n) => `${'['.repeat(n)}${']'.repeat(n)}`),
  fc
    .integer({ min: LIMIT - 64, max: LIMIT * 3 })
    .map((n) => JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SendMessage', params: { pad: 'x'.repeat(n) } })),
);
const headers = fc.record(
  {
    host: fc.constantFrom('127.0.0.1', 'localhost', '[::1]', 'evil.example', 'localhost:1', '%%', ''),
    origin: fc.constantFrom('http://localhost:3000', 'http://evil.example', 'null', 'not a url'),
    accept: fc.constantFrom(
      'application/json, text/event-stream',
      'text/event-stream',
      'application/json',
      '*/*',
      'text/html',
    ),
    'content-type': fc.constantFrom(
      'application/json',
      'application/json; charset=utf-8',
      'text/plain',
      'application/x-www-form-urlencoded',
      'application/json; charset=latin1',
      '',
    ),
    'content-encoding': fc.constantFrom('gzip', 'deflate', 'identity', 'br'),
    'a2a-version': fc.constantFrom('1.0', '0.3', '2.0', 'x'),
    'mcp-protocol-version': fc.constantFrom('2025-11-25', '2025-06-18', '1999-01-01'),
    'mcp-session-id': fc.oneof(fc.uuid(), printable),
    authorization: fc.constantFrom('Bearer admin-token-0123456789', 'Bearer wrong', 'Basic abc', 'TOKEN'),
  },
  { requiredKeys: [] },
);
const method = fc.oneof(
  fc.constantFrom('GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'HEAD'),
  fc.stringMatching(/^[A-Z]{1,8}$/),
);

interface Answer {
  status: number;
  type: string | undefined;
  text: string;
}

function send(url: string, verb: string, extra: Record<string, string>, payload: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: verb, headers: extra }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          type: res.headers['content-type'],
          text: Buffer.concat(chunks).toString('utf8'),
        }),
      );
      res.on('error', reject);
    });
    req.on('error', (error: NodeJS.ErrnoException) =>
      error.code === 'ECONNRESET' || error.code === 'EPIPE'
        ? resolve({ status: 0, type: undefined, text: '' })
        : reject(error),
    );
    req.end(payload);
  });
}

it('no answer of any HTTP server holds a stack frame, a file path or HTML, and every body is JSON', async () => {
  const all = servers();
  await fc.assert(
    fc.asyncProperty(
      fc.nat(all.length - 1),
      fc.nat(),
      method,
      headers,
      fc.boolean(),
      body,
      async (which, pathIndex, verb, extra, withToken, payload) => {
        const server = all[which]!;
        const path = server.paths[pathIndex % server.paths.length]!;
        const sent = {
          ...extra,
          ...(withToken && server.name === 'mailbox' ? { authorization: `Bearer ${token}` } : {}),
        };
        if (sent.host === '') delete sent.host;
        fc.pre(!STACK_FRAME.test(payload) && !FILE_PATH.test(payload));
        const answer = await send(`${server.base}${path}`, verb, sent, payload);
        const where = `${server.name} ${verb} ${path} → ${answer.status}: ${answer.text.slice(0, 300)}`;
        expect(answer.text, where).not.toMatch(STACK_FRAME);
        expect(answer.text, where).not.toMatch(FILE_PATH);
        expect(answer.text, where).not.toContain(tmpdir());
        expect(answer.text, where).not.toContain(process.cwd());
        expect(answer.text, where).not.toMatch(HTML);
        // application/a2a+json: the A2A HTTP+JSON binding's media type (A2A v1.0 §11.4).
        if (answer.text !== '') expect(answer.type, where).toMatch(/^application\/(a2a\+)?json\b/);
      },
    ),
    { numRuns: 400 },
  );
}, 300_000);
