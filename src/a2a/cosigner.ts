/**
 * @module
 * The parent deployer's co-signing service (attest.md §5). It co-signs a dag edge only
 * for a delegation it issued — a pending grant naming the task id, the child deployer,
 * the parent receipt digest and an expiry — and each grant at most once. Anything else
 * is refused. The child side (`httpCosign`) turns refusal, an unreachable service and
 * a timeout alike into a failed release: no receipt, no result (fail closed).
 *
 * Wire protocol (JSON over HTTP, loopback by default):
 * - `POST /cosign` `{task_id, edge}` → 200 `{signature}` | 403 `{error}` refused | 400 bad body
 * - `POST /grants` (Authorization: Bearer ADMIN_TOKEN) `{task_id, child_deployer, parent_digest, expires_at}` → 201
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer, Agent as HttpAgent, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { z } from 'zod';
import { createCosigner } from '../attest/ancestry/dag.js';
import type { SigningKey } from '../attest/keys.js';
import { ReceiptSchema, type Signature, SignatureSchema, type UnsignedReceipt } from '../attest/receipt.js';
import type { CosignRequest } from '../attest/signer.js';
import { WitnessError } from '../core/errors.js';

export interface Grant {
  taskId: string;
  childDeployer: string;
  parentDigest: string;
  /** ms since the epoch. */
  expiresAt: number;
}

const EdgeSchema = ReceiptSchema.omit({ signatures: true });
const CosignBodySchema = z.strictObject({ task_id: z.string().min(1).max(128), edge: EdgeSchema });
const GrantBodySchema = z.strictObject({ task_id: z.string().min(1).max(128), child_deployer: z.string().min(1).max(128), parent_digest: z.string().regex(/^[0-9a-f]{64}$/), expires_at: z.number().int() });

/** The parent's pending grants and its co-signing key, in one process. */
export class CosignService {
  readonly #key: SigningKey;
  readonly #grants = new Map<string, Grant>();
  readonly #clock: () => number;

  constructor(key: SigningKey, options: { clock?: () => number } = {}) {
    this.#key = key;
    this.#clock = options.clock ?? Date.now;
  }

  get deployer(): string {
    return this.#key.deployer;
  }

  /** Records a delegation this parent issued; the next co-signature for `taskId` uses it up. */
  grant(grant: Grant): void {
    this.#grants.set(grant.taskId, grant);
  }

  /** Co-signs `edge` for `taskId`, or throws `ABORTED` with the refusal. */
  cosign(taskId: string, edge: UnsignedReceipt): Signature {
    const grant = this.#grants.get(taskId);
    if (!grant) throw new WitnessError('ABORTED', `${this.#key.deployer} refused to co-sign: it issued no pending delegation for task ${taskId}.`);
    const cosigner = createCosigner(this.#key, (e) => {
      if (e.parent !== grant.parentDigest) return `the edge names another parent receipt than the one delegated with task ${taskId}`;
      if (e.deployer !== grant.childDeployer) return `task ${taskId} was delegated to ${grant.childDeployer}, not ${e.deployer}`;
      if (this.#clock() >= grant.expiresAt) return `the grant for task ${taskId} expired at ${new Date(grant.expiresAt).toISOString()}`;
      return true;
    });
    const signature = cosigner.cosign(edge);
    this.#grants.delete(taskId); // one edge per delegation
    return signature;
  }
}

export interface CosignerServerOptions {
  host?: string;
  port?: number;
  /** Token required on POST /grants (default: random, see `adminToken`). */
  adminToken?: string;
}

export interface CosignerServer {
  url: string;
  adminToken: string;
  close(): Promise<void>;
}

const MAX_BODY = 64 * 1024;

/** Serves `service` over HTTP; binds 127.0.0.1 unless told otherwise. */
export async function serveCosigner(service: CosignService, options: CosignerServerOptions = {}): Promise<CosignerServer> {
  const host = options.host ?? '127.0.0.1';
  const adminToken = options.adminToken ?? randomBytes(24).toString('base64url');
  const server: Server = createServer((req, res) => {
    _route(service, adminToken, req, res).catch((error: unknown) => _json(res, 500, { error: { code: 'INTERNAL', message: (error as Error).message } }));
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => resolve());
  });
  const address = server.address() as AddressInfo;
  const shown = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    url: `http://${shown}:${address.port}`,
    adminToken,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

async function _route(service: CosignService, adminToken: string, req: IncomingMessage, res: ServerResponse): Promise<void> {
  if (req.method !== 'POST' || (req.url !== '/cosign' && req.url !== '/grants')) return _json(res, 404, { error: { code: 'NOT_FOUND', message: 'POST /cosign or POST /grants.' } });
  const body = await _readJson(req);
  if (!body.ok) return _json(res, 400, { error: { code: 'BAD_REQUEST', message: body.message } });
  if (req.url === '/grants') {
    if (!_tokenMatches(req.headers.authorization, adminToken)) return _json(res, 401, { error: { code: 'UNAUTHORIZED', message: 'POST /grants needs "Authorization: Bearer ADMIN_TOKEN".' } });
    const g = GrantBodySchema.safeParse(body.value);
    if (!g.success) return _json(res, 400, { error: { code: 'BAD_REQUEST', message: `Bad grant: ${_issue(g.error)}` } });
    service.grant({ taskId: g.data.task_id, childDeployer: g.data.child_deployer, parentDigest: g.data.parent_digest, expiresAt: g.data.expires_at });
    return _json(res, 201, { ok: true });
  }
  const c = CosignBodySchema.safeParse(body.value);
  if (!c.success) return _json(res, 400, { error: { code: 'BAD_REQUEST', message: `Bad co-sign request: ${_issue(c.error)}` } });
  try {
    return _json(res, 200, { signature: service.cosign(c.data.task_id, c.data.edge) });
  } catch (error) {
    if (error instanceof WitnessError && error.code === 'ABORTED') return _json(res, 403, { error: { code: 'REFUSED', message: error.message } });
    throw error;
  }
}

function _tokenMatches(header: string | undefined, token: string): boolean {
  const given = Buffer.from(/^Bearer\s+(\S+)$/i.exec(header ?? '')?.[1] ?? '');
  const expected = Buffer.from(token);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

function _issue(error: z.ZodError): string {
  const issue = error.issues[0];
  return `${issue?.path.join('.') || '(root)'}: ${issue?.message}`;
}

async function _readJson(req: IncomingMessage): Promise<{ ok: true; value: unknown } | { ok: false; message: string }> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY) return { ok: false, message: `The body exceeds ${MAX_BODY} bytes.` };
    chunks.push(chunk as Buffer);
  }
  try {
    return { ok: true, value: JSON.parse(Buffer.concat(chunks).toString('utf8')) };
  } catch (error) {
    return { ok: false, message: `The body is not JSON: ${(error as Error).message}` };
  }
}

function _json(res: ServerResponse, status: number, value: unknown): void {
  const text = JSON.stringify(value);
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) });
  res.end(text);
}

/**
 * The child's side: a `CosignRequest` for the release signer that asks the parent's
 * service at `url` to co-sign the edge for `taskId`. Refusal, an unreachable service,
 * a bad answer and a timeout all throw, so the signer releases nothing. It uses
 * `node:http` with a keep-alive agent: on a loaded machine `fetch` adds milliseconds
 * per loopback round trip, which would be charged to the dag condition.
 */
export function httpCosign(url: string, taskId: string, options: { timeoutMs?: number } = {}): CosignRequest {
  const timeoutMs = options.timeoutMs ?? 10_000;
  return async (edge) => {
    let reply: { status: number; text: string };
    try {
      reply = await _post(`${url.replace(/\/+$/, '')}/cosign`, JSON.stringify({ task_id: taskId, edge }), timeoutMs);
    } catch (cause) {
      const timedOut = (cause as Error).name === 'TimeoutError';
      throw new WitnessError('ABORTED', timedOut ? `the co-signer at ${url} did not answer within ${timeoutMs} ms` : `the co-signer at ${url} is unreachable (${(cause as Error).message})`, { cause });
    }
    let body: unknown;
    try {
      body = JSON.parse(reply.text);
    } catch {
      throw new WitnessError('ABORTED', `the co-signer at ${url} answered HTTP ${reply.status} with a body that is not JSON`);
    }
    if (reply.status !== 200) {
      const message = (body as { error?: { message?: unknown } })?.error?.message;
      throw new WitnessError('ABORTED', `the co-signer refused (HTTP ${reply.status}): ${typeof message === 'string' ? message : reply.text.slice(0, 200)}`);
    }
    const sig = SignatureSchema.safeParse((body as { signature?: unknown })?.signature);
    if (!sig.success) throw new WitnessError('ABORTED', `the co-signer at ${url} answered without a well-formed signature`);
    return sig.data;
  };
}

const _agent = new HttpAgent({ keepAlive: true, maxSockets: 16 });

function _post(url: string, body: string, timeoutMs: number): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: 'POST', agent: _agent, headers: { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) }, signal: AbortSignal.timeout(timeoutMs) }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', (error) => reject(error.name === 'AbortError' && error.cause instanceof Error ? error.cause : error));
    req.end(body);
  });
}
