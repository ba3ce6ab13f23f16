/**
 * Registration checked by the real runtimes: `witness mailbox install` writes the
 * config, then `opencode mcp list` and `qwen mcp list` (run with a temporary HOME
 * and XDG folders) must report the server as connected. Both exit 0 even when a
 * server failed, so their output is read; a broken registration must NOT read as
 * connected, or the check could not fail.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runtimeBin } from '../support/runtimes.js';
import { cli, makeMailbox, ROOT, tempDir, witnessCommand } from './helpers.js';

// Qwen Code lives in .tools/ (installed by .ci/run), not in devDependencies: see test/support/runtimes.ts.
const OPENCODE = runtimeBin('opencode') ?? join(ROOT, 'node_modules/.bin/opencode');
const QWEN = runtimeBin('qwen') ?? join(ROOT, '.tools/node_modules/.bin/qwen');
const hasOpencode = existsSync(OPENCODE);
const hasQwen = existsSync(QWEN);
if (!hasOpencode)
  console.warn(`skipping the opencode registration test: ${OPENCODE} is not installed (devDependency opencode-ai)`);
if (!hasQwen)
  console.warn(`skipping the qwen registration test: ${QWEN} is not installed (.ci/run installs it into .tools/)`);

function isolatedEnv(): NodeJS.ProcessEnv {
  const root = tempDir('witness-rt-');
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    HOME: join(root, 'home'),
    XDG_CONFIG_HOME: join(root, 'config'),
    XDG_DATA_HOME: join(root, 'data'),
    XDG_CACHE_HOME: join(root, 'cache'),
    XDG_STATE_HOME: join(root, 'state'),
    NO_COLOR: '1',
  };
  for (const key of ['HOME', 'XDG_CONFIG_HOME', 'XDG_DATA_HOME', 'XDG_CACHE_HOME', 'XDG_STATE_HOME'])
    mkdirSync(env[key]!, { recursive: true });
  return env;
}

function run(bin: string, args: string[], cwd: string, env: NodeJS.ProcessEnv): string {
  const result = spawnSync(bin, args, { cwd, env, encoding: 'utf8', timeout: 120_000 });
  // biome-ignore lint/suspicious/noControlCharactersInRegex: stripping ANSI colour codes
  return `${result.stdout}${result.stderr}`.replace(/\x1b\[[0-9;]*m/g, '');
}

/** Registers `agent` of a fresh mailbox (registered or not) in `runtime`'s project config. */
async function register(runtime: 'opencode' | 'qwen', registered: boolean): Promise<{ project: string }> {
  const mb = await makeMailbox(registered ? ['alice'] : ['bob']);
  const project = tempDir('witness-proj-');
  await cli([
    'mailbox',
    'install',
    runtime,
    '--dir',
    mb.dir,
    '--agent',
    'alice',
    '--project',
    project,
    '--key',
    mb.keyPath,
    '--server-command',
    JSON.stringify(witnessCommand()),
  ]);
  return { project };
}

describe('registration in real runtimes', () => {
  it.skipIf(!hasOpencode)(
    'opencode mcp list shows the installed mailbox as connected',
    async () => {
      const { project } = await register('opencode', true);
      const out = run(OPENCODE, ['mcp', 'list'], project, isolatedEnv());
      expect(out).toMatch(/✓ witness-mailbox\s+connected/);
    },
    120_000,
  );

  it.skipIf(!hasOpencode)(
    'opencode does not show a mailbox whose agent is unregistered as connected',
    async () => {
      const { project } = await register('opencode', false);
      const out = run(OPENCODE, ['mcp', 'list'], project, isolatedEnv());
      expect(out).toMatch(/witness-mailbox/);
      expect(out).not.toMatch(/✓ witness-mailbox\s+connected/);
    },
    120_000,
  );

  it.skipIf(!hasQwen)(
    'qwen mcp list (after qwen mcp approve) connects to the installed mailbox and pings it',
    async () => {
      const { project } = await register('qwen', true);
      const env = isolatedEnv();
      expect(run(QWEN, ['mcp', 'approve', 'witness-mailbox'], project, env)).toMatch(/Approved/);
      const out = run(QWEN, ['mcp', 'list'], project, env);
      expect(out).toMatch(/✓ witness-mailbox: .* - Connected/);
    },
    120_000,
  );

  it.skipIf(!hasQwen)(
    'qwen does not show a mailbox whose agent is unregistered as connected',
    async () => {
      const { project } = await register('qwen', false);
      const env = isolatedEnv();
      run(QWEN, ['mcp', 'approve', 'witness-mailbox'], project, env);
      const out = run(QWEN, ['mcp', 'list'], project, env);
      expect(out).toMatch(/witness-mailbox/);
      expect(out).not.toMatch(/- Connected/);
    },
    120_000,
  );
});
