/**
 * @module
 * What every HTTP server of Witness (the mailbox, the A2A child agent, the co-signer,
 * the MCP evidence tool) shares: one error path — answers are JSON, a body is read up
 * to a configured limit and refused with a JSON 413 that names the limit, and an
 * unexpected failure is answered with a fixed message, never an HTML page, a stack
 * trace or a file path, which would tell a stranger how the server is laid out — and
 * listening on a port, with a listen error passed on as it came.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WitnessError } from './errors.js';

/** The option every server command takes to change its request body limit. */
export const MAX_REQUEST_BYTES_FLAG = '--max-request-bytes';

/** Writes `value` as the whole JSON answer, unless an answer has started (then the connection is dropped). */
export function sendJson(
  res: ServerResponse,
  status: number,
  value: unknown,
  headers: Record<string, string> = {},
): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const text = JSON.stringify(value);
  // A Content-Type in `headers` names a JSON media type of the protocol's own (application/a2a+json).
  res.writeHead(status, { 'Content-Type': 'application/json', ...headers, 'Content-Length': Buffer.byteLength(text) });
  res.end(text);
}

/** A JSON-RPC 2.0 error answer; `id` is null when the request's id could not be read. */
export function sendJsonRpcError(
  res: ServerResponse,
  status: number,
  code: number,
  message: string,
  id: string | number | null = null,
  headers: Record<string, string> = {},
): void {
  sendJson(res, status, { jsonrpc: '2.0', id, error: { code, message } }, headers);
}

/** The message of a 413: the limit, and how to raise it. */
export function tooLargeMessage(limit: number): string {
  return `Request body too large: the limit is ${limit} bytes. Send a smaller body, or start the server with a larger ${MAX_REQUEST_BYTES_FLAG}.`;
}

/**
 * The message of a JSON-RPC parse error (-32700): where the JSON broke, when the parser
 * says, never the text around it — V8 quotes the body, and an answer must not echo it.
 */
export function parseErrorMessage(error: unknown): string {
  const at = /position (\d+)/.exec(error instanceof Error ? error.message : '')?.[1];
  return `Parse error: the request body is not valid JSON${at === undefined ? '' : ` (broken at character ${at})`}.`;
}

/** What a failure the server did not foresee tells the client: that it happened, nothing about where. */
export const INTERNAL_ERROR_MESSAGE =
  'Internal error: the server failed while answering this request. Retry; if it persists, report it to the operator.';

/**
 * The request body, or undefined when it exceeds `limit` bytes: then the rest is
 * read and dropped (not kept), so the client can still read the 413 on a kept-alive
 * connection. A Content-Length over the limit is refused before any byte is read.
 */
export function readBody(req: IncomingMessage, limit: number): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length']);
    const chunks: Buffer[] = [];
    let size = 0;
    const overflow = () => {
      req.removeAllListeners('data');
      req.resume();
      resolve(undefined);
    };
    if (declared > limit) return overflow();
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) overflow();
      else chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

/** The largest body limit a server accepts: beyond it a body would not fit in one string. */
const LARGEST_LIMIT = 256 * 1024 * 1024;

/** A server's body limit from its options: a whole number of bytes from 1 to 256 MiB, or `fallback`. */
export function requestLimit(value: number | undefined, fallback: number): number {
  const limit = value ?? fallback;
  if (!Number.isInteger(limit) || limit < 1 || limit > LARGEST_LIMIT) {
    throw new WitnessError(
      'USAGE',
      `${MAX_REQUEST_BYTES_FLAG} must be a whole number of bytes from 1 to ${LARGEST_LIMIT}; got ${String(value)}.`,
    );
  }
  return limit;
}

/**
 * Listens on `host:port` and resolves with the server's base URL (`http://127.0.0.1:4100`);
 * rejects with Node's own error (port in use, host unknown or not ours), which the CLI
 * prints as one line.
 */
export function listen(server: Server, port: number, host: string): Promise<string> {
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    return Promise.reject(
      new WitnessError(
        'USAGE',
        `The port ${port} is not a TCP port; give a whole number from 0 to 65535 (0: any free port).`,
      ),
    );
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      const address = server.address() as AddressInfo;
      resolve(`http://${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}`);
    });
  });
}

/** Stops `server`: open connections are closed, then the listener. */
export async function closeServer(server: Server): Promise<void> {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}
