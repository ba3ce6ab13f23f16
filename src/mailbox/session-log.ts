/**
 * @module
 * The server's own account of its MCP sessions (`mailbox serve --session-log FILE`):
 * one JSON line per event the call log does not hold — the protocol version the
 * server answered `initialize` with (the version negotiated: a client that cannot
 * speak it disconnects) or, in MCP 2026-07-28, the version a `server/discover` claims,
 * the client's name and version, each `resources/subscribe` (in 2026-07-28, each
 * `subscriptions/listen` naming the inbox),
 * and each notification pushed to the session once the transport took it
 * (`resource_updated`, `channel`). `witness probe` reads it to tell "the runtime was
 * told" from "the model saw it". Unsigned and off by default: it says what happened
 * on the wire, and a message body is never written to it (ids only).
 */
import { appendFileSync } from 'node:fs';

export type SessionEvent =
  | { event: 'initialize'; protocol_version: string; requested: string; client: { name: string; version: string } }
  /** MCP 2026-07-28 has no initialize: a `server/discover` is logged with the version its envelope claims, which the server serves. */
  | { event: 'discover'; protocol_version: string; client: { name: string; version: string } }
  | { event: 'subscribe'; uri: string }
  | { event: 'unsubscribe'; uri: string }
  | { event: 'resource_updated'; uri: string }
  | { event: 'channel'; message_ids: string[] };

export type SessionRecord = SessionEvent & { at: string; agent: string; pid: number };

/** Appends events for `agent` to `file`; a write that fails is said once on stderr and never stops the server. */
export function sessionLogger(file: string | undefined, agent: string): (event: SessionEvent) => void {
  if (!file) return () => undefined;
  let warned = false;
  return (event) => {
    const record: SessionRecord = { at: new Date().toISOString(), agent, pid: process.pid, ...event };
    try {
      // One write of one line with O_APPEND: lines of concurrent servers never interleave.
      appendFileSync(file, `${JSON.stringify(record)}\n`);
    } catch (error) {
      if (warned) return;
      warned = true;
      process.stderr.write(
        `witness mailbox: warning: cannot write the session log ${file}: ${(error as Error).message}; serving on without it.\n`,
      );
    }
  };
}

/** The `discover` event of a 2026-07-28 `server/discover` request, or undefined for any other message. */
function discoverEvent(message: unknown): SessionEvent | undefined {
  const m = message as { method?: unknown; params?: { _meta?: Record<string, unknown> } } | null;
  if (m?.method !== 'server/discover') return undefined;
  const meta = m.params?._meta ?? {};
  const version = meta['io.modelcontextprotocol/protocolVersion'];
  const info = meta['io.modelcontextprotocol/clientInfo'] as { name?: unknown; version?: unknown } | undefined;
  if (typeof version !== 'string') return undefined;
  return {
    event: 'discover',
    protocol_version: version,
    client: { name: String(info?.name ?? 'unknown'), version: String(info?.version ?? 'unknown') },
  };
}

/** Sees the messages of one 2026-07-28 connection as they cross the wire. */
export interface WireWatcher {
  inbound(message: unknown): void;
  outbound(message: unknown): void;
  /** The answer to request `id` went out: `ok` when it was a result, not an error. */
  answered(id: unknown, ok: boolean): void;
}

/**
 * The session log of a 2026-07-28 connection, read off the wire: its `server/discover`
 * once the server answered it with a result (a version it does not serve is answered
 * with an error and never logged as negotiated), each `subscriptions/listen` that names
 * mailbox://inbox (the revision's subscribe), and, on stdio, each
 * `notifications/resources/updated` once the line took it (a notice on a listen stream:
 * the entry sends none that nothing asked for).
 */
export function modernSessionEvents(log: (event: SessionEvent) => void): WireWatcher {
  const discovering = new Map<unknown, SessionEvent>();
  const answered = (id: unknown, ok: boolean) => {
    const event = discovering.get(id);
    if (!event) return;
    discovering.delete(id);
    if (ok) log(event);
  };
  return {
    inbound(message) {
      const discovered = discoverEvent(message);
      if (discovered) {
        discovering.set((message as { id?: unknown }).id, discovered);
        return;
      }
      const uri = _listenedInbox(message);
      if (uri) log({ event: 'subscribe', uri });
    },
    outbound(message) {
      const m = message as {
        id?: unknown;
        method?: unknown;
        params?: { uri?: unknown };
        result?: unknown;
        error?: unknown;
      } | null;
      if (m?.method === 'notifications/resources/updated' && typeof m.params?.uri === 'string')
        log({ event: 'resource_updated', uri: m.params.uri });
      else if (m && m.method === undefined && 'id' in m)
        answered(m.id, m.result !== undefined && m.error === undefined);
    },
    answered,
  };
}

/** The inbox URI a `subscriptions/listen` asks to be told about, or undefined. */
function _listenedInbox(message: unknown): string | undefined {
  const m = message as { method?: unknown; params?: { notifications?: { resourceSubscriptions?: unknown } } } | null;
  if (m?.method !== 'subscriptions/listen') return undefined;
  const uris = m.params?.notifications?.resourceSubscriptions;
  return Array.isArray(uris) ? uris.find((u): u is string => u === 'mailbox://inbox') : undefined;
}
