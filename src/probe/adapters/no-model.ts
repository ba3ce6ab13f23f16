/**
 * @module
 * An OpenAI-compatible endpoint that refuses every request, for asking a runtime
 * about itself (its tool list) without any model answering — not even the one the
 * user passed with --model-endpoint — so the listing costs nothing and cannot act.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** Runs `fn` with the URL (`…/v1`) of an endpoint that answers every request with HTTP 400. */
export async function withNoModel<T>(fn: (url: string) => Promise<T>): Promise<T> {
  const server = createServer((req, res) => {
    req.resume();
    res.writeHead(400, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: { message: 'witness probe: this endpoint only lets the runtime list its tools; no model answers here', type: 'invalid_request_error' } }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    return await fn(`http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`);
  } finally {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
