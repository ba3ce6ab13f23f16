/**
 * A PostgreSQL mailbox whose database goes away under running servers: every call in
 * the outage gets a clear answer that says nothing was stored (a tool error over
 * stdio; a JSON 503 with Retry-After over HTTP, naming no address of the operator's),
 * nothing sent in the outage appears later, and the servers carry on once the database
 * is back. The outage is a TCP forwarder between the servers and the real server that
 * the test cuts (its sockets destroyed, the port closed) and reopens on the same port.
 */
import { writeFileSync } from 'node:fs';
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readConfig, verifyMailbox } from '../../src/mailbox/index.js';
import {
  call,
  callError,
  type Connected,
  httpClient,
  makeMailbox,
  startHttp,
  stdioClient,
  type TestMailbox,
  waitFor,
} from './helpers.js';

const PG_PORT = Number(process.env.PGPORT ?? 5432);

/** A TCP path to PostgreSQL that can be cut and restored on the same port. */
class Forwarder {
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();
  port = 0;

  async open(): Promise<void> {
    const server = createServer((client) => {
      const pg = createConnection(PG_PORT, '127.0.0.1');
      for (const s of [client, pg]) {
        this.sockets.add(s);
        s.on('error', () => {});
        s.on('close', () => {
          this.sockets.delete(s);
          client.destroy();
          pg.destroy();
        });
      }
      client.pipe(pg).pipe(client);
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => resolve());
    });
    this.port = (server.address() as { port: number }).port;
    this.server = server;
  }

  async cut(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    const closed = new Promise((resolve) => server?.close(resolve));
    for (const s of this.sockets) s.destroy();
    await closed;
  }
}

const made: TestMailbox[] = [];
const open: Array<{ close(): Promise<void> }> = [];
afterAll(async () => {
  for (const o of open.reverse()) await o.close().catch(() => {});
  for (const mb of made) await mb.cleanup();
});

describe('a PostgreSQL mailbox whose database goes away and comes back', () => {
  it('answers every call in the outage clearly, stores none of it, and carries on after', async () => {
    const mb = await makeMailbox(['a', 'b'], { store: 'postgres' });
    made.push(mb);
    const forwarder = new Forwarder();
    await forwarder.open();
    open.push({ close: () => forwarder.cut() });
    const database = new URL(mb.database!).pathname.slice(1);
    writeFileSync(
      join(mb.dir, 'mailbox.json'),
      JSON.stringify({ ...readConfig(mb.dir), database: `postgres://127.0.0.1:${forwarder.port}/${database}` }),
    );

    const http = await startHttp(mb.dir);
    open.push({ close: () => http.stop() });
    const overHttp: Connected = await httpClient(http.url, mb.tokens.a!);
    open.push(overHttp);
    const overStdio = await stdioClient(mb.dir, 'a');
    open.push(overStdio);
    await call(overHttp.client, 'send_message', { to: 'b', body: 'before' });

    await forwarder.cut();
    const refused = await callError(overStdio.client, 'send_message', { to: 'b', body: 'during (stdio)' });
    expect(refused).toMatch(
      /^The mailbox database refused the write \((ECONNREFUSED|ECONNRESET|connection lost): the database server could not be reached\): this call was not stored and nothing of it was acknowledged\. Check the database server, then retry\.$/,
    );
    const answer = await fetch(http.url, {
      method: 'POST',
      headers: {
        Authorization: `Bearer ${mb.tokens.a}`,
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'send_message', arguments: { to: 'b', body: 'during (http)' } },
      }),
    });
    const text = await answer.text();
    expect({ status: answer.status, retryAfter: answer.headers.get('retry-after') }).toEqual({
      status: 503,
      retryAfter: '1',
    });
    expect(JSON.parse(text).error.message).toMatch(
      /^Service unavailable: the mailbox's storage .* nothing of it was stored\. Retry shortly/,
    );
    for (const operatorsOwn of ['127.0.0.1', String(forwarder.port), database, 'ECONN', '/tmp', '/var'])
      expect(text).not.toContain(operatorsOwn);

    await forwarder.open();
    await waitFor(
      async () =>
        (await overHttp.client.callTool({ name: 'send_message', arguments: { to: 'b', body: 'after' } })).isError !==
        true,
      20_000,
      () => 'a send once the database is back',
    );
    const reader = await httpClient(http.url, mb.tokens.b!);
    open.push(reader);
    const { messages } = await call<{ messages: Array<{ body: string }> }>(reader.client, 'check_inbox', { limit: 10 });
    expect(messages.map((m) => m.body)).toEqual(['before', 'after']);
    for (const o of open.splice(1)) await o.close();
    expect((await verifyMailbox(mb.dir)).problems).toEqual([]);
  }, 60_000);
});
