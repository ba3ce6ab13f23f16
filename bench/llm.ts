/**
 * Bench: LLM-agent throughput against a scripted OpenAI-compatible server with a
 * fixed 20 ms latency, as a ratio of the ideal C / latency (C = requests in flight),
 * and the engine's CPU time per call in this process (prompt rendering, the openai
 * client, JSON parsing and checking, the game). The server runs in a child process so
 * its CPU is not counted and it does not share our event loop.
 *
 * Rows per C: `bare http` (the baseline: node:http POSTs of the same body, no client
 * library, no engine: what this machine allows), `backend` (C workers calling the
 * backend in a loop) and `engine` (full games of 8 LLM agents, C / 8 games in flight,
 * 10 rounds each, no agreement, for about as long as the other rows), and `engine
 * alone` (the same games against a backend that answers at once in this process: the
 * engine's own CPU per call). Every row is timed after a warm-up. The last column
 * compares with the baseline.
 *
 * Run: npx tsx bench/llm.ts [--seconds S] [--c 1,8,64]   (goal: ratio ≥ 0.9 at C = 64)
 */
import { fork } from 'node:child_process';
import { Agent, request } from 'node:http';
import { availableParallelism, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { OpenAiCompatibleBackend } from '../src/llm/openai-compatible.js';
import type { ChatBackend, ChatRequest } from '../src/llm/types.js';
import { createRunAgents } from '../src/sim/agents/llm/index.js';
import { runExperiment } from '../src/sim/experiment/run.js';
import { parseExperiment } from '../src/sim/experiment/schema.js';
import { loadPromptPack } from '../src/sim/prompts/pack.js';
import { renderRequest } from '../src/sim/prompts/render.js';
import { sampleViews } from '../src/sim/prompts/sample.js';
import { requestStage, startScriptedServer } from '../test/llm/scripted-server.js';

const LATENCY_MS = 20;
const arg = (name: string, fallback: string) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1]! : fallback;
};

/** The scripted model: answers never agree, so games run all their rounds. */
let proposals = 0;
const scriptedAnswer = (stage: 'decide' | 'vote'): string =>
  stage === 'vote'
    ? '{"decision":"continue"}'
    : JSON.stringify({
        internal_strategy: 'Keep the group busy.',
        value: proposals++ % 51,
        public_reasoning: 'I propose this value to explore the range before we settle.',
      });

if (process.argv.includes('--serve')) {
  // Child: the scripted server.
  const server = await startScriptedServer(
    (r) => ({ delayMs: LATENCY_MS, content: scriptedAnswer(requestStage(r.body)) }),
    { keepRequests: false },
  );
  process.send?.({ url: server.url });
} else {
  await main();
}

async function main(): Promise<void> {
  const seconds = Number(arg('--seconds', '4'));
  const levels = arg('--c', '1,8,64').split(',').map(Number);
  const child = fork(fileURLToPath(import.meta.url), ['--serve'], { execArgv: ['--import', 'tsx'] });
  const { url } = await new Promise<{ url: string }>((resolve) =>
    child.once('message', (m) => resolve(m as { url: string })),
  );
  const rows: string[][] = [];
  const load = loadavg()[0]!;
  try {
    for (const c of levels) {
      const bare = await bareRow(url, c, seconds);
      rows.push(bare.cells, (await backendRow(url, c, seconds)).concat(''));
      // Games keep 8 requests per game in flight, so the engine row needs C ≥ 8.
      if (c >= 8) rows.push((await engineRow(url, c, seconds)).concat(''));
      for (const r of rows.slice(c >= 8 ? -2 : -1)) r[r.length - 1] = (Number(r[4]) / bare.perSecond).toFixed(2);
      if (c >= 8) rows.push(await engineAloneRow(c, seconds));
    }
  } finally {
    child.kill();
  }
  console.log(
    `${availableParallelism()} cores, load average ${load.toFixed(1)} at start; scripted server latency ${LATENCY_MS} ms in a child process.`,
  );
  const header = [
    'C',
    'what',
    'calls',
    'seconds',
    'calls/s',
    `ideal C/${LATENCY_MS}ms`,
    'ratio',
    'CPU µs/call',
    'vs bare',
  ];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padStart(widths[i]!)).join('  ');
  console.log(line(header));
  for (const r of rows) console.log(line(r));
}

function row(c: number, what: string, calls: number, ms: number, cpuMicros: number): string[] {
  const perSecond = (calls / ms) * 1000;
  const ideal = (c / LATENCY_MS) * 1000;
  return [
    String(c),
    what,
    String(calls),
    (ms / 1000).toFixed(2),
    perSecond.toFixed(0),
    ideal.toFixed(0),
    (perSecond / ideal).toFixed(3),
    (cpuMicros / calls).toFixed(0),
  ];
}

async function bareRow(url: string, c: number, seconds: number): Promise<{ cells: string[]; perSecond: number }> {
  const body = JSON.stringify({
    model: 'bench',
    messages: renderRequest(loadPromptPack(), 'decide', sampleViews('may_exist').decide.honest).messages,
  });
  const agent = new Agent({ keepAlive: true, maxSockets: c });
  const target = new URL(`${url}/chat/completions`);
  const post = () =>
    new Promise<unknown>((resolve, reject) => {
      const req = request(
        target,
        {
          method: 'POST',
          agent,
          headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('end', () => resolve(JSON.parse(Buffer.concat(chunks).toString('utf8'))));
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  const { calls, ms, cpu } = await loop(c, seconds, post);
  agent.destroy();
  return { cells: row(c, 'bare http', calls, ms, cpu).concat('1.00'), perSecond: (calls / ms) * 1000 };
}

/** C workers calling `call` until the time is up, after one warm-up call each. */
async function loop(
  c: number,
  seconds: number,
  call: () => Promise<unknown>,
): Promise<{ calls: number; ms: number; cpu: number }> {
  await Promise.all(Array.from({ length: c }, call));
  let calls = 0;
  const cpu = process.cpuUsage();
  const started = performance.now();
  const deadline = started + seconds * 1000;
  await Promise.all(
    Array.from({ length: c }, async () => {
      while (performance.now() < deadline) {
        await call();
        calls++;
      }
    }),
  );
  const used = process.cpuUsage(cpu);
  return { calls, ms: performance.now() - started, cpu: used.user + used.system };
}

async function backendRow(url: string, c: number, seconds: number): Promise<string[]> {
  const backend = new OpenAiCompatibleBackend({ endpoints: [url], model: 'bench', perEndpointConcurrency: c });
  const request: ChatRequest = renderRequest(loadPromptPack(), 'decide', sampleViews('may_exist').decide.honest);
  const key = { run: 'bench', agent: 'agent_0', round: 1, kind: 'decide' as const, attempt: 1 };
  const { calls, ms, cpu } = await loop(c, seconds, () => backend.complete(request, { key }));
  await backend.close();
  return row(c, 'backend', calls, ms, cpu);
}

async function engineRow(url: string, c: number, seconds: number): Promise<string[]> {
  const backend = new OpenAiCompatibleBackend({
    endpoints: [url],
    model: 'bench',
    perEndpointConcurrency: Math.max(c, 8),
  });
  try {
    const { games, calls, ms, cpu } = await playGames(backend, c, seconds);
    return row(games * 8, `engine (${games} game${games > 1 ? 's' : ''})`, calls, ms, cpu);
  } finally {
    await backend.close();
  }
}

/**
 * The engine's own CPU per call (prompts, reading answers, the game): the same games
 * against a backend in this process that answers at once, with no HTTP and no latency.
 */
async function engineAloneRow(c: number, seconds: number): Promise<string[]> {
  const instant: ChatBackend = {
    async complete(request) {
      await new Promise((resolve) => setImmediate(resolve));
      const content = scriptedAnswer(request.schemaName.startsWith('vote') ? 'vote' : 'decide');
      return {
        content,
        usage: { promptTokens: 0, completionTokens: 0 },
        latencyMs: 0,
        retries: 0,
        endpoint: 'instant',
      };
    },
    async close() {},
  };
  const { calls, ms, cpu } = await playGames(instant, c, seconds);
  return [
    String(c),
    'engine alone (no HTTP)',
    String(calls),
    (ms / 1000).toFixed(2),
    '',
    '',
    '',
    (cpu / calls).toFixed(0),
    '',
  ];
}

/** C / 8 games of 8 LLM agents in flight, 10 rounds each, after one untimed game per lane. */
async function playGames(
  backend: ChatBackend,
  c: number,
  seconds: number,
): Promise<{ games: number; calls: number; ms: number; cpu: number }> {
  const agents = 8;
  const games = Math.floor(c / agents);
  const rounds = 10;
  const pack = loadPromptPack();
  const play = (runs: number) =>
    runExperiment({
      experiment: parseExperiment({
        name: 'bench-llm',
        seed: 1,
        runs,
        grid: { agents: 'llm', model: 'bench', honest: agents, rounds },
      }),
      concurrency: games,
      agents: { forRun: (run) => createRunAgents(run, { pack, backendFor: () => backend }) },
    });
  // Warmed up like the other rows (one game per lane, not timed): the engine's code is
  // compiled by then, as in any sweep longer than a few games.
  await play(games);
  // A game is 160 calls; at about 2,500 calls/s, two games per lane and second.
  const runs = games * Math.max(3, Math.round(seconds * 2));
  const cpu = process.cpuUsage();
  const started = performance.now();
  const summary = await play(runs);
  const ms = performance.now() - started;
  const used = process.cpuUsage(cpu);
  let calls = 0;
  for (const r of summary.records) calls += r.llm!.calls;
  return { games, calls, ms, cpu: used.user + used.system };
}
