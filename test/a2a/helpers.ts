// Shared fixtures for a2a tests: real keys, a directory trusting them, and a world of
// real servers on loopback (MCP tool, parent co-signer, child A2A agent).
import { randomUUID } from 'node:crypto';
import { type Part, Role, type SendMessageRequest } from '@a2a-js/sdk';
import { type ChildAgent, serveChildAgent } from '../../src/a2a/agent.js';
import { CosignService, type CosignerServer, serveCosigner } from '../../src/a2a/cosigner.js';
import { serveEvidenceTool, type ToolServer } from '../../src/a2a/tool-server.js';
import { addKey, type DirectoryFile, emptyDirectory, KeyDirectory } from '../../src/attest/key-directory.js';
import { newSigningKey, publicJwk, type SigningKey } from '../../src/attest/keys.js';

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

/** The SDK client's SendMessage parameters for one user message of `text`. */
export function userMessageRequest(text: string, metadata?: Record<string, unknown>): SendMessageRequest {
  return {
    tenant: '',
    message: {
      messageId: randomUUID(),
      contextId: '',
      taskId: '',
      role: Role.ROLE_USER,
      parts: [textPart(text)],
      metadata,
      extensions: [],
      referenceTaskIds: [],
    },
    configuration: undefined,
    metadata: undefined,
  };
}
