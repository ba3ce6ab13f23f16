/**
 * @module
 * Clients of the parent's co-signing service (cosigner.ts). The child asks it to
 * co-sign one edge, presenting the grant's credential (`httpCosign`); the parent's
 * runtime records a grant, presenting the service's admin token (`httpGrant`), as
 * `witness a2a send` does when the co-signer runs as its own process. Everything but
 * the expected answer is a failure: the signer releases nothing, or nothing is sent
 * (fail closed).
 */
import { type Signature, SignatureSchema } from '../attest/receipt.js';
import type { CosignRequest } from '../attest/signer.js';
import { WitnessError } from '../core/errors.js';
import { httpText } from '../core/http-client.js';
import type { Grant } from './cosigner.js';

/**
 * The child's side: a `CosignRequest` for the release signer that asks the parent's
 * service at `url` to co-sign the edge for `taskId`. Refusal, an unreachable service,
 * a bad answer and a timeout all throw, so the signer releases nothing (core's
 * `httpText`, not fetch: see core/http-client.ts).
 */
export function httpCosign(url: string, taskId: string, options: { token: string; timeoutMs?: number }): CosignRequest {
  const timeoutMs = options.timeoutMs ?? 10_000;
  return async (edge): Promise<Signature> => {
    const body = await _call(url, '/cosign', { task_id: taskId, edge }, options.token, timeoutMs, 200, 'co-sign');
    const sig = SignatureSchema.safeParse((body as { signature?: unknown })?.signature);
    if (!sig.success)
      throw new WitnessError('UNAVAILABLE', `the co-signer at ${url} answered without a well-formed signature`);
    return sig.data;
  };
}

/**
 * The parent's side: records `grant` with the co-signing service at `url`
 * (`POST /grants`, authenticated by the service's admin token) and returns the grant's
 * credential, to pass to the child with the delegation and to no one else.
 */
export async function httpGrant(
  url: string,
  grant: Grant,
  options: { adminToken: string; timeoutMs?: number },
): Promise<string> {
  const body = await _call(
    url,
    '/grants',
    {
      task_id: grant.taskId,
      child_deployer: grant.childDeployer,
      parent_digest: grant.parentDigest,
      expires_at: grant.expiresAt,
      ...(grant.edges !== undefined ? { edges: grant.edges } : {}),
    },
    options.adminToken,
    options.timeoutMs ?? 10_000,
    201,
    'record the grant',
  );
  const token = (body as { cosign_token?: unknown })?.cosign_token;
  if (typeof token !== 'string' || !/^[A-Za-z0-9_-]{43}$/.test(token))
    throw new WitnessError(
      'UNAVAILABLE',
      `the co-signer at ${url} answered the grant without a well-formed cosign_token`,
    );
  return token;
}

/** POSTs `payload` with a bearer token; the parsed JSON body when the status is `expected`, else a one-line failure. */
async function _call(
  url: string,
  path: string,
  payload: unknown,
  token: string,
  timeoutMs: number,
  expected: number,
  what: string,
): Promise<unknown> {
  let reply: { status: number; text: string };
  try {
    reply = await httpText(`${url.replace(/\/+$/, '')}${path}`, {
      method: 'POST',
      body: JSON.stringify(payload),
      headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${token}` },
      timeoutMs,
    });
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
  if (reply.status !== expected) {
    const message = (body as { error?: { message?: unknown } })?.error?.message;
    throw new WitnessError(
      'REFUSED',
      `the co-signer refused to ${what} (HTTP ${reply.status}): ${typeof message === 'string' ? message : reply.text.slice(0, 200)}`,
    );
  }
  return body;
}
