// The A2A TCK's mandatory tests against `witness a2a serve`, over JSON-RPC and over
// HTTP+JSON (scripts/a2a-tck.mjs): every test that does not pass fails for a TCK defect
// the script's EXPECTED table names, and none it names passes (the table is current).
// The TCK is not on npm: this runs when a checkout is found — WITNESS_A2A_TCK, or the
// git directory a workspace mirror keeps beside this repository — with Debian's Python
// packages; otherwise it is skipped, saying why.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '..', '..');
const TCK = process.env.WITNESS_A2A_TCK ?? resolve(ROOT, '..', '.mirror', 'a2aproject+a2a-tck', 'repo');
const MODULES = 'import pytest, httpx, jsonschema, requests, grpc, google.protobuf';
const python = [process.env.PYTHON, 'python3', '/usr/bin/python3'].find(
  (p) => p && spawnSync(p, ['-c', MODULES], { stdio: 'ignore' }).status === 0,
);
const why = !existsSync(TCK)
  ? `no A2A TCK checkout at ${TCK}: set WITNESS_A2A_TCK to a checkout of a2aproject/a2a-tck`
  : !python
    ? 'no python3 with the TCK modules: apt-get install python3-pytest python3-httpx python3-jsonschema python3-requests python3-grpcio python3-protobuf'
    : undefined;
if (why) console.warn(`test/a2a/tck.test.ts skipped: ${why}`);

interface Run {
  transport: string;
  passed: number;
  failed: number;
  failures: Array<{ id: string; why: string | null }>;
  stale: string[];
}

describe.skipIf(why !== undefined)('the A2A TCK, tests/mandatory', () => {
  it('fails only for the TCK defects the script names, over JSON-RPC and HTTP+JSON', { timeout: 1_800_000 }, () => {
    const run = spawnSync(process.execPath, [join(ROOT, 'scripts', 'a2a-tck.mjs'), TCK, '--json'], {
      encoding: 'utf8',
      env: { ...process.env, ...(python ? { PYTHON: python } : {}) },
      timeout: 1_700_000,
    });
    expect(run.stdout, run.stderr).toMatch(/^\{/);
    const report = JSON.parse(run.stdout) as { commit: string; pinned: string; runs: Run[] };
    expect(report.commit).toBe(report.pinned);
    expect(report.runs.map((r) => r.transport)).toEqual(['jsonrpc', 'rest']);
    for (const r of report.runs) {
      expect(
        r.failures.filter((f) => !f.why).map((f) => f.id),
        r.transport,
      ).toEqual([]);
      expect(r.stale, r.transport).toEqual([]);
      expect(r.passed, r.transport).toBeGreaterThanOrEqual(50);
    }
    expect(run.status).toBe(0);
  });
});
