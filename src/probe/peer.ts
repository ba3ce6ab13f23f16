/**
 * @module
 * The probe's peer: its own `witness mailbox serve --agent probe-peer` process,
 * driven over MCP stdio directly — no model involved — so what it sends and
 * receives is known without asking any agent (mailbox.md §3).
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { WitnessError } from '../core/errors.js';
import { PEER, type Workspace } from './workspace.js';

export interface Peer {
  send(to: string, body: string): Promise<string>;
  close(): Promise<void>;
}

/** Connects an MCP client to a stdio mailbox server acting as `agent`. */
export async function connectMailbox(ws: Workspace, agent: string, toolPrefix: string): Promise<Client> {
  const [command] = ws.serverCommand;
  if (!command) throw new WitnessError('USAGE', 'The server command is empty.');
  const transport = new StdioClientTransport({ command, args: ws.serverArgs(agent, toolPrefix), env: ws.env as Record<string, string>, cwd: ws.project, stderr: 'pipe' });
  const client = new Client({ name: `witness-probe-${agent}`, version: '0.1.0' });
  await client.connect(transport);
  return client;
}

export async function startPeer(ws: Workspace): Promise<Peer> {
  const client = await connectMailbox(ws, PEER, '');
  return {
    async send(to, body) {
      const result = await client.callTool({ name: 'send_message', arguments: { to, body } });
      const id = (result.structuredContent as { id?: string } | undefined)?.id;
      if (result.isError || !id) throw new WitnessError('IO', `The probe's peer could not send: ${JSON.stringify(result.content)}`);
      return id;
    },
    close: () => client.close(),
  };
}
