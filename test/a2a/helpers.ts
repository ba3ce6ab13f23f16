// Shared fixtures for a2a tests: real keys, a directory trusting them, and a world of
// real servers on loopback (MCP tool, parent co-signer, child A2A agent).
import { randomUUID } from 'node:crypto';
import { type Message, Role } from '@a2a-js/sdk';
import { type ChildAgent, serveChildAgent } from '../../src/a2a/agent.js';
import { CosignService, type CosignerServer, serveCosigner } from '../../src/a2a/cosigner.js';
import { textMessage } from '../../src/a2a/task-state.js';
import { serveEvidenceTool, type ToolServer } from '../../src/a2a/tool-server.js';
import { addKey, type DirectoryFile, emptyDirectory, KeyDirectory } from '../../src/attest/key-directory.js';
import { newSigningKey, publicJwk, type SigningKey } from '../../src/attest/keys.js';
import { receiptDigest } from '../../src/attest/receipt.js';
import { createReleaseSigner } from '../../src/attest/signer.js';

export const DAY = 86_400_000;

export function trust(
  keys: SigningKey[],
  window = { notBefore: Date.now() - DAY, notAfter: Date.now() + DAY },
): { file: DirectoryFile; directory: KeyDirectory } {
  let file = emptyDirectory();
  for (const key of keys) file = addKey(file, publicJwk(key), window);
  return { file, directory: new KeyDirectory(file) };
}

export interface World {
  parent: SigningKey;
  child: SigningKey;
  directory: KeyDirectory;
  file: DirectoryFile;
  tool: ToolServer;
  service: CosignService;
  cosigner: CosignerServer;
  agent: ChildAgent;
  close(): Promise<void>;
}

export async function startWorld(options: { cosignTimeoutMs?: number } = {}): Promise<World> {
  const parent = newSigningKey('org-parent');
  const child = newSigningKey('org-child');
  const { file, directory } = trust([parent, child]);
  const tool = await serveEvidenceTool();
  const service = new CosignService(parent);
  const cosigner = await serveCosigner(service);
  const agent = await serveChildAgent({
    key: child,
    toolUrl: tool.url,
    cosigners: { [parent.deployer]: cosigner.url },
    cosignTimeoutMs: options.cosignTimeoutMs ?? 5000,
  });
  return {
    parent,
    child,
    directory,
    file,
    tool,
    service,
    cosigner,
    agent,
    async close() {
      await agent.close();
      await cosigner.close();
      await tool.close();
    },
  };
}

/** A dag delegation as the parent prepares it: task receipt signed, grant recorded with the world's co-signer. */
export async function dagDelegation(world: World, task: string) {
  const root = await createReleaseSigner({ key: world.parent, instance: 'parent' }).releaseOutput(Buffer.from(task), {
    construction: 'dag',
  });
  const taskId = randomUUID();
  const token = world.service.grant({
    taskId,
    childDeployer: world.child.deployer,
    parentDigest: receiptDigest(root),
    expiresAt: Date.now() + 60_000,
  });
  return { task_id: taskId, construction: 'dag', evidence: { path: [root] }, cosign_token: token };
}

/** A user message with the task as its one text part, as the SDK client sends it. */
export function userMessage(text: string, metadata: Record<string, unknown> = {}, taskId = ''): Message {
  return textMessage(Role.ROLE_USER, { taskId, contextId: '' }, text, metadata);
}
