/**
 * @module
 * `witness setup embedded`: installs what only some commands need, on demand, so the
 * package itself stays small. node-llama-cpp (for `--agents embedded`) goes into this
 * package's `.tools/` with npm, pinned; by default only the CPU build for this machine
 * (~80 MB instead of ~700 MB with every GPU build).
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { Command } from 'commander';
import { WitnessError } from '../../core/errors.js';
import { importNodeLlamaCpp, NODE_LLAMA_CPP_VERSION, toolsDir } from '../../llm/node-llama-cpp.js';
import type { CliContext } from '../context.js';

/** node-llama-cpp's prebuilt CPU package for this platform, where one exists. */
function _cpuBuild(): string | undefined {
  const builds: Record<string, string> = {
    'linux-x64': 'linux-x64',
    'linux-arm64': 'linux-arm64',
    'linux-arm': 'linux-armv7l',
    'darwin-arm64': 'mac-arm64-metal',
    'darwin-x64': 'mac-x64',
    'win32-x64': 'win-x64',
    'win32-arm64': 'win-arm64',
  };
  const name = builds[`${process.platform}-${process.arch}`];
  return name ? `@node-llama-cpp/${name}@${NODE_LLAMA_CPP_VERSION}` : undefined;
}

export function setupCommand(ctx: CliContext): Command {
  const embedded = new Command('embedded')
    .description(
      `Install node-llama-cpp ${NODE_LLAMA_CPP_VERSION} (the engine of --agents embedded) into ${toolsDir()} with npm; by default only the CPU build for this machine.`,
    )
    .option('--gpu', 'also install the CUDA and Vulkan builds (~700 MB), used with --gpu')
    .option('--json', 'print {"installed", "dir"} as JSON')
    .addHelpText(
      'after',
      '\nExample:\n  $ witness setup embedded\n  $ witness sim --agents embedded --model ./Qwen3-0.6B-Q8_0.gguf --honest 4 --runs 2',
    )
    .action(async (o: { gpu?: boolean; json?: boolean }) => {
      const dir = toolsDir();
      const cpu = _cpuBuild();
      const packages = [`node-llama-cpp@${NODE_LLAMA_CPP_VERSION}`, ...(o.gpu || !cpu ? [] : [cpu])];
      // --ignore-scripts: the prebuilt binary is used as it is (build: 'never'); no compiler runs.
      const args = [
        'install',
        '--prefix',
        dir,
        '--no-save',
        '--no-package-lock',
        '--no-audit',
        '--no-fund',
        '--ignore-scripts',
        ...(o.gpu || !cpu ? [] : ['--omit=optional']),
        ...packages,
      ];
      mkdirSync(dir, { recursive: true });
      ctx.io.stderr(`Installing ${packages.join(' ')} into ${dir} …\n`);
      const run = spawnSync('npm', args, {
        stdio: ['ignore', 'inherit', 'inherit'],
        shell: process.platform === 'win32',
      });
      if (run.error || run.status !== 0)
        throw new WitnessError(
          'IO',
          `npm ${args.join(' ')} failed (${run.error?.message ?? `exit ${run.status}`}); run it yourself to see why.`,
        );
      await importNodeLlamaCpp(); // proves it loads from where it was put
      if (o.json) return ctx.io.stdout(`${JSON.stringify({ installed: packages, dir })}\n`);
      ctx.io.stdout(`Installed ${packages.join(' ')} in ${dir}; --agents embedded can use it now.\n`);
    });
  return new Command('setup')
    .summary('install what only some commands need (node-llama-cpp for --agents embedded)')
    .description('Install on demand what only some commands need, so the package stays small.')
    .addCommand(embedded)
    .addHelpText('after', '\nExample:\n  $ witness setup embedded');
}
