/**
 * The folder a CLI test of `witness a2a …` works in: the parent's and the child's key
 * files (real Ed25519 keys made here), a key directory trusting both (`trusted.json`),
 * the server processes it starts (`servers`), the scripted children it serves
 * (`scripted`), and the CLI run in-process in that folder (`cli`). `close` stops and
 * removes everything.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeDirectoryFile } from '../../src/attest/key-directory.js';
import { newSigningKey, type SigningKey, writeKeyFile } from '../../src/attest/keys.js';
import { trust } from '../a2a/helpers.js';
import type { ScriptedAgent } from '../a2a/scripted-agent.js';
import { runCli } from '../support/cli.js';
import { type WitnessServers, witnessServers } from '../support/witness-servers.js';

export interface A2aCliFixture {
  dir: string;
  parentKey: SigningKey;
  childKey: SigningKey;
  servers: WitnessServers;
  scripted: ScriptedAgent[];
  cli: (...argv: string[]) => ReturnType<typeof runCli>;
  /** `witness a2a serve` with the child's key, the MCP tool at `tool` and the parent's co-signer at `cosigner`, and `more`. */
  serveChild(tool: string, cosigner: string, ...more: string[]): Promise<string>;
  close(): Promise<void>;
}

export function a2aCliFixture(prefix: string): A2aCliFixture {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const parentKey = newSigningKey('org-parent');
  const childKey = newSigningKey('org-child');
  writeKeyFile(join(dir, 'parent.key.json'), parentKey);
  writeKeyFile(join(dir, 'child.key.json'), childKey);
  writeDirectoryFile(join(dir, 'trusted.json'), trust([parentKey, childKey]).file);
  const servers = witnessServers(dir);
  const scripted: ScriptedAgent[] = [];
  return {
    dir,
    parentKey,
    childKey,
    servers,
    scripted,
    cli: (...argv) => runCli(argv, dir),
    serveChild: (tool, cosigner, ...more) =>
      servers.start([
        'a2a',
        'serve',
        '--key',
        'child.key.json',
        '--tool',
        tool,
        '--cosigner',
        `org-parent=${cosigner}`,
        ...more,
      ]),
    async close() {
      await Promise.all(scripted.map((a) => a.close()));
      await servers.stopAll();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
