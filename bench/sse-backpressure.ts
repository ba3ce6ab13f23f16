/**
 * Bench: the HTTP mailbox server's memory under subscribers that never read their
 * event stream. 128 sessions (2 agents × 64) subscribe to `mailbox://inbox`, with
 * channel events on (`--channel`: each message's body is pushed), open their GET SSE
 * stream and never read it; 8 senders flood them with sends for `--seconds` (60).
 * Printed: the server's RSS (from /proc) idle, with the 128 streams open (the
 * baseline, measured in the same run), its peak during the flood and at the end, as
 * ratios to the baseline, RSS every 10 s (a plateau or a climb), and how many streams
 * the server closed. Two agents, not four: on a loaded 2-core machine four agents × 32
 * got 4.4 MiB per stream in 60 s, which the kernel's socket buffers (~4 MiB send buffer
 * on loopback; the receiver's window stays small when it never reads) took whole, so no
 * stream reached the bound; two × 64 push twice as much into each. Without a bound
 * (before MAX_STREAM_BUFFER_BYTES) the server held every unsent event: 89 → 527 MB in
 * 80 s, still growing. With it, each stream holds at most 1 MiB before it is dropped.
 *
 * Run: npx tsx bench/sse-backpressure.ts [--seconds N]
 * (The kernel's socket buffers take the first few MB of each stream; they are not in RSS.)
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { request } from 'node:http';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { MAX_STREAM_BUFFER_BYTES } from '../src/mailbox/http-session.js';
import { addAgent, initMailbox } from '../src/mailbox/index.js';

const ROOT = resolve(import.meta.dirname, '..');
const WITNESS = [
  process.execPath,
  '--import',
  pathToFileURL(join(ROOT, 'node_modules/tsx/dist/loader.mjs')).href,
  join(ROOT, 'src/cli/main.ts'),
];
const SECONDS = (() => {
  const at = process.argv.indexOf('--seconds');
  return at < 0 ? 60 : Number(process.argv[at + 1]);
})();
/** What docs/mailbox.md promises per non-reading stream at peak: 1 MiB unsent plus the garbage V8 collects late (measured up to ~2.6). */
const RSS_BOUND_MIB_PER_STREAM = 4;
const SUBSCRIBERS = ['sub0', 'sub1'];
const SESSIONS_PER_SUBSCRIBER = 64;
const SENDERS = Array.from({ length: 8 }, (_, i) => `sender${i}`);
/** Near the 64 KiB body limit: on a loaded 2-core machine the flood reaches a few sends a second, so big events fill a stream within the run. */
const BODY = 'x'.repeat(60_000);

function rssMb(pid: number): number {
  const kb = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  return Number(kb) / 1024;
}

/** One JSON-RPC POST to /mcp; resolves with the session id header and the parsed body. */
function post(
  port: number,
  token: string,
  body: unknown,
  session?: string,
): Promise<{ session: string | undefined; body: unknown }> {
  const text = JSON.stringify(body);
  return new Promise((resolvePost, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path: '/mcp',
        method: 'POST',
        headers: {
          authorization: `Bearer ${token}`,
          accept: 'application/json, text/event-stream',
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(text),
          ...(session ? { 'mcp-session-id': session } : {}),
        },
      },
      (res) => {
        let data = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => {
          data += d;
        });
        res.on('end', () =>
          resolvePost({
            session: res.headers['mcp-session-id'] as string | undefined,
            body: data ? JSON.parse(data) : undefined,
          }),
        );
      },
    );
    req.on('error', reject);
    req.end(text);
  });
}

/** A session that subscribes to its inbox and opens its event stream, then never reads it. */
async function nonReadingSubscriber(port: number, token: string): Promise<Socket> {
  const init = await post(port, token, {
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'bench', version: '0' } },
  });
  const session = init.session!;
  await post(port, token, { jsonrpc: '2.0', method: 'notifications/initialized' }, session);
  await post(
    port,
    token,
    { jsonrpc: '2.0', id: 2, method: 'resources/subscribe', params: { uri: 'mailbox://inbox' } },
    session,
  );
  const socket = connect(port, '127.0.0.1');
  socket.write(
    `GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${token}\r\nAccept: text/event-stream\r\nmcp-session-id: ${session}\r\n\r\n`,
  );
  socket.pause();
  return socket;
}

async function main(): Promise<void> {
  const dir = join(mkdtempSync(join(tmpdir(), 'witness-bench-sse-')), 'mb');
  await initMailbox(dir, { keyPath: join(dir, '..', 'mb.key.json') });
  const tokens: Record<string, string> = {};
  for (const a of [...SUBSCRIBERS, ...SENDERS]) tokens[a] = (await addAgent(dir, a)).token;
  const server: ChildProcess = spawn(
    WITNESS[0]!,
    [
      ...WITNESS.slice(1),
      'mailbox',
      'serve',
      '--dir',
      dir,
      '--http',
      '--port',
      '0',
      '--channel',
      '--rate-limit',
      '0',
      '--max-unread-messages',
      '0',
      '--max-unread-bytes',
      '0',
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  const port = await new Promise<number>((resolvePort) => {
    let err = '';
    server.stderr!.on('data', (d: Buffer) => {
      err += d.toString();
      const m = /listening on http:\/\/[^:]+:(\d+)/.exec(err);
      if (m) resolvePort(Number(m[1]));
    });
  });
  const pid = server.pid!;
  const idle = rssMb(pid);
  const sockets: Socket[] = [];
  for (const s of SUBSCRIBERS)
    for (let i = 0; i < SESSIONS_PER_SUBSCRIBER; i++) sockets.push(await nonReadingSubscriber(port, tokens[s]!));
  const baseline = rssMb(pid);

  const senders = await Promise.all(
    SENDERS.map(async (a) => ({
      token: tokens[a]!,
      session: (
        await post(port, tokens[a]!, {
          jsonrpc: '2.0',
          id: 1,
          method: 'initialize',
          params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'bench', version: '0' } },
        })
      ).session!,
    })),
  );
  const until = Date.now() + SECONDS * 1000;
  let sends = 0;
  let peak = baseline;
  const started = Date.now();
  /** RSS every 10 s: a bound shows as a plateau, a leak as a climb. */
  const timeline: number[] = [];
  const sampler = setInterval(() => {
    const rss = rssMb(pid);
    peak = Math.max(peak, rss);
    if (Date.now() - started >= (timeline.length + 1) * 10_000) timeline.push(rss);
  }, 500);
  await Promise.all(
    senders.map(async ({ token, session }, k) => {
      for (let i = 0; Date.now() < until; i++) {
        const to = SUBSCRIBERS[(i + k) % SUBSCRIBERS.length];
        await post(
          port,
          token,
          {
            jsonrpc: '2.0',
            id: i + 2,
            method: 'tools/call',
            params: { name: 'send_message', arguments: { to, body: BODY } },
          },
          session,
        );
        sends++;
      }
    }),
  );
  clearInterval(sampler);
  const end = rssMb(pid);
  peak = Math.max(peak, end);
  // Read now: a stream the server closed ends; one still open does not.
  const closed = await Promise.all(
    sockets.map(
      (socket) =>
        new Promise<boolean>((resolveEnd) => {
          const timer = setTimeout(() => resolveEnd(false), 5000);
          socket.once('close', () => {
            clearTimeout(timer);
            resolveEnd(true);
          });
          socket.resume();
        }),
    ),
  );
  for (const socket of sockets) socket.destroy();
  server.kill('SIGTERM');
  const row = (what: string, mb: number) =>
    console.log(`${what.padEnd(44)} ${mb.toFixed(0).padStart(6)} MB  ${(mb / baseline).toFixed(2).padStart(5)}×`);
  console.log(
    `128 non-reading SSE subscribers (${SUBSCRIBERS.length} agents × ${SESSIONS_PER_SUBSCRIBER} sessions, --channel), ${SENDERS.length} senders, ${SECONDS} s: ${sends} sends of ${BODY.length} B`,
  );
  console.log(`${'server RSS'.padEnd(44)} ${'MB'.padStart(9)}  ratio to baseline`);
  row('idle, no session', idle);
  row('baseline: 128 streams open, before the flood', baseline);
  row('peak during the flood', peak);
  row('at the end of the flood', end);
  console.log(
    `RSS every 10 s, as ratios to the baseline: ${timeline.map((mb) => (mb / baseline).toFixed(2)).join(' ')}`,
  );
  console.log(
    `the live bound for these streams: baseline + ${sockets.length} × ${MAX_STREAM_BUFFER_BYTES / 1048576} MiB unsent = ${(baseline + (sockets.length * MAX_STREAM_BUFFER_BYTES) / 1048576).toFixed(0)} MB of live data; V8 frees dropped buffers later, so RSS may stand above it`,
  );
  // The documented bound (docs/mailbox.md): what RSS stays under, garbage not yet collected included.
  const bound = baseline + RSS_BOUND_MIB_PER_STREAM * sockets.length;
  const perStream = (peak - baseline) / sockets.length;
  console.log(
    `peak above the baseline: ${(peak - baseline).toFixed(0)} MB = ${perStream.toFixed(2)} MB per stream; documented bound baseline + ${RSS_BOUND_MIB_PER_STREAM} MB × ${sockets.length} = ${bound.toFixed(0)} MB: ${peak <= bound ? 'within' : 'OVER THE BOUND'}`,
  );
  console.log(
    `events the server had to send each stream: ${(((sends / SUBSCRIBERS.length) * BODY.length) / 1048576).toFixed(1)} MiB (the kernel's socket buffers take the first few MiB; past them, the bound applies)`,
  );
  console.log(
    `streams the server closed (not reading past the bound): ${closed.filter(Boolean).length}/${sockets.length}`,
  );
  if (peak > bound) process.exitCode = 1;
}

await main();
