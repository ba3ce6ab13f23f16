/**
 * A session's SSE stream under a client that never reads: the server's writes heed
 * backpressure, and the client is disconnected once MAX_STREAM_BUFFER_BYTES wait
 * unsent, instead of the events piling up in the server's memory. Real node:http
 * server, real TCP client that opens the stream and stops reading; judged by bytes
 * held, not by time.
 */
import { once } from 'node:events';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { connect } from 'node:net';
import { expect, it } from 'vitest';
import { HttpSession, MAX_STREAM_BUFFER_BYTES } from '../../src/mailbox/http-session.js';

it('disconnects a subscriber that does not read once its stream holds the bound, never buffering more', async () => {
  const session = new HttpSession();
  let stream: ServerResponse | undefined;
  const server = createServer((_req, res) => {
    session.openStream(res);
    stream = res;
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const client = connect((server.address() as AddressInfo).port, '127.0.0.1');
  try {
    client.write('GET /mcp HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n\r\n');
    client.pause(); // it never reads what the server sends
    while (!stream) await new Promise((r) => setImmediate(r));
    const res = stream;
    // 16 KiB events, up to 256 MiB in all: far more than any socket buffer takes.
    const event = { jsonrpc: '2.0' as const, method: 'notifications/message', params: { data: 'x'.repeat(16 * 1024) } };
    let sent = 0;
    let held = 0;
    for (let i = 0; i < 16_384 && !res.destroyed; i++) {
      await session.send(event);
      sent += 16 * 1024;
      held = Math.max(held, res.writableLength);
      if (i % 16 === 0) await new Promise((r) => setImmediate(r)); // let the socket take what it will
    }
    expect(res.destroyed).toBe(true);
    expect(held).toBeLessThanOrEqual(MAX_STREAM_BUFFER_BYTES);
    expect(sent).toBeLessThan(256 * 1024 * 1024);
    // The session lives on: a later event is dropped (no stream), and a new GET may open one.
    await session.send(event);
    expect(res.writableLength).toBe(0);
  } finally {
    client.destroy();
    await session.close();
    server.close();
  }
}, 60_000);
