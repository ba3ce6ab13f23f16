/**
 * `witness` as one bundled ES module for tests that start many mailbox servers:
 * the same source, built with esbuild (already installed under tsx), starts in
 * ~2 s on a loaded 2-core machine where tsx compiling from source takes ~8 s —
 * longer than Qwen Code's 10 s MCP connect timeout. Dependencies stay external
 * and resolve from the repository's node_modules.
 */
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '../..');
let built: Promise<string[]> | undefined;

/** The command that starts the bundled witness (built once per test process). */
export function witnessBundle(): Promise<string[]> {
  built ??= (async () => {
    const { build } = await import('esbuild');
    const dir = join(ROOT, 'test-output', 'probe');
    mkdirSync(dir, { recursive: true });
    const outfile = join(dir, `witness-${process.pid}.mjs`);
    await build({
      entryPoints: [join(ROOT, 'src/cli/main.ts')],
      bundle: true,
      platform: 'node',
      format: 'esm',
      packages: 'external',
      outfile,
      logLevel: 'warning',
    });
    return [process.execPath, outfile];
  })();
  return built;
}
