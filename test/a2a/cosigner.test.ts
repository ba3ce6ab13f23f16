import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ChildAgent, serveChildAgent } from '../../src/a2a/agent.js';
import { CosignService, httpCosign, serveCosigner } from '../../src/a2a/cosigner.js';
import { delegate } from '../../src/a2a/parent.js';
import { createReleaseSigner, newSigningKey, receiptDigest, type UnsignedReceipt } from '../../src/attest/index.js';
import { startWorld, type World } from './helpers.js';

let world: World;
const extra: Array<{ close(): Promise<void> | void }> = [];
beforeAll(async () => {
  world = await startWorld();
});
afterAll(async () => {
  for (const e of extra) await e.close();
  await world.close();
});

/** Another child agent (same key and tool) whose operator configured `cosignerUrl` for the parent. */
async function childWith(cosignerUrl: string, cosignTimeoutMs = 5000): Promise<ChildAgent> {
  const agent = await serveChildAgent({
    key: world.child,
    toolUrl: world.tool.url,
    cosigners: { 'org-parent': cosignerUrl },
    cosignTimeoutMs,
  });
  extra.push(agent);
  return agent;
}

const parentOptions = () => ({ key: world.parent, directory: world.directory, cosigner: world.service });

/** A TCP server that accepts connections and never answers. */
async function blackHole(): Promise<string> {
  const server: Server = createServer(() => undefined);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const sockets = new Set<import('node:net').Socket>();
  server.on('connection', (s) => sockets.add(s));
  extra.push({
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  });
  const address = server.address() as import('node:net').AddressInfo;
  return `http://127.0.0.1:${address.port}`;
}

/** A port that was just free: nothing listens there. */
async function closedPort(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const port = (server.address() as import('node:net').AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}

describe('fail closed: a dag task without a co-signature returns an error, never a result', () => {
  it('when the co-signer is down', async () => {
    const agent = await childWith(await closedPort());
    await expect(delegate(agent.url, 'Inspect lot 1.', 'dag', parentOptions())).rejects.toThrow(
      /returned no result.*unreachable/,
    );
  });

  it('when the co-signer answers later than the timeout', async () => {
    const agent = await childWith(await blackHole(), 300);
    const started = Date.now();
    await expect(delegate(agent.url, 'Inspect lot 2.', 'dag', parentOptions())).rejects.toThrow(
      /returned no result.*(within 300 ms)/,
    );
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('when the co-signer refuses because its deployer issued no such delegation', async () => {
    const stranger = new CosignService(world.parent); // the parent's key, but no grants recorded
    const server = await serveCosigner(stranger);
    extra.push(server);
    const agent = await childWith(server.url);
    await expect(delegate(agent.url, 'Inspect lot 3.', 'dag', parentOptions())).rejects.toThrow(
      /refused.*issued no pending delegation/,
    );
  });

  it('when no co-signer is configured for the parent deployer', async () => {
    const agent = await serveChildAgent({ key: world.child, toolUrl: world.tool.url });
    extra.push(agent);
    await expect(delegate(agent.url, 'Inspect lot 4.', 'dag', parentOptions())).rejects.toThrow(
      /No co-signing service is configured for the parent deployer org-parent/,
    );
  });

  it('while the same child still answers chain tasks, which need no co-signature', async () => {
    const agent = await childWith(await closedPort());
    expect((await delegate(agent.url, 'Inspect lot 5.', 'chain', parentOptions())).verdict.ok).toBe(true);
  });
});

describe('the co-signing service', () => {
  const grantFor = async (service: CosignService, childDeployer = 'org-child', expiresAt = Date.now() + 60_000) => {
    const root = await createReleaseSigner({ key: world.parent, instance: 'p' }).releaseOutput(Buffer.from('task'), {
      construction: 'dag',
    });
    const taskId = randomUUID();
    const token = service.grant({ taskId, childDeployer, parentDigest: receiptDigest(root), expiresAt });
    return { root, taskId, token };
  };
  /** The edge the child would send, captured from the real signer. */
  const edgeFrom = async (root: Parameters<typeof receiptDigest>[0], key = world.child) => {
    let captured: UnsignedReceipt | undefined;
    await createReleaseSigner({
      key,
      instance: 'c',
      cosign: (edge) => {
        captured = edge;
        throw new Error('captured');
      },
    })
      .releaseOutput(Buffer.from('answer'), { ancestors: [root], construction: 'dag' })
      .catch(() => undefined);
    return captured as UnsignedReceipt;
  };

  it('co-signs an edge it granted, once', async () => {
    const service = new CosignService(world.parent);
    const { root, taskId, token } = await grantFor(service);
    const edge = await edgeFrom(root);
    expect(service.cosign(taskId, edge, token).key_id).toBe(world.parent.kid);
    expect(() => service.cosign(taskId, edge, token)).toThrow(/issued no pending delegation/);
  });

  it('co-signs a streamed answer’s grant of two edges twice, and no more', async () => {
    const service = new CosignService(world.parent);
    const root = await createReleaseSigner({ key: world.parent, instance: 'p' }).releaseOutput(Buffer.from('task'), {
      construction: 'dag',
    });
    const taskId = randomUUID();
    const token = service.grant({
      taskId,
      childDeployer: 'org-child',
      parentDigest: receiptDigest(root),
      expiresAt: Date.now() + 60_000,
      edges: 2,
    });
    const edge = await edgeFrom(root);
    expect(service.cosign(taskId, edge, token).key_id).toBe(world.parent.kid);
    expect(service.cosign(taskId, await edgeFrom(root), token).key_id).toBe(world.parent.kid);
    expect(() => service.cosign(taskId, edge, token)).toThrow(/issued no pending delegation/);
  });

  it('records no grant of more edges than a streamed answer needs (nor of none)', async () => {
    const service = new CosignService(world.parent);
    for (const edges of [0, 3, 1.5])
      expect(() =>
        service.grant({ taskId: 't', childDeployer: 'org-child', parentDigest: 'a'.repeat(64), expiresAt: 1, edges }),
      ).toThrow(/A grant co-signs 1 edge, or 2 for a streamed answer/);
    const server = await serveCosigner(service, { adminToken: 'secret-token' });
    extra.push(server);
    const refused = await fetch(`${server.url}/grants`, {
      method: 'POST',
      headers: { Authorization: 'Bearer secret-token' },
      body: JSON.stringify({
        task_id: 't',
        child_deployer: 'c',
        parent_digest: 'a'.repeat(64),
        expires_at: 1,
        edges: 3,
      }),
    });
    expect([refused.status, ((await refused.json()) as { error: { message: string } }).error.message]).toEqual([
      400,
      expect.stringMatching(/^Bad grant: edges: /),
    ]);
  });

  it('refuses an edge released by another deployer than the grant names', async () => {
    const service = new CosignService(world.parent);
    const { root, taskId, token } = await grantFor(service);
    const edge = await edgeFrom(root, newSigningKey('org-other'));
    expect(() => service.cosign(taskId, edge, token)).toThrow(/delegated to org-child, not org-other/);
  });

  it('refuses an edge naming another parent receipt', async () => {
    const service = new CosignService(world.parent);
    const { taskId, token } = await grantFor(service);
    const { root: other } = await grantFor(new CosignService(world.parent));
    const edge = await edgeFrom(other);
    expect(() => service.cosign(taskId, edge, token)).toThrow(/another parent receipt/);
  });

  it('refuses after the grant expired', async () => {
    let now = Date.now();
    const service = new CosignService(world.parent, { clock: () => now });
    const { root, taskId, token } = await grantFor(service, 'org-child', now + 1000);
    const edge = await edgeFrom(root);
    now += 1000;
    expect(() => service.cosign(taskId, edge, token)).toThrow(/expired/);
  });

  it('refuses an edge with an empty or inverted validity window, and leaves the grant usable', async () => {
    const service = new CosignService(world.parent);
    const { root, taskId, token } = await grantFor(service);
    const edge = await edgeFrom(root);
    expect(() => service.cosign(taskId, { ...edge, not_after: edge.issued_at }, token)).toThrow(
      /not_after must be later than issued_at/,
    );
    expect(() =>
      service.cosign(taskId, { ...edge, issued_at: edge.not_after, not_after: edge.issued_at }, token),
    ).toThrow(/not_after must be later than issued_at/);
    expect(service.cosign(taskId, edge, token).key_id).toBe(world.parent.kid);
  });

  it('refuses a co-signature without the grant credential, and leaves the grant usable', async () => {
    const service = new CosignService(world.parent);
    const { root, taskId, token } = await grantFor(service);
    const edge = await edgeFrom(root);
    expect(() => service.cosign(taskId, edge, 'A'.repeat(43))).toThrow(/credential/);
    expect(() => service.cosign(taskId, edge, '')).toThrow(/credential/);
    expect(service.cosign(taskId, edge, token).key_id).toBe(world.parent.kid);
  });

  it('gives each grant its own credential', async () => {
    const service = new CosignService(world.parent);
    const first = await grantFor(service);
    const second = await grantFor(service);
    expect(first.token).not.toBe(second.token);
    const edge = await edgeFrom(second.root);
    expect(() => service.cosign(second.taskId, edge, first.token)).toThrow(/credential/);
  });

  it('answers POST /grants without the admin token with 401', async () => {
    const response = await fetch(`${world.cosigner.url}/grants`, { method: 'POST', body: '{}' });
    expect(response.status).toBe(401);
  });

  it('answers POST /cosign without "Authorization: Bearer" with 401, and the grant stays usable', async () => {
    const { root, taskId, token } = await grantFor(world.service);
    const edge = await edgeFrom(root);
    const response = await fetch(`${world.cosigner.url}/cosign`, {
      method: 'POST',
      body: JSON.stringify({ task_id: taskId, edge }),
    });
    expect(response.status).toBe(401);
    expect((await httpCosign(world.cosigner.url, taskId, { token })(edge, 'org-parent')).key_id).toBe(world.parent.kid);
  });

  it('answers POST /cosign with a wrong credential with 403, and the grant stays usable', async () => {
    const { root, taskId, token } = await grantFor(world.service);
    const edge = await edgeFrom(root);
    await expect(httpCosign(world.cosigner.url, taskId, { token: 'B'.repeat(43) })(edge, 'org-parent')).rejects.toThrow(
      /HTTP 403.*credential/,
    );
    expect((await httpCosign(world.cosigner.url, taskId, { token })(edge, 'org-parent')).key_id).toBe(world.parent.kid);
  });

  it('answers an edge holding a lone surrogate with 400 naming the field, not 500', async () => {
    const { root, taskId, token } = await grantFor(world.service);
    const edge = await edgeFrom(root);
    const body = JSON.stringify({ task_id: taskId, edge: { ...edge, instance: 'X' } }).replace(
      '"instance":"X"',
      '"instance":"\\ud800"',
    );
    const response = await fetch(`${world.cosigner.url}/cosign`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${token}` },
      body,
    });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: { message: string } }).error.message).toMatch(
      /edge\.instance holds a lone surrogate/,
    );
    expect((await httpCosign(world.cosigner.url, taskId, { token })(edge, 'org-parent')).key_id).toBe(world.parent.kid);
  });

  it('answers a co-sign body with a duplicate key with 400', async () => {
    const response = await fetch(`${world.cosigner.url}/cosign`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${'A'.repeat(43)}` },
      body: '{"task_id":"a","task_id":"b"}',
    });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: { message: string } }).error.message).toMatch(
      /duplicate key "task_id"/,
    );
  });

  it('answers a co-sign body that is not JSON with 400 and says why', async () => {
    const response = await fetch(`${world.cosigner.url}/cosign`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${'A'.repeat(43)}` },
      body: 'not json',
    });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: { message: string } }).error.message).toMatch(/not valid JSON/);
  });

  it('answers a body over 64 KiB with a JSON 413 naming the limit, and takes another limit when given', async () => {
    const big = await fetch(`${world.cosigner.url}/cosign`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${'A'.repeat(43)}` },
      body: JSON.stringify({ task_id: 'x', pad: 'x'.repeat(70_000) }),
    });
    expect([big.status, big.headers.get('content-type')]).toEqual([413, 'application/json']);
    expect(((await big.json()) as { error: { code: string; message: string } }).error).toMatchObject({
      code: 'TOO_LARGE',
      message: expect.stringMatching(/the limit is 65536 bytes.*--max-request-bytes/),
    });
    const small = await serveCosigner(new CosignService(world.parent), { maxRequestBytes: 100 });
    try {
      const refused = await fetch(`${small.url}/cosign`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${'A'.repeat(43)}` },
        body: JSON.stringify({ task_id: 'x'.repeat(100) }),
      });
      expect(refused.status).toBe(413);
    } finally {
      await small.close();
    }
  });

  it('answers a co-sign request without an edge with 400 naming the field', async () => {
    const response = await fetch(`${world.cosigner.url}/cosign`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${'A'.repeat(43)}` },
      body: JSON.stringify({ task_id: 'x' }),
    });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: { message: string } }).error.message).toMatch(/edge/);
  });

  it('records a grant over HTTP with the admin token, then co-signs that edge', async () => {
    const service = new CosignService(world.parent);
    const server = await serveCosigner(service, { adminToken: 'secret-token' });
    extra.push(server);
    const root = await createReleaseSigner({ key: world.parent, instance: 'p' }).releaseOutput(Buffer.from('task'), {
      construction: 'dag',
    });
    const grant = {
      task_id: 't-http',
      child_deployer: 'org-child',
      parent_digest: receiptDigest(root),
      expires_at: Date.now() + 60_000,
    };
    const created = await fetch(`${server.url}/grants`, {
      method: 'POST',
      headers: { Authorization: 'Bearer secret-token' },
      body: JSON.stringify(grant),
    });
    expect(created.status).toBe(201);
    const { cosign_token: token } = (await created.json()) as { cosign_token: string };
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const signature = await httpCosign(server.url, 't-http', { token })(await edgeFrom(root), 'org-parent');
    expect(signature.key_id).toBe(world.parent.kid);
  });

  it('makes the client throw REFUSED when the service rejects the request', async () => {
    await expect(
      httpCosign(world.cosigner.url, 'never-granted', { token: 'A'.repeat(43) })({} as UnsignedReceipt, 'org-parent'),
    ).rejects.toMatchObject({ code: 'REFUSED', message: expect.stringMatching(/HTTP 400/) });
  });
});
