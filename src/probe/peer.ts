/**
 * @module
 * The probe's peer: its own `witness mailbox serve --agent probe-peer` process,
 * driven over MCP stdio directly — no model involved — so what it sends and
 * receives is known without asking any agent (mailbox.md §3).
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { WitnessError } from '../core/errors.js';
import { VERSION } from '../core/version.js';
import { PEER, type Workspace } from './workspace.js';

/** An MCP client of a stdio mailbox server; `close` is idempotent and resolves once the server has been stopped. */
export interface MailboxConnection {
  client: Client;
  close(): Promise<void>;
}

export interface Peer {
  send(to: string, body: string): Promise<string>;
  close(): Promise<void>;
}

/**
 * Connects an MCP client to a stdio mailbox server acting as `agent`. When `signal`
 * aborts, the server is stopped at once (a call in flight then fails), and every
 * `close` waits for that same stop, so nothing outlives the caller's cleanup.
 */
export async function connectMailbox(
  ws: Workspace,
  agent: string,
  toolPrefix: string,
  signal?: AbortSignal,
): Promise<MailboxConnection> {
  const [command] = ws.serverCommand;
  if (!command) throw new WitnessError('USAGE', 'The server command is empty.');
  const transport = new StdioClientTransport({
    command,
    args: ws.serverArgs(agent, toolPrefix),
    env: ws.env as Record<string, string>,
    cwd: ws.project,
    stderr: 'pipe',
  });
  const client = new Client({ name: `witness-probe-${agent}`, version: VERSION });
  let closing: Promise<void> | undefined;
  const close = () => {
    signal?.removeEventListener('abort', close);
    closing ??= client.close();
    return closing;
  };
  signal?.addEventListener('abort', close, { once: true });
  try {
    await client.connect(transport);
  } catch (error) {
    await close();
    throw error;
  }
  if (signal?.aborted) await close();
  return { client, close };
}

export async function startPeer(ws: Workspace, signal?: AbortSignal): Promise<Peer> {
  const { client, close } = await connectMailbox(ws, PEER, '', signal);
  return {
    async send(to, body) {
      const result = await client.callTool({ name: 'send_message', arguments: { to, body } });
      const id = (result.structuredContent as { id?: string } | undefined)?.id;
      if (result.isError || !id)
        throw new WitnessError('IO', `The probe's peer could not send: ${JSON.stringify(result.content)}`);
      return id;
    },
    close,
  };
}
