/**
 * core's one HTTP client for Witness's own calls: any status comes back with its
 * headers and body; a hang is a TimeoutError; an answer over the limit and a closed
 * port are errors, never a partial answer.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { httpText } from '../../src/core/http-client.js';

let server: Server;
let base: string;

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => {
      body += d.toString('utf8');
    });
    req.on('end', () => {
      if (req.url === '/hang') return; // never answered
      if (req.url === '/big') {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.end('z'.repeat(5000));
        return;
      }
      res.writeHead(409, { 'content-type': 'text/x.tlog.size' });
      res.end(`${req.method} ${body.length} ${req.headers['content-length']} é\n`);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

describe('httpText', () => {
  it('returns any status with its headers and the whole body, and sends the body with its length', async () => {
    const reply = await httpText(`${base}/x`, { method: 'POST', body: 'héllo', timeoutMs: 5000 });
    expect(reply.status).toBe(409);
    expect(reply.headers['content-type']).toBe('text/x.tlog.size');
    expect(reply.text).toBe('POST 5 6 é\n');
    expect((await httpText(`${base}/x`, { timeoutMs: 5000 })).text).toBe('GET 0 undefined é\n');
  });

  it('fails a hang with a TimeoutError, an answer over maxBytes, a closed port and a non-HTTP URL', async () => {
    await expect(httpText(`${base}/hang`, { timeoutMs: 200 })).rejects.toMatchObject({ name: 'TimeoutError' });
    await expect(httpText(`${base}/big`, { timeoutMs: 5000, maxBytes: 4096 })).rejects.toThrow(
      /longer than 4096 bytes/,
    );
    expect((await httpText(`${base}/big`, { timeoutMs: 5000 })).text).toHaveLength(5000);
    await expect(httpText('http://127.0.0.1:9/', { timeoutMs: 5000 })).rejects.toThrow(/ECONNREFUSED/);
    await expect(httpText('ftp://127.0.0.1/', { timeoutMs: 5000 })).rejects.toThrow(/not an http:\/\/ or https:\/\//);
  });
});
