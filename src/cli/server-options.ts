/**
 * @module
 * The options every Witness HTTP server takes (`a2a serve`, `a2a cosigner`, `a2a tool`,
 * `anchor serve`, `mailbox serve --http`), defined once: where it listens, which Host
 * and Origin names it accepts (the one HTTP front's guard), and how large a request body
 * may be. Each server gives its own default body limit.
 */
import type { Command } from 'commander';
import { hostName, portNumber, wholeNumber } from './args.js';

/** The options as commander parses them. */
export interface ServerCliOptions {
  host: string;
  port: number;
  allowedHost: string[];
  allowOrigin: string[];
  maxRequestBytes?: number;
}

/** What the servers take (structurally each server's access options). */
export interface ServerAccess {
  host: string;
  port: number;
  allowedHosts: string[];
  allowedOrigins: string[];
  maxRequestBytes?: number;
}

/**
 * Adds the server options to `command`. `scope` prefixes each description (e.g. "HTTP: "
 * on a command that also serves stdio); `maxRequestBytes` is the server's default limit,
 * as the help says it.
 */
export function withServerOptions(command: Command, maxRequestBytes: string, scope = ''): Command {
  const collect = (v: string, all: string[]) => [...all, v];
  return command
    .option('--host <host>', `${scope}address to bind`, hostName, '127.0.0.1')
    .option('--port <port>', `${scope}port (0: any free port)`, portNumber, 0)
    .option(
      '--allowed-host <host>',
      `${scope}Host names clients use, required when binding beyond loopback (repeatable)`,
      collect,
      [],
    )
    .option('--allow-origin <origin>', `${scope}also allow this Origin (loopback origins are; repeatable)`, collect, [])
    .option(
      '--max-request-bytes <n>',
      `${scope}largest request body in bytes; a larger one is refused with 413 (default ${maxRequestBytes})`,
      wholeNumber(1),
    );
}

/** The parsed options as the servers take them. */
export function serverAccess(o: ServerCliOptions): ServerAccess {
  return {
    host: o.host,
    port: o.port,
    allowedHosts: o.allowedHost,
    allowedOrigins: o.allowOrigin,
    ...(o.maxRequestBytes !== undefined ? { maxRequestBytes: o.maxRequestBytes } : {}),
  };
}
