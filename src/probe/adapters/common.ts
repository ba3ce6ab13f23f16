/**
 * @module
 * What the runtime adapters share: finding an executable, reading its version,
 * registering the server through `installMailbox`, and reading `mcp list` output
 * (runtimes exit 0 even when a server failed, so the text is what counts).
 */
import { accessSync, constants, existsSync, readdirSync, readFileSync } from 'node:fs';
import { delimiter, dirname, isAbsolute, join } from 'node:path';
import { installMailbox, type Runtime } from '../../mailbox/index.js';
import { runProcess } from '../process.js';
import type { Preflight, ProbeContext } from '../types.js';
import { AGENT } from '../workspace.js';

export function findBin(name: string, ctx: Pick<ProbeContext, 'bin'>): string | undefined {
  if (ctx.bin) return _executable(ctx.bin) ? ctx.bin : undefined;
  if (isAbsolute(name)) return _executable(name) ? name : undefined;
  for (const dir of [...(process.env.PATH ?? '').split(delimiter), ...toolsBinDirs()]) {
    if (dir && _executable(join(dir, name))) return join(dir, name);
  }
  return undefined;
}

/**
 * The `.bin` folders of the runtimes `scripts/tools.mjs` installs into the checkout's
 * `.tools/` (one npm prefix per group), found upward from this module so the source,
 * the build and a bundle all see them. Searched after PATH: the user's own install wins.
 */
export function toolsBinDirs(from = import.meta.dirname): string[] {
  for (let dir = from; ; dir = dirname(dir)) {
    const tools = join(dir, '.tools');
    if (existsSync(join(tools, 'node_modules')) || existsSync(join(dir, 'scripts', 'tools.mjs'))) {
      const groups = existsSync(tools)
        ? readdirSync(tools, { withFileTypes: true })
            .filter((d) => d.isDirectory() && d.name !== 'node_modules')
            .map((d) => join(tools, d.name, 'node_modules', '.bin'))
        : [];
      return [join(tools, 'node_modules', '.bin'), ...groups.sort()];
    }
    if (dirname(dir) === dir) return [];
  }
}

function _executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** Finds `name` and runs `--version`. A missing binary is reported, never thrown. */
export async function detectCli(
  name: string,
  title: string,
  ctx: ProbeContext,
  install: string,
): Promise<Preflight['runtime']> {
  const bin = findBin(name, ctx);
  if (!bin)
    return {
      found: false,
      reason: `${title} is not installed: no executable "${ctx.bin ?? name}"${ctx.bin ? '' : ' on PATH or in .tools'} (${install}; or pass --bin PATH)`,
    };
  const result = await runProcess(bin, ['--version'], {
    cwd: ctx.ws.project,
    env: ctx.ws.env,
    timeoutMs: Math.min(ctx.timeoutMs, 30_000),
    signal: ctx.signal,
  });
  if (result.spawnError) return { found: false, bin, reason: `${bin} could not be started: ${result.spawnError}` };
  const version = /\d+\.\d+\.\d+[\w.-]*/.exec(`${result.stdout}\n${result.stderr}`)?.[0];
  return { found: true, bin, ...(version ? { version } : {}) };
}

/** Writes the mailbox server into the runtime's config with the library behind `witness mailbox install`. */
export function installFor(
  runtime: Runtime,
  ctx: ProbeContext,
  scope: 'project' | 'user' = 'project',
  channel = false,
): { file: string; has_server: boolean } {
  const result = installMailbox({
    runtime,
    dir: ctx.ws.mailbox,
    agent: AGENT,
    project: ctx.ws.project,
    home: ctx.ws.home,
    scope,
    name: ctx.serverName,
    toolPrefix: ctx.toolPrefix,
    keyPath: ctx.ws.keyPath,
    serverCommand: ctx.ws.serverCommand,
    sessionLog: ctx.ws.sessionLog,
    ...(channel ? { channel: true, force: true } : {}),
  });
  return { file: result.file, has_server: configHasServer(result.file, ctx.serverName) };
}

/** Reads the config file back: the entry must be there, under either key JSON runtimes use, or as Codex's TOML table. */
export function configHasServer(file: string, name: string): boolean {
  if (!existsSync(file)) return false;
  // Codex's TOML: the table header is the entry.
  if (file.endsWith('.toml'))
    return new RegExp(`^\\s*\\[\\s*mcp_servers\\.(?:${name}|"${name}")\\s*\\]`, 'm').test(readFileSync(file, 'utf8'));
  try {
    const config = JSON.parse(readFileSync(file, 'utf8')) as Record<string, Record<string, unknown> | undefined>;
    return Boolean(config.mcp?.[name] ?? config.mcpServers?.[name]);
  } catch {
    return false;
  }
}

/**
 * Judges `mcp list` output: the line naming our server decides. `connected` needs
 * the runtime's own success mark on that line; a line without it is `failed`; no
 * line at all means the runtime never read the entry (`not-listed`).
 */
export function readMcpList(output: string, name: string, connected: RegExp): Preflight['connection'] {
  const lines = output.split('\n').filter((l) => l.includes(name));
  const line = lines.find((l) => connected.test(l));
  if (line) return { status: 'connected', detail: line.trim() };
  if (lines.length > 0)
    return {
      status: 'failed',
      detail: `the runtime lists ${name} but did not connect: ${lines
        .map((l) => l.trim())
        .join(' | ')
        .slice(0, 400)}`,
    };
  return {
    status: 'not-listed',
    detail: `the runtime's server list does not mention ${name}: it did not pick up the config. Output: ${output.trim().slice(0, 400) || '(empty)'}`,
  };
}
