/**
 * @module
 * The parent deployer's co-signing service (attest.md §5). It co-signs a dag edge only
 * for a delegation it issued — a pending grant naming the task id, the child deployer,
 * the parent receipt digest and an expiry — each grant at most once (twice for a grant
 * of two edges: a streamed answer), and only for the holder of the grant's credential. Anything else is refused, and a refusal never uses
 * the grant up. The child side (`httpCosign`, cosign-client.ts) turns refusal, an
 * unreachable service and a timeout alike into a failed release (fail closed).
 *
 * The credential: `grant` returns a random token (256 bits) and keeps only its SHA-256.
 * The parent hands it to the child with the delegation; the child presents it as
 * `Authorization: Bearer`. Knowing a task id and a parent digest is not enough.
 *
 * Wire protocol (JSON over HTTP, loopback by default; Host and Origin checked):
 * - `POST /grants` (Authorization: Bearer ADMIN_TOKEN) `{task_id, child_deployer, parent_digest, expires_at, edges?}` → 201 `{ok, cosign_token}`
 * - `POST /cosign` (Authorization: Bearer COSIGN_TOKEN) `{task_id, edge}` → 200 `{signature}` | 403 refused | 401 no credential | 400 bad body
 */
import { hash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { z } from 'zod';
import { createCosigner } from '../attest/ancestry/dag.js';
import { readNamedFile } from '../attest/files.js';
import { Sha256HexSchema } from '../attest/formats.js';
import type { SigningKey } from '../attest/keys.js';
import { ReceiptSchema, type Signature, type UnsignedReceipt } from '../attest/receipt.js';
import { WitnessError } from '../core/errors.js';
import { type FrontRequest, JSON_ERRORS, serveFront } from '../core/http-front.js';
import { requestLimit, sendJson } from '../core/http-server.js';
import { parseStrictJson } from '../core/strict-json.js';
import { checkWellFormedValue } from '../core/text.js';
import type { ServerAccessOptions } from './access.js';

export { httpCosign, httpGrant } from './cosign-client.js';

export interface Grant {
  taskId: string;
  childDeployer: string;
  parentDigest: string;
  /** ms since the epoch. */
  expiresAt: number;
  /**
   * How many edges the grant co-signs (default 1): one answer is one edge; a streamed
   * answer is two — the stream's final receipt and the completed task's artifact
   * (stream-release.ts) — so a parent that asks for a stream grants STREAMED_GRANT_EDGES.
   */
  edges?: number;
}

/** The edges of a grant for a streamed answer under dag: the stream's final receipt, and the artifact's. */
export const STREAMED_GRANT_EDGES = 2;

interface _Pending extends Grant {
  /** SHA-256 of the grant's credential: the token itself is never kept. */
  tokenHash: Buffer;
  /** Co-signatures it may still give. */
  left: number;
}

const EdgeSchema = ReceiptSchema.omit({ signatures: true });
const CosignBodySchema = z.strictObject({ task_id: z.string().min(1).max(128), edge: EdgeSchema });
const GrantBodySchema = z.strictObject({
  task_id: z.string().min(1).max(128),
  child_deployer: z.string().min(1).max(128),
  parent_digest: Sha256HexSchema,
  expires_at: z.number().int(),
  edges: z.int().min(1).max(STREAMED_GRANT_EDGES).optional(),
});

/** The parent's pending grants and its co-signing key, in one process. */
export class CosignService {
  readonly #key: SigningKey;
  readonly #grants = new Map<string, _Pending>();
  readonly #clock: () => number;

  constructor(key: SigningKey, options: { clock?: () => number } = {}) {
    this.#key = key;
    this.#clock = options.clock ?? Date.now;
  }

  get deployer(): string {
    return this.#key.deployer;
  }

  /**
   * Records a delegation this parent issued and returns its credential: the next
   * co-signature for `taskId` by whoever presents it uses the grant up. Give it to the
   * child with the delegation, and to no one else.
   */
  grant(grant: Grant): string {
    const token = randomBytes(32).toString('base64url');
    const left = grant.edges ?? 1;
    if (!(Number.isInteger(left) && left >= 1 && left <= STREAMED_GRANT_EDGES))
      throw new WitnessError(
        'USAGE',
        `A grant co-signs 1 edge, or ${STREAMED_GRANT_EDGES} for a streamed answer; not ${left}.`,
      );
    this.#grants.set(grant.taskId, { ...grant, tokenHash: _sha256(token), left });
    return token;
  }

  /** Co-signs `edge` for `taskId` when `token` is the grant's credential, or throws `REFUSED` with the refusal. */
  cosign(taskId: string, edge: UnsignedReceipt, token: string): Signature {
    const grant = this.#grants.get(taskId);
    if (!grant)
      throw new WitnessError(
        'REFUSED',
        `${this.#key.deployer} refused to co-sign: it issued no pending delegation for task ${taskId}.`,
      );
    if (!timingSafeEqual(_sha256(token), grant.tokenHash))
      throw new WitnessError(
        'REFUSED',
        `${this.#key.deployer} refused to co-sign: the credential does not match the grant for task ${taskId}.`,
      );
    const cosigner = createCosigner(this.#key, (e) => {
      if (e.parent !== grant.parentDigest)
        return `the edge names another parent receipt than the one delegated with task ${taskId}`;
      if (e.deployer !== grant.childDeployer)
        return `task ${taskId} was delegated to ${grant.childDeployer}, not ${e.deployer}`;
      if (this.#clock() >= grant.expiresAt)
        return `the grant for task ${taskId} expired at ${new Date(grant.expiresAt).toISOString()}`;
      return true;
    });
    const signature = cosigner.cosign(edge);
    // One answer per delegation (two edges when streamed); only a co-signature uses the grant up.
    if (--grant.left === 0) this.#grants.delete(taskId);
    return signature;
  }
}

function _sha256(text: string): Buffer {
  return hash('sha256', text, 'buffer');
}

export interface CosignerServerOptions extends ServerAccessOptions {
  /** Token required on POST /grants (default: random, see `adminToken`). */
  adminToken?: string;
}

export interface CosignerServer {
  url: string;
  adminToken: string;
  close(): Promise<void>;
}

/**
 * The admin token kept in `path` (`witness a2a cosigner --admin-token-file`): one token
 * of 16–256 printable characters without spaces, read by the service and by the
 * parent's runtime that records grants with it.
 */
export function readAdminTokenFile(path: string): string {
  const token = readNamedFile(path, 'admin token file', {
    whenMissing: 'Give the file the co-signer was started with (witness a2a cosigner --admin-token-file FILE).',
  })
    .toString('utf8')
    .trim();
  if (!/^[\x21-\x7e]{16,256}$/.test(token))
    throw new WitnessError(
      'USAGE',
      `The admin token file ${path} must hold one token of 16–256 printable characters without spaces.`,
    );
  return token;
}

/** Grants and edge manifests are small: a body larger than this gets a JSON 413 unless configured. */
export const DEFAULT_COSIGNER_MAX_REQUEST_BYTES = 64 * 1024;

/** Serves `service` over HTTP; binds 127.0.0.1 unless told otherwise. */
export async function serveCosigner(
  service: CosignService,
  options: CosignerServerOptions = {},
): Promise<CosignerServer> {
  const limit = requestLimit(options.maxRequestBytes, DEFAULT_COSIGNER_MAX_REQUEST_BYTES);
  const adminToken = options.adminToken ?? randomBytes(24).toString('base64url');
  const http = await serveFront(
    { what: 'the co-signer', ...options, limit, errors: JSON_ERRORS, keepAliveTimeout: 60_000 },
    async (req, res, request) => {
      const answer = await _route(service, adminToken, req, request);
      if (answer) sendJson(res, answer.status, answer.body);
    },
  );
  return { url: http.url, adminToken, close: () => http.close() };
}

/**
 * Checks in the order that reveals least to a stranger (after the front's Host/Origin
 * guard): route, credential present, then the body. Returns the answer, or undefined
 * once the request was refused.
 */
async function _route(
  service: CosignService,
  adminToken: string,
  req: IncomingMessage,
  request: FrontRequest,
): Promise<{ status: number; body: unknown } | undefined> {
  if (req.method !== 'POST' || (req.url !== '/cosign' && req.url !== '/grants'))
    return request.refuse(404, 'NOT_FOUND', 'POST /cosign or POST /grants.');
  const bearer = /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? '')?.[1];
  if (req.url === '/grants' && !_tokenMatches(bearer, adminToken))
    return request.refuse(401, 'UNAUTHORIZED', 'POST /grants needs "Authorization: Bearer ADMIN_TOKEN".');
  if (req.url === '/cosign' && !bearer)
    return request.refuse(
      401,
      'UNAUTHORIZED',
      'POST /cosign needs "Authorization: Bearer COSIGN_TOKEN": the credential the parent received with the grant and passed to the child with the delegation.',
    );
  const bytes = await request.bytes();
  if (bytes === undefined) return undefined;
  const body = _parseBody(bytes, req.url);
  if (!body.ok) return request.refuse(400, 'BAD_REQUEST', body.message);
  if (req.url === '/grants') {
    const g = GrantBodySchema.safeParse(body.value);
    if (!g.success) return request.refuse(400, 'BAD_REQUEST', `Bad grant: ${_issue(g.error)}`);
    const token = service.grant({
      taskId: g.data.task_id,
      childDeployer: g.data.child_deployer,
      parentDigest: g.data.parent_digest,
      expiresAt: g.data.expires_at,
      ...(g.data.edges !== undefined ? { edges: g.data.edges } : {}),
    });
    return { status: 201, body: { ok: true, cosign_token: token } };
  }
  const c = CosignBodySchema.safeParse(body.value);
  if (!c.success) return request.refuse(400, 'BAD_REQUEST', `Bad co-sign request: ${_issue(c.error)}`);
  try {
    return { status: 200, body: { signature: service.cosign(c.data.task_id, c.data.edge, bearer as string) } };
  } catch (error) {
    if (error instanceof WitnessError && error.code === 'REFUSED') return request.refuse(403, 'REFUSED', error.message);
    throw error;
  }
}

function _tokenMatches(given: string | undefined, token: string): boolean {
  const a = Buffer.from(given ?? '');
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}

function _issue(error: z.ZodError): string {
  const issue = error.issues[0];
  return `${issue?.path.join('.') || '(root)'}: ${issue?.message}`;
}

/** The body as strict JSON (no duplicate keys) holding well-formed text only, or why not. */
function _parseBody(
  bytes: Buffer,
  url: string | undefined,
): { ok: true; value: unknown } | { ok: false; message: string } {
  try {
    const value = parseStrictJson(bytes.toString('utf8'), { what: 'the body' });
    checkWellFormedValue(value, url === '/grants' ? 'the grant' : 'the co-sign request');
    return { ok: true, value };
  } catch (error) {
    if (!(error instanceof WitnessError)) throw error;
    return { ok: false, message: error.message };
  }
}
