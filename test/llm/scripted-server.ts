/**
 * A scripted OpenAI-compatible Chat Completions server for tests and the bench: a
 * real node:http server on 127.0.0.1 (random port) that records every request and
 * answers from a script: a status, headers, a delay, a raw body or a reply text.
 * Without a script it plays a simple cooperative model: propose the smallest value
 * of the newest history line (or its own), vote stop when all of this round's
 * proposals agree. It reads the data lines of the prompts (history lines, the
 * proposal list), whose format is the reference's, not the wording around them.
 */
import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface SeenRequest {
  index: number;
  path: string;
  headers: IncomingMessage['headers'];
  // biome-ignore lint/suspicious/noExplicitAny: request bodies are free-form JSON in tests
  body: any;
}

export interface ScriptedReply {
  status?: number;
  headers?: Record<string, string>;
  /** The assistant message text; default: the cooperative model's answer. */
  content?: string;
  /** A raw response body instead of a completion (e.g. an error document). */
  raw?: string;
  delayMs?: number;
}

export type Script = (request: SeenRequest) => ScriptedReply | undefined;

export interface ScriptedServerOptions {
  /**
   * Keep every request in `requests` (default true). The bench turns it off: tens of
   * thousands of kept bodies grow the server's heap and its pauses, which the rows
   * measured last would pay for.
   */
  keepRequests?: boolean;
}

export interface ScriptedServer {
  url: string;
  requests: SeenRequest[];
  /** Most requests in flight at once. */
  readonly maxInFlight: number;
  /** Resolves when the server has received `count` requests in total. */
  received(count: number): Promise<void>;
  close(): Promise<void>;
}

export async function startScriptedServer(
  script: Script = () => undefined,
  { keepRequests = true }: ScriptedServerOptions = {},
): Promise<ScriptedServer> {
  const requests: SeenRequest[] = [];
  let received = 0;
  const waiters: { count: number; resolve: () => void }[] = [];
  const timers = new Set<NodeJS.Timeout>();
  let inFlight = 0;
  let maxInFlight = 0;
  const server = createServer(async (req, res) => {
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    res.on('close', () => inFlight--);
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const seen: SeenRequest = {
      index: received++,
      path: req.url ?? '',
      headers: req.headers,
      body: JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}'),
    };
    if (keepRequests) requests.push(seen);
    for (const w of waiters.filter((w) => received >= w.count)) {
      waiters.splice(waiters.indexOf(w), 1);
      w.resolve();
    }
    const reply = script(seen) ?? {};
    if (reply.delayMs) {
      const timer = setTimeout(() => {
        timers.delete(timer);
        _respond(res, seen, reply);
      }, reply.delayMs);
      timers.add(timer);
    } else {
      _respond(res, seen, reply);
    }
  });
  server.keepAliveTimeout = 60_000;
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    get maxInFlight() {
      return maxInFlight;
    },
    received: (count) =>
      received >= count ? Promise.resolve() : new Promise((resolve) => waiters.push({ count, resolve })),
    close: async () => {
      for (const timer of timers) clearTimeout(timer);
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}

function _respond(res: ServerResponse, seen: SeenRequest, reply: ScriptedReply): void {
  if (res.destroyed) return;
  const status = reply.status ?? 200;
  if (reply.raw !== undefined || status !== 200) {
    res.writeHead(status, { 'content-type': 'application/json', ...reply.headers });
    res.end(reply.raw ?? JSON.stringify({ error: { message: `scripted ${status}`, type: 'scripted' } }));
    return;
  }
  const content = reply.content ?? cooperativeAnswer(seen.body);
  const promptChars = (seen.body.messages ?? []).reduce((n: number, m: { content: string }) => n + m.content.length, 0);
  const completion = {
    id: `chatcmpl-${seen.index}`,
    object: 'chat.completion',
    created: 0,
    model: seen.body.model,
    choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
    usage: {
      prompt_tokens: Math.ceil(promptChars / 4),
      completion_tokens: Math.ceil(content.length / 4),
      total_tokens: Math.ceil(promptChars / 4) + Math.ceil(content.length / 4),
    },
  };
  res.writeHead(200, { 'content-type': 'application/json', ...reply.headers });
  res.end(JSON.stringify(completion));
}

/** The schema a request carries, whichever way it was sent. */
// biome-ignore lint/suspicious/noExplicitAny: free-form JSON
export function requestSchema(body: any): any {
  return body.response_format?.json_schema?.schema ?? body.guided_json ?? body.format;
}

/** A stage of a request: decide or vote, from its schema. */
// biome-ignore lint/suspicious/noExplicitAny: free-form JSON
export function requestStage(body: any): 'decide' | 'vote' {
  return requestSchema(body)?.properties?.decision ? 'vote' : 'decide';
}

// biome-ignore lint/suspicious/noExplicitAny: free-form JSON
export function cooperativeAnswer(body: any): string {
  const user: string = body.messages?.findLast?.((m: { role: string }) => m.role === 'user')?.content ?? '';
  if (requestStage(body) === 'vote') {
    const proposals = proposalValues(user).filter((p) => p !== 'ABSTAINED');
    return JSON.stringify({
      decision: proposals.length > 0 && proposals.every((p) => p === proposals[0]) ? 'stop' : 'continue',
    });
  }
  const seen = historyValues(user).filter((v): v is number => typeof v === 'number');
  const own = Number(/(?:Your current value|Your value at the moment): (\d+)/.exec(user)?.[1] ?? 0);
  const value = seen.length ? Math.min(...seen) : own;
  const answer: Record<string, unknown> = {
    internal_strategy: 'Follow the smallest value.',
    value,
    public_reasoning: `I propose ${value}, the smallest value I saw, so we can agree fast.`,
  };
  if (requestSchema(body)?.properties?.confidence) answer.confidence = 0.75;
  return JSON.stringify(answer);
}

/** Values of the newest history line in a prompt (the first `Round r:` line), `ABSTAINED` as a string. */
export function historyValues(text: string): (number | 'ABSTAINED')[] {
  const newest = /^Round \d+: (.*)$/m.exec(text)?.[1] ?? '';
  return [...newest.matchAll(/agent_\d+ value: (\d+|ABSTAINED)/g)].map((m) =>
    m[1] === 'ABSTAINED' ? 'ABSTAINED' : Number(m[1]),
  );
}

/** Values of a vote prompt's proposal list (`  agent_3 (you): 12`, `  agent_4: 12`). */
export function proposalValues(text: string): (number | 'ABSTAINED')[] {
  return [...text.matchAll(/^ {2}agent_\d+(?: \(you\))?: (\d+|ABSTAINED)$/gm)].map((m) =>
    m[1] === 'ABSTAINED' ? 'ABSTAINED' : Number(m[1]),
  );
}
