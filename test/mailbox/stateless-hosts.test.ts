/**
 * MCP 2026-07-28 is stateless, so a PostgreSQL mailbox scales behind a plain load
 * balancer: three `witness mailbox serve --http` processes on one database behind a
 * round-robin proxy started here (every request to the next server, no stickiness).
 * Six agents, each a real SDK 2.4 client pinned to 2026-07-28 through the proxy, each
 * listening to its inbox (`subscriptions/listen`, which stays on whichever server got
 * it); 3 × 500 sends among them. Every send is stored once, the call log is one chain
 * and verifies, every server answered, and every listener is told of its mail — a
 * send through one server wakes a listener on another by LISTEN/NOTIFY.
 */
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readSnapshot, verifyMailbox } from '../../src/mailbox/index.js';
import { type HttpServerProcess, makeMailbox, startHttp, type TestMailbox, waitFor } from './helpers.js';

const SERVERS = 3;
const SENDS = 3 * 500;
const AGENTS = ['a0', 'a1', 'a2', 'a3', 'a4', 'a5'];
const IN_FLIGHT_PER_AGENT = 8;
const INBOX = 'mailbox://inbox';

/** Round-robin over `targets`, request by request; counts what each answered. Streams pass through as they come. */
async function roundRobin(targets: string[]): Promise<{ url: string; answered: number[]; close(): Promise<void> }> {
  const upstreams = targets.map((t) => new URL(t));
  const answered = targets.map(() => 0);
  let next = 0;
  const server: Server = createServer((req, res) => {
    const k = next++ % upstreams.length;
    const to = upstreams[k]!;
    const upstream = request(
      { host: to.hostname, port: to.port, method: req.method, path: req.url, headers: req.headers },
      (answer) => {
        answered[k]!++;
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', () => res.destroy());
    res.on('close', () => upstream.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`,
    answered,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describe('three stateless servers on one PostgreSQL mailbox behind a round-robin proxy (MCP 2026-07-28)', () => {
  let mb: TestMailbox;
  const servers: HttpServerProcess[] = [];
  let proxy: Awaited<ReturnType<typeof roundRobin>>;
  const clients = new Map<string, Client>();
  const notices = new Map<string, number>(AGENTS.map((a) => [a, 0]));
  const listens: { close(): Promise<void> }[] = [];

  beforeAll(async () => {
    mb = await makeMailbox(AGENTS, { store: 'postgres' });
    for (let i = 0; i < SERVERS; i++) servers.push(await startHttp(mb.dir, ['--rate-limit', '0']));
    proxy = await roundRobin(servers.map((s) => s.url));
    for (const agent of AGENTS) {
      const client = new Client(
        { name: `witness-test-${agent}`, version: '0.0.0' },
        { versionNegotiation: { mode: { pin: '2026-07-28' } } },
      );
      await client.connect(
        new StreamableHTTPClientTransport(new URL(proxy.url), {
          requestInit: { headers: { Authorization: `Bearer ${mb.tokens[agent]}` } },
        }),
      );
      client.setNotificationHandler(
        'notifications/resources/updated',
        () => void notices.set(agent, notices.get(agent)! + 1),
      );
      listens.push(await client.listen({ resourceSubscriptions: [INBOX] }));
      clients.set(agent, client);
    }
  }, 120_000);
  afterAll(async () => {
    for (const l of listens) await l.close().catch(() => undefined);
    for (const c of clients.values()) await c.close().catch(() => undefined);
    await proxy?.close();
    for (const s of servers) await s.stop();
    await mb?.cleanup();
  });

  it(`stores each of ${SENDS} sends from ${AGENTS.length} agents once, in one chain that verifies, every server answering`, async () => {
    const ids: string[] = [];
    const started = performance.now();
    await Promise.all(
      AGENTS.map(async (agent, a) => {
        const client = clients.get(agent)!;
        const mine = Array.from({ length: SENDS / AGENTS.length }, (_, i) => i);
        const lane = async () => {
          for (let i = mine.shift(); i !== undefined; i = mine.shift()) {
            const to = AGENTS[(a + 1 + (i % (AGENTS.length - 1))) % AGENTS.length]!;
            const result = await client.callTool({ name: 'send_message', arguments: { to, body: `${agent} #${i}` } });
            expect(result.isError, JSON.stringify(result.content)).toBeFalsy();
            ids.push((result.structuredContent as { id: string }).id);
          }
        };
        await Promise.all(Array.from({ length: IN_FLIGHT_PER_AGENT }, lane));
      }),
    );
    console.log(
      `stateless-hosts: ${SENDS} sends through the proxy in ${(performance.now() - started).toFixed(0)} ms; requests answered per server: ${proxy.answered.join(', ')}`,
    );
    expect(new Set(ids).size).toBe(SENDS);
    const stored = new Map<string, number>();
    for (const inbox of (await readSnapshot(mb.dir)).inboxes) {
      for (const line of inbox.lines) {
        const id = (JSON.parse(line.text) as { id: string }).id;
        stored.set(id, (stored.get(id) ?? 0) + 1);
      }
    }
    expect(stored.size).toBe(SENDS);
    expect([...stored.values()].every((n) => n === 1)).toBe(true);
    expect([...ids].sort()).toEqual([...stored.keys()].sort());
    for (const n of proxy.answered) expect(n).toBeGreaterThan(SENDS / SERVERS / 2);
    const report = await verifyMailbox(mb.dir);
    expect(report.problems).toEqual([]);
    expect(report.messages).toBe(SENDS);
  }, 180_000);

  it('tells every listener of its mail, whichever server holds its stream and whichever took the send', async () => {
    await waitFor(
      () => [...notices.values()].every((n) => n > 0),
      10_000,
      () => `a notice for every agent (have ${JSON.stringify(Object.fromEntries(notices))})`,
    );
    // One more send to each, through whichever server the proxy picks: each listener is told again.
    const before = new Map(notices);
    for (const [a, agent] of AGENTS.entries()) {
      await clients
        .get(AGENTS[(a + 1) % AGENTS.length]!)!
        .callTool({ name: 'send_message', arguments: { to: agent, body: 'one more' } });
    }
    await waitFor(
      () => AGENTS.every((a) => notices.get(a)! > before.get(a)!),
      10_000,
      () =>
        `a new notice for every agent (before ${JSON.stringify(Object.fromEntries(before))}, now ${JSON.stringify(Object.fromEntries(notices))})`,
    );
  });
});
