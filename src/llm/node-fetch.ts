/**
 * @module
 * A lean `fetch` for the `openai` client over node:http(s) with keep-alive sockets.
 * The global fetch (undici, web streams) costs several times more CPU per request,
 * which caps throughput when thousands of small completions per second are in flight
 * (bench/llm.ts). The response is a minimal stand-in with what the client reads:
 * status, headers, url, `json()` and `text()` of a body read in full.
 */
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';

export type FetchLike = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

/** A fetch with its own keep-alive socket pools; `maxSockets` bounds connections per host. */
export function createNodeFetch(maxSockets = 256): FetchLike & { close(): void } {
  const agents = {
    http: new HttpAgent({ keepAlive: true, maxSockets }),
    https: new HttpsAgent({ keepAlive: true, maxSockets }),
  };
  const fetchImpl = (input: string | URL | Request, init: RequestInit = {}): Promise<Response> =>
    new Promise((resolve, reject) => {
      const url = new URL(typeof input === 'string' || input instanceof URL ? input : input.url);
      const secure = url.protocol === 'https:';
      const headers: Record<string, string> = {};
      // The openai client passes a Headers already: read it rather than copy it (a copy validates every field again).
      const given = init.headers instanceof Headers ? init.headers : new Headers(init.headers);
      given.forEach((value, name) => {
        headers[name] = value;
      });
      const body = init.body;
      if (body !== undefined && body !== null && typeof body !== 'string') {
        reject(new TypeError('node fetch: only string request bodies are supported'));
        return;
      }
      const req = (secure ? httpsRequest : httpRequest)(
        url,
        {
          method: init.method ?? 'GET',
          headers,
          agent: secure ? agents.https : agents.http,
          signal: init.signal ?? undefined,
        },
        (res) => _collect(res, url.href).then(resolve, reject),
      );
      req.on('error', reject);
      req.end(body ?? undefined);
    });
  return Object.assign(fetchImpl, {
    close() {
      agents.http.destroy();
      agents.https.destroy();
    },
  });
}

function _collect(res: IncomingMessage, url: string): Promise<Response> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    res.on('data', (chunk: Buffer) => chunks.push(chunk));
    res.on('error', reject);
    res.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const headers = new Headers();
      for (const [name, value] of Object.entries(res.headers)) {
        if (typeof value === 'string') headers.set(name, value);
        else if (Array.isArray(value)) for (const v of value) headers.append(name, v);
      }
      const status = res.statusCode ?? 0;
      const response = {
        ok: status >= 200 && status < 300,
        status,
        statusText: res.statusMessage ?? '',
        url,
        headers,
        body: null,
        json: async () => JSON.parse(text) as unknown,
        text: async () => text,
      };
      resolve(response as unknown as Response);
    });
  });
}
