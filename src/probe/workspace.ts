/**
 * @module
 * The isolated place a probe runs in: a temporary folder holding a project, a HOME
 * and XDG folders for the runtime (so the user's own config is never read or
 * written), a fresh mailbox with the agent and its peer registered, and the
 * mailbox's signing key — outside the project, the HOME and the mailbox folder.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { addAgent, initMailbox } from '../mailbox/index.js';

export const AGENT = 'probe-agent';
export const PEER = 'probe-peer';

export interface Workspace {
  root: string;
  project: string;
  home: string;
  mailbox: string;
  keyPath: string;
  /** Every mailbox server of the probe writes its sessions here (`serve --session-log`, mailbox/session-log.ts). */
  sessionLog: string;
  /** How to start `witness` (executable and arguments before `mailbox serve`). */
  serverCommand: string[];
  /** The environment every runtime process gets: temp HOME and XDG folders. */
  env: NodeJS.ProcessEnv;
  /** The stdio server command line acting as `agent`. */
  serverArgs(agent: string, toolPrefix: string): string[];
  remove(): void;
}

export async function createWorkspace(serverCommand: string[], parent = tmpdir()): Promise<Workspace> {
  const root = mkdtempSync(join(parent, 'witness-probe-'));
  const dirs = {
    project: join(root, 'project'),
    home: join(root, 'home'),
    config: join(root, 'xdg', 'config'),
    data: join(root, 'xdg', 'data'),
    cache: join(root, 'xdg', 'cache'),
    state: join(root, 'xdg', 'state'),
  };
  for (const d of Object.values(dirs)) mkdirSync(d, { recursive: true });
  const mailbox = join(root, 'mailbox');
  const keyPath = join(root, 'key', 'mailbox-key.json');
  const sessionLog = join(root, 'sessions.jsonl');
  await initMailbox(mailbox, { keyPath });
  await addAgent(mailbox, AGENT, 'the agent under test');
  await addAgent(mailbox, PEER, "the probe's peer: send your test message here");
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    HOME: dirs.home,
    USERPROFILE: dirs.home,
    XDG_CONFIG_HOME: dirs.config,
    XDG_DATA_HOME: dirs.data,
    XDG_CACHE_HOME: dirs.cache,
    XDG_STATE_HOME: dirs.state,
    // Several runtimes (OpenCode) take the project from PWD rather than the real cwd.
    PWD: dirs.project,
    NO_COLOR: '1',
    FORCE_COLOR: '0',
  };
  return {
    root,
    project: dirs.project,
    home: dirs.home,
    mailbox,
    keyPath,
    sessionLog,
    serverCommand,
    env,
    serverArgs: (agent, toolPrefix) => [
      ...serverCommand.slice(1),
      'mailbox',
      'serve',
      '--dir',
      mailbox,
      '--agent',
      agent,
      '--tool-prefix',
      toolPrefix,
      '--key',
      keyPath,
      '--session-log',
      sessionLog,
    ],
    remove: () => {
      // The key first: should removing the rest fail part way, no signing key is left behind.
      rmSync(keyPath, { force: true });
      rmSync(root, { recursive: true, force: true });
    },
  };
}
