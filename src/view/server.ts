/**
 * @module
 * `witness view`'s server: 127.0.0.1 only, a random port, a random token every request
 * must carry (`?t=`), the Host/Origin guard every Witness server uses, GET and HEAD
 * only (the viewer changes nothing), and a Content-Security-Policy that lets the page
 * load nothing but its own script and talk to nothing but this server.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { isWitnessError, WitnessError } from '../core/errors.js';
import { requestGuard } from '../core/http-guard.js';
import { closeServer, INTERNAL_ERROR_MESSAGE, listen, sendJson } from '../core/http-server.js';
import type { Outcome } from '../sim/types.js';
import type { ViewModel } from './model.js';
import { viewerHtml, viewerScript } from './page.js';

const CSP = "default-src 'none'; script-src 'self'; style-src 'unsafe-inline'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

export interface ViewServer {
  /** The address to open, with the token. */
  url: string;
  server: Server;
  close(): Promise<void>;
}

export async function startViewServer(model: ViewModel, options: { port?: number; title?: string } = {}): Promise<ViewServer> {
  const host = '127.0.0.1';
  const guard = requestGuard({ host, what: 'the viewer' });
  const token = randomBytes(18).toString('base64url');
  const script = viewerScript();
  const html = viewerHtml(options.title ?? 'Witness view', `/app.js?t=${token}`);
  const server = createServer((req, res) => {
    try {
      _answer(req, res, { guard, token, model, html, script });
    } catch (error) {
      _fail(res, error);
    }
  });
  const base = await listen(server, options.port ?? 0, host);
  return { url: `${base}/?t=${token}`, server, close: () => closeServer(server) };
}

interface _Context {
  guard: ReturnType<typeof requestGuard>;
  token: string;
  model: ViewModel;
  html: string;
  script: string;
}

function _answer(req: IncomingMessage, res: ServerResponse, ctx: _Context) {
  const headers = { 'Cache-Control': 'no-store', 'X-Content-Type-Options': 'nosniff', 'Referrer-Policy': 'no-referrer' };
  const problem = ctx.guard(req.headers);
  if (problem) return sendJson(res, 403, { error: problem }, headers);
  if (req.method !== 'GET' && req.method !== 'HEAD') return sendJson(res, 405, { error: `The viewer is read-only: ${req.method} is not allowed, only GET.` }, { ...headers, Allow: 'GET, HEAD' });
  const url = new URL(req.url ?? '/', 'http://127.0.0.1');
  if (!_tokenOk(url.searchParams.get('t'), ctx.token)) return sendJson(res, 403, { error: 'Forbidden: open the address witness view printed (it carries the token).' }, headers);
  const q = url.searchParams;
  const num = (name: string) => _number(q.get(name), name);
  const ref = (name: string) => {
    const [file, cell] = (q.get(name) ?? '').split(':');
    return { file: _number(file ?? null, `${name} file`), cell: _number(cell ?? null, `${name} cell`) };
  };
  switch (url.pathname) {
    case '/':
      return _send(res, 200, 'text/html; charset=utf-8', ctx.html, { ...headers, 'Content-Security-Policy': CSP });
    case '/app.js':
      return _send(res, 200, 'text/javascript; charset=utf-8', ctx.script, headers);
    case '/api/overview':
      return sendJson(res, 200, ctx.model.overview(), headers);
    case '/api/runs': {
      const outcomes = (q.get('outcome') ?? '').split(',').filter(Boolean) as Outcome[];
      return sendJson(res, 200, ctx.model.runs({ file: num('file'), cell: num('cell') }, outcomes, num('page')), headers);
    }
    case '/api/run':
      return sendJson(res, 200, ctx.model.run(num('file'), num('pos')), headers);
    case '/api/compare':
      return sendJson(res, 200, ctx.model.compare(ref('a'), ref('b')), headers);
    default:
      return sendJson(res, 404, { error: `No page ${url.pathname}.` }, headers);
  }
}

function _number(text: string | null, name: string): number {
  const n = Number(text);
  if (text === null || text === '' || !Number.isInteger(n) || n < 0) throw new WitnessError('USAGE', `${name} must be a whole number ≥ 0.`);
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
