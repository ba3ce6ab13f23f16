/**
 * @module
 * Who may reach the A2A servers (the child agent, the co-signer, the MCP tool): the
 * options they share, and the Host/Origin check of core/http-guard.ts as Express
 * middleware, answering 403 with a JSON-RPC error before any route or body parser runs.
 */
import type { RequestHandler } from 'express';
import { requestGuard } from '../core/http-guard.js';

export interface ServerAccessOptions {
  /** Address to bind (default 127.0.0.1). */
  host?: string;
  port?: number;
  /** Host names clients use; required when binding beyond loopback (DNS-rebinding protection). */
  allowedHosts?: string[];
  /** Origins allowed besides loopback ones. */
  allowedOrigins?: string[];
  /** Largest request body in bytes; a larger one gets a JSON 413 naming the limit (each server has its default). */
  maxRequestBytes?: number;
}

/** The guard for a server described by `options`; throws USAGE when it would bind beyond loopback unguarded. */
export function accessGuard(options: ServerAccessOptions, what: string): ReturnType<typeof requestGuard> {
  return requestGuard({
    host: options.host ?? '127.0.0.1',
    what,
    ...(options.allowedHosts ? { allowedHosts: options.allowedHosts } : {}),
    ...(options.allowedOrigins ? { allowedOrigins: options.allowedOrigins } : {}),
  });
}

/** Express middleware refusing (403) what `guard` refuses. */
export function guardMiddleware(guard: ReturnType<typeof requestGuard>): RequestHandler {
  return (req, res, next) => {
    const problem = guard(req.headers);
    if (!problem) return next();
    res.status(403).json({ jsonrpc: '2.0', id: null, error: { code: -32000, message: problem } });
  };
}
