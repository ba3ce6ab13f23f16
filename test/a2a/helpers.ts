// Shared fixtures for a2a tests: real keys, a directory trusting them, and a world of
// real servers on loopback (MCP tool, parent co-signer, child A2A agent).
import { randomUUID } from 'node:crypto';
import { type Message, type Part, Role, type SendMessageRequest } from '@a2a-js/sdk';
import { type ChildAgent, serveChildAgent } from '../../src/a2a/agent.js';
import type { AnswerExpectation } from '../../src/a2a/answer.js';
import { CosignService, type CosignerServer, serveCosigner } from '../../src/a2a/cosigner.js';
import type { Delegation } from '../../src/a2a/metadata.js';
import { delegationOf, signTask } from '../../src/a2a/parent.js';
import { textMessage } from '../../src/a2a/task-state.js';
import { serveEvidenceTool, type ToolServer } from '../../src/a2a/tool-server.js';
import { addKey, type DirectoryFile, emptyDirectory, KeyDirectory } from '../../src/attest/key-directory.js';
import { newSigningKey, publicJwk, type SigningKey } from '../../src/attest/keys.js';
import { type Receipt, receiptDigest } from '../../src/attest/receipt.js';

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

/** A text part as the SDK's types spell it. */
export function textPart(text: string): Part {
  return { content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: 'text/plain' };
}

/** A user message with the task as its one text part, as the SDK client sends it. */
export function userMessage(text: string, metadata: Record<string, unknown> = {}, taskId = ''): Message {
  return textMessage(Role.ROLE_USER, { taskId, contextId: '' }, text, metadata);
}

/** The SDK client's SendMessage parameters for one user message of `text`. */
export function userMessageRequest(text: string, metadata?: Record<string, unknown>): SendMessageRequest {
  return { tenant: '', message: userMessage(text, metadata), configuration: undefined, metadata: undefined };
}

/** A dag delegation as the parent prepares it (parent.ts's steps): task receipt signed, grant recorded with the world's co-signer. */
export async function dagDelegation(world: World, task: string): Promise<Delegation> {
  const path = await signTask(world.parent, task, 'dag', 60_000);
  const taskId = randomUUID();
  const token = world.service.grant({
    taskId,
    childDeployer: world.child.deployer,
    parentDigest: receiptDigest(path[0] as Receipt),
    expiresAt: Date.now() + 60_000,
  });
  return delegationOf(taskId, 'dag', path, token);
}

/** What the parent of `world` expects of the answer to `delegation` (none without one): its construction, its task receipt as the root, the world's child. */
export function expectation(world: Pick<World, 'child'>, delegation?: Delegation): AnswerExpectation {
  const root = delegation?.evidence?.path[0] as Receipt | undefined;
  return {
    construction: delegation?.construction ?? 'none',
    childDeployer: world.child.deployer,
    ...(root ? { taskReceipt: root } : {}),
  };
}
