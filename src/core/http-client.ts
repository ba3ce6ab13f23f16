/**
 * @module
 * The one client for Witness's own small HTTP calls to its services (a co-signer, a
 * log's witnesses): node:http(s) with keep-alive agents, the whole answer read as
 * text. Not the global fetch: undici runs several times more JavaScript per request,
 * which a server that submits a checkpoint every thousand sends runs cold each time
 * (bench/mailbox.ts --witness-rows), and which adds milliseconds per loopback round
 * trip on a loaded machine (charged to E12's dag condition).
 */
import { Agent as HttpAgent, type IncomingHttpHeaders, request as httpRequest } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';

export interface HttpTextReply {
  status: number;
  headers: IncomingHttpHeaders;
  /** The body, UTF-8. */
  text: string;
}

export interface HttpTextOptions {
  method?: 'GET' | 'POST';
  body?: string;
  headers?: Record<string, string>;
  /** The whole call, connection to last byte; then it fails with an error named `TimeoutError`. */
  timeoutMs: number;
  /** A longer answer fails (default 1 MiB): a service's answer here is a few lines. */
  maxBytes?: number;
}

// Idle keep-alive sockets are unreferenced by Node: they never hold a process open.
const _agents = {
  http: new HttpAgent({ keepAlive: true, maxSockets: 16 }),
  https: new HttpsAgent({ keepAlive: true, maxSockets: 16 }),
};

/**
 * One request; resolves with the answer whatever its status, rejects on a network
 * error, a timeout (an error named `TimeoutError`) or an answer over `maxBytes`.
 * @example const reply = await httpText('http://127.0.0.1:4500/add-checkpoint', { method: 'POST', body, timeoutMs: 10_000 })
 */
export function httpText(url: string, options: HttpTextOptions): Promise<HttpTextReply> {
  const maxBytes = options.maxBytes ?? 1024 * 1024;
  return new Promise((resolve, reject) => {
    let settled = false;
    const fail = (error: Error) => {
      if (settled) return;
      settled = true;
      reject(error);
    };
    const target = new URL(url);
    const secure = target.protocol === 'https:';
    if (!secure && target.protocol !== 'http:') {
      fail(new TypeError(`${url} is not an http:// or https:// URL`));
      return;
    }
    const headers: Record<string, string | number> = { ...options.headers };
    if (options.body !== undefined) headers['Content-Length'] = Buffer.byteLength(options.body);
    const req = (secure ? httpsRequest : httpRequest)(
      target,
      {
        method: options.method ?? (options.body === undefined ? 'GET' : 'POST'),
        agent: secure ? _agents.https : _agents.http,
        headers,
        signal: AbortSignal.timeout(options.timeoutMs),
      },
      (res) => {
        const chunks: Buffer[] = [];
        let bytes = 0;
        res.on('data', (chunk: Buffer) => {
          if (settled) return;
          bytes += chunk.length;
          if (bytes > maxBytes) {
            fail(new Error(`the answer is longer than ${maxBytes} bytes`));
            req.destroy(); // the rest is not read; the socket is not reused
            return;
          }
          chunks.push(chunk);
        });
        res.on('end', () => {
          if (settled) return;
          settled = true;
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') });
        });
        res.on('error', fail);
      },
    );
    // An aborted request's error is an AbortError whose cause is the timeout: report the timeout.
    req.on('error', (error) => fail(error.name === 'AbortError' && error.cause instanceof Error ? error.cause : error));
    req.end(options.body);
  });
}
