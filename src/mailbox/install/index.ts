/**
 * @module
 * `witness mailbox install RUNTIME` (mailbox.md §2): writes the mailbox server into a
 * runtime's MCP configuration without touching any other entry. Shapes, checked
 * against the installed versions (dependencies.md):
 *   opencode  `<project>/opencode.json`       "mcp": {NAME: {type:"local", command:[…], enabled, environment}}
 *   qwen      `<project>/.qwen/settings.json` "mcpServers": {NAME: {command, args, env}}
 *   openhands `~/.openhands/mcp.json`         "mcpServers": {NAME: {command, args, env}}
 *   claude    `<project>/.mcp.json`           "mcpServers": {NAME: {type:"stdio", command, args, env}}
 *   codex     `~/.codex/config.toml` (TOML)   [mcp_servers.NAME] command, args (install/codex.ts)
 *   gemini    `<project>/.gemini/settings.json` "mcpServers": {NAME: {command, args, env}}
 * An existing entry with the same name and different content is never replaced
 * unless `force` is set; a JSON file that is not plain JSON is never rewritten.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { writeFileAtomic } from '../../core/atomic-write.js';
import { WitnessError } from '../../core/errors.js';
import { makeFolders } from '../../core/make-folders.js';
import { DATABASE_URL_ENV } from '../../attest/postgres.js';
import { readConfig } from '../config.js';
import { assertAgentName } from '../names.js';
import { instructionsFor } from '../instructions.js';
import { addCodexServer, codexTable } from './codex.js';
import { lineDiff } from './diff.js';

export const RUNTIMES = ['opencode', 'qwen', 'openhands', 'claude', 'codex', 'gemini'] as const;
export type Runtime = (typeof RUNTIMES)[number];

export interface InstallOptions {
  runtime: Runtime;
  dir: string;
  agent: string;
  /** Project folder (default: the current directory). */
  project: string;
  /** Home folder for user-scope files (OpenHands; Qwen with scope user). */
  home?: string;
  scope?: 'project' | 'user';
  /** Server name in the runtime's config. */
  name?: string;
  toolPrefix?: string;
  keyPath?: string;
  /** How to start `witness`: the executable and any arguments before `mailbox serve`. */
  serverCommand: string[];
  dryRun?: boolean;
  force?: boolean;
  /** Claude Code only: serve with `--channel` (new mail pushed into the session as channel events). */
  channel?: boolean;
  /** Serve with `--session-log FILE` (the probe reads it: negotiated protocol version, pushes). */
  sessionLog?: string;
}

export interface InstallResult {
  file: string;
  changed: boolean;
  diff: string;
  written: boolean;
  notes: string[];
}

export function installMailbox(options: InstallOptions): InstallResult {
  assertAgentName(options.agent);
  if (options.channel && options.runtime !== 'claude')
    throw new WitnessError(
      'USAGE',
      `--channel is Claude Code's channel contract; ${options.runtime} has none. Drop --channel (the inbox resource with subscriptions works in any MCP client).`,
    );
  const name = options.name ?? 'witness-mailbox';
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(name))
    throw new WitnessError('USAGE', `--name ${JSON.stringify(name)} must be letters, digits, "_" or "-".`);
  const [command, ...pre] = options.serverCommand;
  if (!command) throw new WitnessError('USAGE', 'The server command is empty; pass --server-command \'["witness"]\'.');
  const args = [
    ...pre,
    'mailbox',
    'serve',
    '--dir',
    resolve(options.dir),
    '--agent',
    options.agent,
    '--tool-prefix',
    options.toolPrefix ?? 'mailbox_',
    ...(options.keyPath ? ['--key', resolve(options.keyPath)] : []),
    ...(options.channel ? ['--channel'] : []),
    ...(options.sessionLog ? ['--session-log', resolve(options.sessionLog)] : []),
  ];
  if (existsSync(options.project) && !statSync(options.project).isDirectory())
    throw new WitnessError('USAGE', `--project ${options.project} is not a folder; give the project's folder.`);
  const file = configFile(options);
  const before = _read(file);
  const merged =
    options.runtime === 'codex'
      ? _mergeToml(before, file, name, command, args, options.force ?? false)
      : _mergeJson(before, file, name, command, args, options);
  if (merged.same)
    return {
      file,
      changed: false,
      diff: '',
      written: false,
      notes: [`${file} already has this "${name}" entry; nothing to do.`],
    };
  const after = merged.after;
  const diff = lineDiff(before, after, file);
  const notes: string[] = [];
  if (options.channel)
    notes.push(
      `Start Claude Code with: claude --dangerously-load-development-channels server:${name}  (channels are a research preview of Claude Code 2.1.80+, need a claude.ai login, and a server not on Anthropic's approved list is loaded with this flag; approved channels use --channels).`,
    );
  notes.push(
    `Tell the agent (if its runtime does not show MCP server instructions): ${instructionsFor(options.toolPrefix ?? 'mailbox_')}`,
  );
  if (_databaseFromEnvironment(options.dir))
    notes.push(
      `This mailbox reads its database URL from ${DATABASE_URL_ENV}: set it in the environment the runtime starts servers with (it is not written into ${file}, which the agent can read).`,
    );
  if (options.runtime === 'qwen' && (options.scope ?? 'project') === 'project')
    notes.push(
      `Qwen Code asks before it trusts a project's servers: run \`qwen mcp approve ${name}\` in ${options.project} (or use --scope user).`,
    );
  if (options.runtime === 'codex' && (options.scope ?? 'project') === 'project')
    notes.push(
      `Codex reads ${file} only in a project it trusts (answer its trust prompt, or run codex exec --trust once), or use --scope user for ~/.codex/config.toml.`,
    );
  if (options.runtime === 'gemini' && (options.scope ?? 'project') === 'project')
    notes.push(
      `Gemini CLI reads ${file} only in a folder it trusts (answer its trust prompt, or set GEMINI_CLI_TRUST_WORKSPACE=true for a headless run), or use --scope user for ~/.gemini/settings.json.`,
    );
  if (!options.dryRun) _writeAtomic(file, after);
  return { file, changed: true, diff, written: !options.dryRun, notes };
}

function _mergeToml(
  before: string,
  file: string,
  name: string,
  command: string,
  args: string[],
  force: boolean,
): { same: boolean; after: string } {
  const { after } = addCodexServer(before, file, name, codexTable(name, command, args), force);
  return { same: after === before, after };
}

function _mergeJson(
  before: string,
  file: string,
  name: string,
  command: string,
  args: string[],
  options: InstallOptions,
): { same: boolean; after: string } {
  const { key, entry } = _entry(options.runtime, command, args);
  const config = _parse(before, file);
  const section = (config[key] ?? {}) as Record<string, unknown>;
  if (typeof section !== 'object' || Array.isArray(section))
    throw new WitnessError(
      'INVALID_INPUT',
      `${file}: "${key}" is not an object; fix it by hand first. Nothing was changed.`,
    );
  const existing = section[name];
  if (existing !== undefined && JSON.stringify(existing) === JSON.stringify(entry))
    return { same: true, after: before };
  if (existing !== undefined && !options.force) {
    throw new WitnessError(
      'USAGE',
      `${file} already has a different "${name}" entry under "${key}". Pick another --name, or pass --force to replace it. Nothing was changed.`,
    );
  }
  return { same: false, after: `${JSON.stringify({ ...config, [key]: { ...section, [name]: entry } }, null, 2)}\n` };
}

/** A PostgreSQL mailbox whose URL is the environment's, not mailbox.json's. */
function _databaseFromEnvironment(dir: string): boolean {
  try {
    return readConfig(dir).database === 'postgres';
  } catch {
    return false; // not a mailbox (yet): the server says so when it starts
  }
}

export function configFile(options: Pick<InstallOptions, 'runtime' | 'project' | 'home' | 'scope'>): string {
  const home = options.home ?? homedir();
  const project = resolve(options.project);
  switch (options.runtime) {
    case 'opencode':
      return options.scope === 'user'
        ? join(home, '.config', 'opencode', 'opencode.json')
        : join(project, 'opencode.json');
    case 'qwen':
      return join(options.scope === 'user' ? home : project, '.qwen', 'settings.json');
    case 'openhands':
      return join(home, '.openhands', 'mcp.json');
    case 'claude':
      return options.scope === 'user' ? join(home, '.claude.json') : join(project, '.mcp.json');
    case 'codex':
      // Codex reads a project's .codex/config.toml only once the project is trusted.
      return join(options.scope === 'project' ? project : home, '.codex', 'config.toml');
    case 'gemini':
      return join(options.scope === 'user' ? home : project, '.gemini', 'settings.json');
  }
}

function _entry(runtime: Runtime, command: string, args: string[]): { key: string; entry: Record<string, unknown> } {
  switch (runtime) {
    case 'opencode':
      return { key: 'mcp', entry: { type: 'local', command: [command, ...args], enabled: true, environment: {} } };
    case 'claude':
      return { key: 'mcpServers', entry: { type: 'stdio', command, args, env: {} } };
    default:
      return { key: 'mcpServers', entry: { command, args, env: {} } };
  }
}

function _read(file: string): string {
  if (!existsSync(file)) return '';
  try {
    return readFileSync(file, 'utf8');
  } catch (cause) {
    throw new WitnessError(
      'INVALID_INPUT',
      `Cannot read ${file}: ${(cause as Error).message}. It should be the runtime's JSON config file; nothing was changed.`,
      { cause },
    );
  }
}

function _parse(text: string, file: string): Record<string, unknown> {
  if (text.trim() === '') return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (cause) {
    throw new WitnessError(
      'INVALID_INPUT',
      `${file} is not plain JSON (${(cause as Error).message}); comments or trailing commas cannot be preserved, so it was not rewritten. Add the entry by hand or fix the file.`,
      { cause },
    );
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new WitnessError('INVALID_INPUT', `${file} does not hold a JSON object; nothing was changed.`);
  return value as Record<string, unknown>;
}

function _writeAtomic(file: string, text: string): void {
  try {
    makeFolders(dirname(file));
    writeFileAtomic(file, text);
  } catch (cause) {
    throw new WitnessError('IO', `Cannot write ${file}: ${(cause as Error).message}. Nothing was changed.`, { cause });
  }
}
