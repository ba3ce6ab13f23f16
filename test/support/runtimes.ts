/**
 * Where the test suite finds real agent runtimes. OpenCode, Qwen Code, Claude Code and
 * Codex cannot be dev dependencies (their lock entries name optional per-platform
 * packages the registry here does not serve, which breaks `npm ci`), so
 * scripts/tools.mjs installs them into `.tools/` with pinned versions, on demand before
 * the tests (vitest's global setup): Claude Code and Codex in `.tools/agents2/`, Gemini CLI in `.tools/gemini/`.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(import.meta.dirname, '..', '..');

export type RuntimeName = 'opencode' | 'qwen' | 'claude' | 'codex' | 'gemini';

/** The path of a runtime's executable, or undefined when it is not installed. */
export function runtimeBin(name: RuntimeName): string | undefined {
  for (const dir of [
    'node_modules/.bin',
    '.tools/node_modules/.bin',
    '.tools/agents2/node_modules/.bin',
    '.tools/gemini/node_modules/.bin',
  ]) {
    const path = join(ROOT, dir, name);
    if (existsSync(path)) return path;
  }
  return undefined;
}
