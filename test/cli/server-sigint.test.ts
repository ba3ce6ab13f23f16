/**
 * Servers on Ctrl-C: `mailbox serve --http`, `mailbox tail`,
 * `a2a serve`, `a2a cosigner`, `a2a tool` and `anchor serve` exit 130 on SIGINT (128 + SIGINT, as `witness sim` does) and 0 on
 * SIGTERM. Real processes (the bundled CLI), real signals.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serveEvidenceTool } from '../../src/a2a/tool-server.js';
import { newSigningKey } from '../../src/attest/keys.js';
import { noteVerifierKey } from '../../src/attest/tlog/note.js';
import { witnessBundle } from '../support/witness-bundle.js';

const dir = mkdtempSync(join(tmpdir(), 'witness-server-sigint-'));
let cmd: string[];
// a2a serve checks its MCP tool server at start: a real one, in this process.
const TOOL = await serveEvidenceTool();
const TOOL_URL = TOOL.url;
const LOG_VKEY = noteVerifierKey('example.com/log', Buffer.from(newSigningKey('log').publicKey, 'base64url'));
afterAll(() => TOOL.close());

beforeAll(async () => {
  cmd = await witnessBundle();
  const keys = spawnSync(cmd[0]!, [cmd[1]!, 'keys', 'new', '--deployer', 'acme', '--out', join(dir, 'k.json')], {
    cwd: dir,
    encoding: 'utf8',
  });
  expect(keys.status, keys.stderr).toBe(0);
  const init = spawnSync(cmd[0]!, [cmd[1]!, 'mailbox', 'init', join(dir, 'mb')], { cwd: dir, encoding: 'utf8' });
  expect(init.status, init.stderr).toBe(0);
}, 120_000);

/** Starts a server, waits for its ready line (stdout or stderr), sends `signal`, returns the exit code. */
async function stopWith(args: string[], ready: RegExp, signal: NodeJS.Signals): Promise<number | null> {
  const child: ChildProcess = spawn(cmd[0]!, [cmd[1]!, ...args], { cwd: dir });
  let seen = '';
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  await new Promise<void>((resolve, reject) => {
    const on = (d: Buffer) => {
      seen += d.toString();
      if (ready.test(seen)) resolve();
    };
    child.stdout?.on('data', on);
    child.stderr?.on('data', on);
    void exited.then((code) => reject(new Error(`exited ${code} before ready: ${seen}`)));
  });
  child.kill(signal);
  return exited;
}

const SERVERS: [string, string[], RegExp][] = [
  ['mailbox serve --http', ['mailbox', 'serve', '--dir', join(dir, 'mb'), '--http', '--port', '0'], /listening on/],
  ['a2a cosigner', ['a2a', 'cosigner', '--key', join(dir, 'k.json'), '--port', '0', '--json'], /"url"/],
  ['mailbox tail', ['mailbox', 'tail', join(dir, 'mb')], /Waiting for new messages/],
  ['a2a tool', ['a2a', 'tool', '--port', '0', '--json'], /"url"/],
  ['a2a serve', ['a2a', 'serve', '--key', join(dir, 'k.json'), '--tool', TOOL_URL, '--port', '0', '--json'], /"url"/],
  [
    'anchor serve',
    [
      'anchor',
      'serve',
      '--key',
      join(dir, 'k.json'),
      '--name',
      'witness.example/w1',
      '--state',
      join(dir, 'witness.db'),
      '--log',
      LOG_VKEY,
      '--port',
      '0',
      '--json',
    ],
    /"url"/,
  ],
];

describe('servers stop on signals', () => {
  for (const [name, args, ready] of SERVERS) {
    it(`${name}: SIGINT exits 130, SIGTERM exits 0`, { timeout: 60_000 }, async () => {
      expect(await stopWith(args, ready, 'SIGINT')).toBe(130);
      expect(await stopWith(args, ready, 'SIGTERM')).toBe(0);
    });
  }
});
