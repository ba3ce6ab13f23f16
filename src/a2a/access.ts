/**
 * @module
 * Who may reach the A2A servers (the child agent, the co-signer, the MCP tool): the
 * options they share. The Host/Origin check itself is the one HTTP front's
 * (core/http-front.ts), made before any route or body parser runs.
 */

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
