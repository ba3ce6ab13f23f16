// The one HTTP front (core/http-front.ts): the guard answers before the route runs, a
// body over the limit is a 413 naming it, JSON that breaks is a 400 that never quotes
// the body, a route that throws is a fixed internal error — each in the server's shape.
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type ErrorShape,
  type HttpFront,
  JSON_ERRORS,
  JSON_RPC_ERRORS,
  serveFront,
  TEXT_ERRORS,
} from '../../src/core/http-front.js';
import { INTERNAL_ERROR_MESSAGE } from '../../src/core/http-server.js';

function send(
  url: string,
  headers: Record<string, string>,
  body: string,
): Promise<{ status: number; type: string; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => {
        text += c;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, type: String(res.headers['content-type']), text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

const SHAPES: Array<[string, ErrorShape, (text: string) => string]> = [
  ['JSON-RPC', JSON_RPC_ERRORS, (t) => (JSON.parse(t) as { error: { message: string } }).error.message],
  ['{error:{code,message}}', JSON_ERRORS, (t) => (JSON.parse(t) as { error: { message: string } }).error.message],
  ['text', TEXT_ERRORS, (t) => t.trimEnd()],
];

describe.each(SHAPES)('the HTTP front, %s errors', (_name, errors, messageOf) => {
  let front: HttpFront;
  let routed = 0;
  beforeAll(async () => {
    front = await serveFront({ what: 'the test server', limit: 64, errors }, async (req, res, r) => {
      routed++;
      if (req.url === '/boom') throw new Error('/secret/path/on/disk');
      const read = await r.json();
      if (!read) return;
      res.end(JSON.stringify(read.value));
    });
  });
  afterAll(() => front?.close());

  it('refuses a foreign Origin with 403 before the route runs', async () => {
    const before = routed;
    const answer = await send(`${front.url}/`, { Origin: 'https://evil.example' }, '{}');
    expect(answer.status).toBe(403);
    expect(messageOf(answer.text)).toMatch(/origin/i);
    expect(routed).toBe(before);
  });
  it('refuses a body over the limit with 413 naming it', async () => {
    const answer = await send(`${front.url}/`, {}, JSON.stringify({ pad: 'x'.repeat(100) }));
    expect(answer.status).toBe(413);
    expect(messageOf(answer.text)).toMatch(/the limit is 64 bytes/);
  });
  it('refuses broken JSON with 400, saying where and quoting none of it', async () => {
    const answer = await send(`${front.url}/`, {}, '{"secret": tru');
    expect(answer.status).toBe(400);
    expect(messageOf(answer.text)).toMatch(/^Parse error/);
    expect(answer.text).not.toContain('secret');
  });
  it('answers a route that throws with the fixed internal error, naming no path', async () => {
    const answer = await send(`${front.url}/boom`, {}, '{}');
    expect(answer.status).toBe(500);
    expect(messageOf(answer.text)).toBe(INTERNAL_ERROR_MESSAGE);
    expect(answer.text).not.toContain('/secret');
  });
  it('lets a good request through', async () => {
    expect(await send(`${front.url}/`, {}, '{"a":1}')).toMatchObject({ status: 200, text: '{"a":1}' });
  });
});
