/**
 * @module
 * An OpenAI-compatible endpoint that refuses every request, for asking a runtime
 * about itself (its tool list) without any model answering — not even the one the
 * user passed with --model-endpoint — so the listing costs nothing and cannot act.
 * It keeps the JSON bodies it refused: a request names the tools the runtime would
 * have given the model (Codex lists them nowhere else).
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** Runs `fn` with the URL (`…/v1`) of an endpoint that answers every request with HTTP 400, and the bodies it refused so far. */
export async function withNoModel<T>(fn: (url: string, refused: unknown[]) => Promise<T>): Promise<T> {
  const refused: unknown[] = [];
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    try {
      refused.push(JSON.parse(Buffer.concat(chunks).toString('utf8')));
    } catch {
      // not JSON: nothing to learn from it
    }
    res.writeHead(400, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({
        error: {
          message: 'witness probe: this endpoint only lets the runtime list its tools; no model answers here',
          type: 'invalid_request_error',
        },
      }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    return await fn(`http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, refused);
  } finally {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
