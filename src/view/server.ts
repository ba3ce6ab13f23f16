/**
 * @module
 * `witness view`'s server: 127.0.0.1 only, a random port, a random token every request
 * must carry (`?t=`), the Host/Origin guard every Witness server uses, GET and HEAD
 * only (the viewer changes nothing), and a Content-Security-Policy that lets the page
 * load nothing but its own script and talk to nothing but this server. It serves one
 * source: results files (pages asked for on demand), a mailbox followed live (its
 * snapshot, then one server-sent event stream, `/api/events`, of what changed), or the
 * precomputed answers of a delegation path or an E12 file.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { isWitnessError, WitnessError } from '../core/errors.js';
import { requestGuard } from '../core/http-guard.js';
import { closeServer, INTERNAL_ERROR_MESSAGE, listen, sendJson } from '../core/http-server.js';
import type { Outcome } from '../sim/types.js';
import type { MailboxFeed } from './mailbox-model.js';
import { ViewModel } from './model.js';
import { apiKey, viewerHtml, viewerScript } from './page.js';

/** What a viewer shows: results files, a live mailbox, or pages answered from a fixed set (a delegation path, an E12 file). */
export type ViewSource =
  | { kind: 'results'; model: ViewModel }
  | { kind: 'mailbox'; feed: MailboxFeed }
  | { kind: 'fixed'; answers: Record<string, unknown> };

/** Bytes an event stream may hold unsent before the page reading it is dropped (it reconnects and reloads). */
const MAX_UNSENT_EVENT_BYTES = 1024 * 1024;

const CSP =
  "default-src 'none'; script-src 'self'; style-src 'unsafe-inline'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

export interface ViewServer {
  /** The address to open, with the token. */
  url: string;
  server: Server;
  close(): Promise<void>;
}

export async function startViewServer(
  given: ViewModel | ViewSource,
  options: { port?: number; title?: string } = {},
): Promise<ViewServer> {
  const source: ViewSource = given instanceof ViewModel ? { kind: 'results', model: given } : given;
  const host = '127.0.0.1';
  const guard = requestGuard({ host, what: 'the viewer' });
  const token = randomBytes(18).toString('base64url');
  const script = viewerScript();
  const html = viewerHtml(options.title ?? 'Witness view', `/app.js?t=${token}`);
  const streams = new Set<ServerResponse>();
  if (source.kind === 'mailbox') {
    source.feed.onUpdate((update) => {
      const event = `data: ${JSON.stringify(update)}\n\n`;
      for (const res of streams) {
        if (res.writableLength > MAX_UNSENT_EVENT_BYTES) res.destroy();
        else res.write(event);
      }
    });
    source.feed.follow();
  }
  const server = createServer((req, res) => {
    _answer(req, res, { guard, token, source, html, script, streams }).catch((error: unknown) => _fail(res, error));
  });
  const base = await listen(server, options.port ?? 0, host);
  return { url: `${base}/?t=${token}`, server, close: () => closeServer(server) };
}

interface _Context {
  guard: ReturnType<typeof requestGuard>;
  token: string;
  source: ViewSource;
  html: string;
  script: string;
  streams: Set<ServerResponse>;
}

async function _answer(req: IncomingMessage, res: ServerResponse, ctx: _Context) {
  const headers = {
    'Cache-Control': 'no-store',
    'X-Content-Type-Options': 'nosniff',
    'Referrer-Policy': 'no-referrer',
  };
  const problem = ctx.guard(req.headers);
  if (problem) return sendJson(res, 403, { error: problem }, headers);
  if (req.method !== 'GET' && req.method !== 'HEAD')
    return sendJson(
      res,
      405,
      { error: `The viewer is read-only: ${req.method} is not allowed, only GET.` },
      { ...headers, Allow: 'GET, HEAD' },
    );
  const url = new URL(req.url ?? '/', 'http://127.0.0.1');
  if (!_tokenOk(url.searchParams.get('t'), ctx.token))
    return sendJson(
      res,
      403,
      { error: 'Forbidden: open the address witness view printed (it carries the token).' },
      headers,
    );
  const q = url.searchParams;
  const num = (name: string) => _number(q.get(name), name);
  const ref = (name: string) => {
    const [file, cell] = (q.get(name) ?? '').split(':');
    return { file: _number(file ?? null, `${name} file`), cell: _number(cell ?? null, `${name} cell`) };
  };
  if (url.pathname === '/')
    return _send(res, 200, 'text/html; charset=utf-8', ctx.html, { ...headers, 'Content-Security-Policy': CSP });
  if (url.pathname === '/app.js') return _send(res, 200, 'text/javascript; charset=utf-8', ctx.script, headers);
  const source = ctx.source;
  if (source.kind === 'mailbox') {
    if (url.pathname === '/api/about') return sendJson(res, 200, { kind: 'mailbox' }, headers);
    if (url.pathname === '/api/mailbox') return sendJson(res, 200, await source.feed.snapshot(), headers);
    if (url.pathname === '/api/events') return _events(req, res, headers, ctx.streams);
  } else if (source.kind === 'fixed') {
    const params = Object.fromEntries([...q].filter(([k]) => k !== 't'));
    const answer = url.pathname.startsWith('/api/') ? source.answers[apiKey(url.pathname.slice(5), params)] : undefined;
    if (answer !== undefined) return sendJson(res, 200, answer, headers);
  } else {
    const model = source.model;
    switch (url.pathname) {
      case '/api/about':
        return sendJson(res, 200, { kind: 'results' }, headers);
      case '/api/overview':
        return sendJson(res, 200, model.overview(), headers);
      case '/api/runs': {
        const outcomes = (q.get('outcome') ?? '').split(',').filter(Boolean) as Outcome[];
        return sendJson(res, 200, model.runs({ file: num('file'), cell: num('cell') }, outcomes, num('page')), headers);
      }
      case '/api/run':
        return sendJson(res, 200, model.run(num('file'), num('pos')), headers);
      case '/api/compare':
        return sendJson(res, 200, model.compare(ref('a'), ref('b')), headers);
    }
  }
  return sendJson(
    res,
    404,
    {
      error: `No page ${url.pathname} with these parameters in this viewer (it shows ${source.kind === 'fixed' ? 'a fixed set of pages' : source.kind}).`,
    },
    headers,
  );
}

/** The mailbox's one event stream: each update as one `data:` line of JSON; the page merges it into what it shows. */
function _events(
  req: IncomingMessage,
  res: ServerResponse,
  headers: Record<string, string>,
  streams: Set<ServerResponse>,
): void {
  if (req.method === 'HEAD') {
    _send(res, 200, 'text/event-stream', '', headers);
    return;
  }
  res.writeHead(200, { ...headers, 'Content-Type': 'text/event-stream; charset=utf-8', Connection: 'keep-alive' });
  res.write('retry: 1000\n\n');
  streams.add(res);
  res.on('close', () => streams.delete(res));
}

function _number(text: string | null, name: string): number {
  const n = Number(text);
  if (text === null || text === '' || !Number.isInteger(n) || n < 0)
    throw new WitnessError('USAGE', `${name} must be a whole number ≥ 0.`);
  return n;
}

function _tokenOk(given: string | null, token: string): boolean {
  if (given === null || given.length !== token.length) return false;
  return timingSafeEqual(Buffer.from(given), Buffer.from(token));
}

function _send(res: ServerResponse, status: number, type: string, body: string, headers: Record<string, string>): void {
  res.writeHead(status, { ...headers, 'Content-Type': type, 'Content-Length': Buffer.byteLength(body) });
  res.end(res.req.method === 'HEAD' ? undefined : body);
}

function _fail(res: ServerResponse, error: unknown) {
  if (isWitnessError(error, 'NOT_FOUND')) return sendJson(res, 404, { error: error.message });
  if (isWitnessError(error, 'USAGE')) return sendJson(res, 400, { error: error.message });
  if (isWitnessError(error, 'CORRUPT')) return sendJson(res, 409, { error: error.message });
  sendJson(res, 500, { error: INTERNAL_ERROR_MESSAGE });
}
