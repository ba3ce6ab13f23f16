/**
 * Where the test suite finds real agent runtimes. OpenCode is a dev dependency;
 * Qwen Code cannot be (its lock entries name optional packages the registry here does
 * not serve, which breaks `npm ci`), so `.ci/run` installs it into `.tools/`.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(import.meta.dirname, '..', '..');

/** The path of a runtime's executable, or undefined when it is not installed. */
export function runtimeBin(name: 'opencode' | 'qwen'): string | undefined {
  for (const dir of ['node_modules/.bin', '.tools/node_modules/.bin']) {
    const path = join(ROOT, dir, name);
    if (existsSync(path)) return path;
  }
  return undefined;
}
