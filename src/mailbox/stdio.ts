/**
 * @module
 * The mailbox over stdin/stdout, one process per agent, in either protocol era. The
 * first message decides, by the 2.x SDK's classifier as on HTTP (modern-http.ts): an
 * `initialize` (or any message without the 2026 `_meta` envelope) is a 2025-11-25
 * client, served by the 1.x SDK's server as before; a message with the envelope (a
 * 2026-07-28 client's `server/discover`) pins the connection to the 2.x SDK's stdio
 * entry (`serveStdio`), which then owns the connection's `subscriptions/listen`. Both
 * read the one line transport opened here, and the first message is replayed to
 * whichever answers it.
 */
import type { McpServer as ModernMcpServer, Transport as ModernTransport } from '@modelcontextprotocol/server';
import { serveStdio as serveModernStdio } from '@modelcontextprotocol/server/stdio';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  isJSONRPCErrorResponse,
  isJSONRPCNotification,
  isJSONRPCRequest,
  isJSONRPCResultResponse,
  type JSONRPCMessage,
  type RequestId,
} from '@modelcontextprotocol/sdk/types.js';
import { isLegacy } from './modern-http.js';
import { INBOX_URI, watchInbox } from './push.js';
import { assertRegistered, createMailboxServer, createModernMailboxServer, type MailboxRuntime } from './server.js';
import { modernSessionEvents, sessionLogger, type WireWatcher } from './session-log.js';

/**
 * Serves one agent over stdin/stdout until the client closes the stream. Requests
 * read before the end are still answered: a client may write a request and close
 * stdin at once, and its answer must not be lost (the SDK aborts every unanswered
 * request when the server closes, so the server closes only once they are answered).
 */
export async function serveStdio(runtime: MailboxRuntime, agent: string): Promise<void> {
  await assertRegistered(runtime, agent);
  const wire = new StdioServerTransport();
  // The SDK drops a line it cannot parse; answer it as JSON-RPC says (parse error /
  // invalid request, id null) so a client with a bug sees why nothing happened.
  wire.onerror = (error) => {
    const invalidJson = error instanceof SyntaxError;
    if (!invalidJson && error.name !== 'ZodError') return;
    const reply = {
      jsonrpc: '2.0',
      id: null,
      error: {
        code: invalidJson ? -32700 : -32600,
        message: invalidJson
          ? `Parse error: the line is not JSON (${error.message}).`
          : 'Invalid request: the line is JSON but not a JSON-RPC 2.0 message.',
      },
    };
    wire.send(reply as unknown as JSONRPCMessage).catch(() => undefined);
  };
  const line = new _ReplayTransport(wire);
  const closed = new Promise<void>((resolve) => {
    line.onWireClose = resolve;
    process.stdin.once('end', () => resolve());
  });
  await wire.start();
  const first = await Promise.race([line.first(), closed.then(() => undefined)]);
  // A message that claims 2026-07-28 with a broken envelope is the 2.x entry's to refuse, as on HTTP.
  // Claude Code's channel (`--channel`) is a 2025-era session notification: a server
  // started for it stays in that era, and a 2026 client's probe falls back to initialize.
  const modern = first !== undefined && !runtime.channel && !isLegacy({}, first);
  const stop = modern ? _serveModern(runtime, agent, line) : await _serveLegacy(runtime, agent, line);
  await closed;
  runtime.closing.abort();
  await stop();
  await new Promise<void>((resolve) => process.stdout.write('', () => resolve())); // after every reply written before it
  await runtime.store.close();
}

/** 2025-11-25: the 1.x SDK's server, one session for the life of the process. */
async function _serveLegacy(
  runtime: MailboxRuntime,
  agent: string,
  line: _ReplayTransport,
): Promise<() => Promise<void>> {
  const server = createMailboxServer(runtime, agent);
  await server.connect(line);
  const answered = _trackRequests(line);
  line.replay();
  return async () => {
    await answered();
    await server.close();
  };
}

/**
 * 2026-07-28: the 2.x SDK's stdio entry over the same line, with one server pinned
 * for the connection. That server announces each change of the inbox
 * (`sendResourceUpdated`); the entry delivers it on the `subscriptions/listen`
 * streams that asked for mailbox://inbox, and to no one else.
 */
function _serveModern(runtime: MailboxRuntime, agent: string, line: _ReplayTransport): () => Promise<void> {
  let pinned: ModernMcpServer | undefined;
  let unwatch: (() => void) | undefined;
  if (runtime.sessionLog) line.watch(modernSessionEvents(sessionLogger(runtime.sessionLog, agent)));
  const answered = _trackRequests(line);
  const handle = serveModernStdio(
    () => {
      pinned = createModernMailboxServer(runtime, agent);
      const server = pinned;
      const ctx = { ...runtime, agent, closing: runtime.closing.signal };
      unwatch = watchInbox(ctx, () => server.server.sendResourceUpdated({ uri: INBOX_URI }).catch(() => undefined));
      return server;
    },
    // The two SDK lines' Transport interfaces are the same shape; only their message types are declared apart.
    { legacy: 'reject', transport: line as unknown as ModernTransport },
  );
  line.replay();
  return async () => {
    unwatch?.();
    await answered();
    await handle.close();
  };
}

/**
 * The stdio line as a transport that can be handed to either SDK after its first
 * message was read: that message is held, and delivered first once the server that
 * answers it is connected (`replay`); later lines pass straight through.
 */
class _ReplayTransport implements Transport {
  onmessage?: Transport['onmessage'];
  onclose?: () => void;
  onerror?: (error: Error) => void;
  /** Called when the line closes, whoever is connected. */
  onWireClose?: () => void;
  #held: JSONRPCMessage[] = [];
  #firstSeen: ((message: JSONRPCMessage) => void) | undefined;
  #replayed = false;
  #watcher: WireWatcher | undefined;

  constructor(private readonly wire: StdioServerTransport) {
    wire.onmessage = (message) => {
      if (!this.#replayed) {
        this.#held.push(message);
        this.#firstSeen?.(message);
        this.#firstSeen = undefined;
        return;
      }
      this.#watcher?.inbound(message);
      this.onmessage?.(message);
    };
    wire.onclose = () => {
      this.onclose?.();
      this.onWireClose?.();
    };
    const reportParseErrors = wire.onerror;
    wire.onerror = (error) => {
      reportParseErrors?.(error);
      this.onerror?.(error);
    };
  }

  /** The first message read from the line. */
  first(): Promise<JSONRPCMessage> {
    const held = this.#held[0];
    if (held) return Promise.resolve(held);
    return new Promise((resolve) => {
      this.#firstSeen = resolve;
    });
  }

  /** Has `watcher` see every message from here on, both ways (what the session log records). */
  watch(watcher: WireWatcher): void {
    this.#watcher = watcher;
  }

  /** Delivers what was held, in order, then lets lines through as they come. */
  replay(): void {
    this.#replayed = true;
    const held = this.#held;
    this.#held = [];
    for (const message of held) {
      this.#watcher?.inbound(message);
      this.onmessage?.(message);
    }
  }

  async start(): Promise<void> {
    // The line was started before its first message was read.
  }

  async send(message: JSONRPCMessage): Promise<void> {
    // An answer is watched once the server has made it, before it is written: the 2.x
    // SDK's stdio client probes with server/discover on a sibling process and kills that
    // process as soon as it reads the answer, so after the write may be too late. A
    // notification is watched once the line took it (the session log says it was sent).
    const answer = !('method' in message);
    if (answer) this.#watcher?.outbound(message);
    await this.wire.send(message);
    if (!answer) this.#watcher?.outbound(message);
  }

  close(): Promise<void> {
    return this.wire.close();
  }
}

/**
 * Counts the requests a connected transport delivered and not yet answered; the
 * returned function resolves once none is left. A cancelled request gets no
 * answer (MCP cancellation), so a cancellation settles it too.
 */
function _trackRequests(transport: Transport): () => Promise<void> {
  const open = new Set<RequestId>();
  let idle: (() => void) | undefined;
  const settle = (id: RequestId) => {
    open.delete(id);
    if (open.size === 0) idle?.();
  };
  const deliver = () => transport.onmessage;
  const tracked: Transport['onmessage'] = (message, extra) => {
    if (isJSONRPCRequest(message)) open.add(message.id);
    else if (isJSONRPCNotification(message) && message.method === 'notifications/cancelled') {
      const id = (message.params as { requestId?: RequestId } | undefined)?.requestId;
      if (id !== undefined) settle(id);
    }
    inner?.(message, extra);
  };
  let inner = deliver();
  // The SDK that connects may set onmessage after this wraps it: keep wrapping what it sets.
  Object.defineProperty(transport, 'onmessage', {
    configurable: true,
    get: () => tracked,
    set: (fn: Transport['onmessage']) => {
      inner = fn;
    },
  });
  const send = transport.send.bind(transport);
  transport.send = async (message, options) => {
    await send(message, options);
    if (isJSONRPCResultResponse(message) || isJSONRPCErrorResponse(message)) settle(message.id as RequestId);
  };
  return () => (open.size === 0 ? Promise.resolve() : new Promise<void>((resolve) => (idle = resolve)));
}
