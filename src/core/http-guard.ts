/**
 * @module
 * The Host and Origin checks every local HTTP server of Witness makes (the mailbox,
 * the A2A child agent, the co-signer, the MCP evidence tool). Host: DNS-rebinding
 * protection, as the MCP SDK's `hostHeaderValidation` — the Host header's name, port
 * ignored, must be one the server answers to. Origin: when a browser sends one, it
 * must be a loopback origin or one allowed by name, so a web page on another site
 * cannot drive a local service. One module, so every server refuses the same requests.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { WitnessError } from './errors.js';

/** Host names that reach this machine only. */
export const LOOPBACK_HOSTS: ReadonlySet<string> = new Set(['127.0.0.1', 'localhost', '::1', '[::1]']);

/** A Host check for the names in `allowed`: undefined when allowed, else the problem (for a 403). */
export function hostCheck(allowed: readonly string[]): (host: string | undefined) => string | undefined {
  const verdicts = new Map<string, string | undefined>(); // a client sends the same Host every time
  return (host) => {
    if (!host) return 'Forbidden: missing Host header.';
    if (verdicts.has(host)) return verdicts.get(host);
    const verdict = _hostVerdict(host, allowed);
    if (verdicts.size < 64) verdicts.set(host, verdict);
    return verdict;
  };
}

function _hostVerdict(host: string, allowed: readonly string[]): string | undefined {
  let name: string;
  try {
    name = new URL(`http://${host}`).hostname;
  } catch {
    return `Forbidden: invalid Host header ${host}.`;
  }
  return allowed.includes(name)
    ? undefined
    : `Forbidden: Host ${name} is not allowed (DNS-rebinding protection). Use ${allowed.join(', ')}, or add a name with --allowed-host.`;
}

export function isLoopbackOrigin(origin: string): boolean {
  try {
    const url = new URL(origin);
    return (url.protocol === 'http:' || url.protocol === 'https:') && LOOPBACK_HOSTS.has(url.hostname);
  } catch {
    return false;
  }
}

export interface RequestGuardOptions {
  /** The address the server binds. */
  host: string;
  /** Host names clients use; required when `host` is not loopback. */
  allowedHosts?: readonly string[];
  /** Origins allowed besides loopback ones. */
  allowedOrigins?: readonly string[];
  /** What the server is, for the error when it would be exposed unguarded (e.g. "the co-signer"). */
  what: string;
}

/**
 * The Host and Origin check of one server, built once at start: a function of the
 * request headers answering undefined (go on) or the problem. Binding beyond loopback
 * without naming the host names clients will use is refused (USAGE), as the mailbox does.
 */
export function requestGuard(options: RequestGuardOptions): (headers: IncomingHttpHeaders) => string | undefined {
  const explicit = options.allowedHosts ?? [];
  if (!LOOPBACK_HOSTS.has(options.host) && explicit.length === 0) {
    throw new WitnessError(
      'USAGE',
      `Binding to ${options.host} exposes ${options.what} beyond this machine; pass --allowed-host NAME for each host name clients will use.`,
    );
  }
  const host = hostCheck(explicit.length > 0 ? explicit : [...LOOPBACK_HOSTS]);
  const origins = new Set(options.allowedOrigins ?? []);
  return (headers) => {
    const hostProblem = host(headers.host);
    if (hostProblem) return hostProblem;
    const origin = headers.origin;
    if (origin !== undefined && !origins.has(origin) && !isLoopbackOrigin(origin))
      return `Forbidden: Origin ${origin} is not allowed. Loopback origins are; add others with --allow-origin.`;
    return undefined;
  };
}
