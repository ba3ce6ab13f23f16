/**
 * Separate network hosts on one machine for the multi-server tests: each host is a
 * Linux network namespace joined to this one by a veth pair (10.231.K.2 inside,
 * 10.231.K.1 here), with its own loopback, so servers in two hosts share no network
 * stack. PostgreSQL listens on this namespace's loopback only, so each host reaches
 * it over TCP through a forwarder at its gateway address — as a server on another
 * machine would reach the database over the network. Needs CAP_NET_ADMIN (CI runs
 * as root); where namespaces cannot be made, `makeHosts` says why and the caller
 * uses loopback.
 */
import { execFileSync } from 'node:child_process';
import { createConnection, createServer, type Server } from 'node:net';
import { userInfo } from 'node:os';

export interface Host {
  /** Run a command inside the host. */
  wrap: string[];
  /** The host's address, where its server listens. */
  address: string;
  /** The mailbox database as this host reaches it. */
  databaseUrl: string;
}

export interface Hosts {
  hosts: Host[];
  remove(): Promise<void>;
}

const PG_PORT = 5432;

export async function makeHosts(count: number, database: string): Promise<Hosts | { reason: string }> {
  const tag = `${process.pid % 10_000}`;
  const made: string[] = [];
  const forwarders: Server[] = [];
  const remove = async () => {
    for (const f of forwarders) await new Promise((r) => f.close(r));
    for (const ns of made) _quiet(['ip', 'netns', 'del', ns]);
  };
  try {
    const hosts: Host[] = [];
    for (let k = 0; k < count; k++) {
      const ns = `wmb${tag}h${k}`;
      const [outside, inside] = [`wv${tag}h${k}o`, `wv${tag}h${k}i`];
      const [gateway, address] = [`10.231.${k}.1`, `10.231.${k}.2`];
      _ip(['netns', 'add', ns]);
      made.push(ns);
      _ip(['link', 'add', outside, 'type', 'veth', 'peer', 'name', inside]);
      _ip(['link', 'set', inside, 'netns', ns]);
      _ip(['addr', 'add', `${gateway}/30`, 'dev', outside]);
      _ip(['link', 'set', outside, 'up']);
      for (const args of [
        ['addr', 'add', `${address}/30`, 'dev', inside],
        ['link', 'set', inside, 'up'],
        ['link', 'set', 'lo', 'up'],
      ])
        _ip(['-n', ns, ...args]);
      const port = await _forward(gateway, forwarders);
      hosts.push({
        wrap: ['ip', 'netns', 'exec', ns],
        address,
        databaseUrl: `postgres://${userInfo().username}@${gateway}:${port}/${database}`,
      });
    }
    return { hosts, remove };
  } catch (error) {
    await remove();
    return { reason: (error as Error).message.split('\n')[0]! };
  }
}

/** A TCP forwarder at `address` to PostgreSQL on this namespace's loopback; returns its port. */
function _forward(address: string, servers: Server[]): Promise<number> {
  const server = createServer((client) => {
    const pg = createConnection(PG_PORT, '127.0.0.1');
    client.pipe(pg).pipe(client);
    const close = () => {
      client.destroy();
      pg.destroy();
    };
    client.on('error', close);
    pg.on('error', close);
  });
  servers.push(server);
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, address, () => resolve((server.address() as { port: number }).port));
  });
}

function _ip(args: string[]): void {
  execFileSync('ip', args, { stdio: ['ignore', 'ignore', 'pipe'] });
}

function _quiet(command: string[]): void {
  try {
    execFileSync(command[0]!, command.slice(1), { stdio: 'ignore' });
  } catch {
    // already gone
  }
}
