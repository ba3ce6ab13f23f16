/**
 * @module
 * The child's side of the co-signing protocol (cosigner.ts): ask the parent's service
 * to co-sign one edge, presenting the grant's credential. Everything but a well-formed
 * signature is a failure, so the release signer releases nothing (fail closed).
 */
import { Agent as HttpAgent, request as httpRequest } from 'node:http';
import { type Signature, SignatureSchema } from '../attest/receipt.js';
import type { CosignRequest } from '../attest/signer.js';
import { WitnessError } from '../core/errors.js';

/**
 * The child's side: a `CosignRequest` for the release signer that asks the parent's
 * service at `url` to co-sign the edge for `taskId`. Refusal, an unreachable service,
 * a bad answer and a timeout all throw, so the signer releases nothing. It uses
 * `node:http` with a keep-alive agent: on a loaded machine `fetch` adds milliseconds
 * per loopback round trip, which would be charged to the dag condition.
 */
export function httpCosign(url: string, taskId: string, options: { token: string; timeoutMs?: number }): CosignRequest {
  const timeoutMs = options.timeoutMs ?? 10_000;
  return async (edge): Promise<Signature> => {
    let reply: { status: number; text: string };
    try {
      reply = await _post(
        `${url.replace(/\/+$/, '')}/cosign`,
        JSON.stringify({ task_id: taskId, edge }),
        options.token,
        timeoutMs,
      );
    } catch (cause) {
      const timedOut = (cause as Error).name === 'TimeoutError';
      throw new WitnessError(
        timedOut ? 'TIMEOUT' : 'UNAVAILABLE',
        timedOut
          ? `the co-signer at ${url} did not answer within ${timeoutMs} ms`
          : `the co-signer at ${url} is unreachable (${(cause as Error).message})`,
        { cause },
      );
    }
    let body: unknown;
    try {
      body = JSON.parse(reply.text);
    } catch {
      throw new WitnessError(
        'UNAVAILABLE',
        `the co-signer at ${url} answered HTTP ${reply.status} with a body that is not JSON`,
      );
    }
    if (reply.status !== 200) {
      const message = (body as { error?: { message?: unknown } })?.error?.message;
      throw new WitnessError(
        'REFUSED',
        `the co-signer refused (HTTP ${reply.status}): ${typeof message === 'string' ? message : reply.text.slice(0, 200)}`,
      );
    }
    const sig = SignatureSchema.safeParse((body as { signature?: unknown })?.signature);
    if (!sig.success)
      throw new WitnessError('UNAVAILABLE', `the co-signer at ${url} answered without a well-formed signature`);
    return sig.data;
  };
}

const _agent = new HttpAgent({ keepAlive: true, maxSockets: 16 });

function _post(url: string, body: string, token: string, timeoutMs: number): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const headers = {
      'Content-Type': 'application/json',
      'Content-Length': Buffer.byteLength(body),
      Authorization: `Bearer ${token}`,
    };
    const req = httpRequest(
      url,
      { method: 'POST', agent: _agent, headers, signal: AbortSignal.timeout(timeoutMs) },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    req.on('error', (error) =>
      reject(error.name === 'AbortError' && error.cause instanceof Error ? error.cause : error),
    );
    req.end(body);
  });
}
