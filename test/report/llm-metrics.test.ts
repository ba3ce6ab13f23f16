import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OpenAiCompatibleBackend } from '../../src/llm/openai-compatible.js';
import { renderHtmlReport } from '../../src/report/html.js';
import { LlmMetricsAccumulator, renderLlmTable } from '../../src/report/llm-metrics.js';
import { createRunAgents } from '../../src/sim/agents/llm/index.js';
import type { RunRecord } from '../../src/sim/experiment/record.js';
import { runExperiment } from '../../src/sim/experiment/run.js';
import { parseExperiment } from '../../src/sim/experiment/schema.js';
import { loadPromptPack } from '../../src/sim/prompts/pack.js';
import { type ScriptedServer, startScriptedServer } from '../llm/scripted-server.js';
import { runCli } from '../support/cli.js';

let server: ScriptedServer;
let records: RunRecord[];
let dir: string;
beforeAll(async () => {
  server = await startScriptedServer();
  const backend = new OpenAiCompatibleBackend({
    endpoints: [server.url],
    model: 'scripted',
    backoffMs: 5,
    maxBackoffMs: 10,
    maxRetries: 2,
  });
  const pack = loadPromptPack();
  const experiment = parseExperiment({
    name: 'llm-metrics',
    seed: 3,
    runs: 2,
    grid: { agents: 'llm', model: 'scripted', honest: [3, 4], rounds: 4 },
  });
  records = (
    await runExperiment({
      experiment,
      concurrency: 2,
      agents: { forRun: (run) => createRunAgents(run, { pack, backendFor: () => backend }) },
    })
  ).records;
  dir = mkdtempSync(join(tmpdir(), 'witness-llm-metrics-'));
  writeFileSync(join(dir, 'r.jsonl'), records.map((r) => `${JSON.stringify(r)}\n`).join(''));
});
afterAll(async () => {
  await server?.close();
});

const cli = (args: string[]) => runCli(args, dir);

const sum = (rs: readonly RunRecord[], f: (r: RunRecord) => number) => rs.reduce((s, r) => s + f(r), 0);

describe('LLM metrics in the report', () => {
  it('--json gives each cell its invalid answers, fallbacks, calls, retries, tokens and latency percentiles, summed from its runs', async () => {
    const { code, out } = await cli(['report', 'r.jsonl', '--json']);
    expect(code).toBe(0);
    const cells = JSON.parse(out).cells as {
      cell: string;
      llm: Record<string, unknown> & { latency_ms: { p50: number; p99: number; max: number } };
    }[];
    expect(cells).toHaveLength(2);
    for (const c of cells) {
      const runs = records.filter((r) => r.cell === c.cell);
      expect(c.llm).toMatchObject({
        runs: runs.length,
        model_runs: runs.length,
        invalid_answers: sum(runs, (r) => r.invalid_answers),
        fallbacks: sum(runs, (r) => r.fallbacks),
        calls: sum(runs, (r) => r.llm!.calls),
        retries: sum(runs, (r) => r.llm!.retries),
        tokens_in: sum(runs, (r) => r.llm!.prompt_tokens),
        tokens_out: sum(runs, (r) => r.llm!.completion_tokens),
      });
      expect(c.llm.calls).toBeGreaterThan(0);
      expect(c.llm.tokens_in).toBeGreaterThan(0);
      expect(c.llm.latency_ms.p50).toBeLessThanOrEqual(c.llm.latency_ms.p99);
      expect(c.llm.latency_ms.p99).toBeLessThanOrEqual(c.llm.latency_ms.max);
    }
  });
  it('prints the metrics table under the outcome table, with short labels by default and full ones with --wide', async () => {
    const plain = await cli(['report', 'r.jsonl']);
    expect(plain.out).toContain('LLM metrics per cell:');
    expect(plain.out).toMatch(/tokens in +tokens out +latency p50 +p90 +p99/);
    const wide = await cli(['report', 'r.jsonl', '--wide']);
    expect(wide.out).toContain('LLM metrics per cell:');
    for (const cell of new Set(records.map((r) => r.cell)))
      expect(wide.out.split('LLM metrics per cell:')[1]).toContain(cell);
    const grouped = await cli(['report', 'r.jsonl', '--by', 'honest', '--json']);
    const groups = JSON.parse(grouped.out).groups as { group: { honest: number }; llm: { calls: number } }[];
    for (const g of groups)
      expect(g.llm.calls).toBe(
        sum(
          records.filter((r) => r.honest === g.group.honest),
          (r) => r.llm!.calls,
        ),
      );
  });
  it('shows the table in the HTML report', () => {
    const html = renderHtmlReport(records, { title: 'T' });
    expect(html).toContain('<section id="llm"><h2>LLM metrics per cell</h2>');
    expect(html).toContain('<th>tokens in</th>');
  });
  it('prints no metrics table for a sweep of rule-based agents with no invalid answer', async () => {
    const sim = await cli(['sim', '--runs', '2', '--out', 'policy.jsonl', '--quiet']);
    expect(sim.code).toBe(0);
    expect((await cli(['report', 'policy.jsonl'])).out).not.toContain('LLM metrics');
    const cells = JSON.parse((await cli(['report', 'policy.jsonl', '--json'])).out).cells as {
      llm: { model_runs: number; latency_ms: null };
    }[];
    for (const c of cells) expect(c.llm).toMatchObject({ model_runs: 0, latency_ms: null });
    expect(renderLlmTable('cell', [])).toBe('');
  });
});

describe('latency percentiles', () => {
  it('are within 1% of the exact percentile (nearest rank), for any latencies', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 600_000 }), { minLength: 1, maxLength: 400 }), (latencies) => {
        const acc = new LlmMetricsAccumulator();
        const call = (latency_ms: number) => ({
          agent: 'agent_0',
          round: 1,
          kind: 'decide' as const,
          attempt: 1,
          endpoint: 'x',
          prompt_tokens: 1,
          completion_tokens: 1,
          latency_ms,
          retries: 0,
          valid: true,
        });
        acc.add({
          invalid_answers: 0,
          fallbacks: 0,
          llm: {
            model: 'm',
            prompts: { name: 'p', hash: 'h' },
            calls: latencies.length,
            prompt_tokens: 0,
            completion_tokens: 0,
            latency_ms: 0,
            retries: 0,
            invalid_replies: 0,
            call_log: latencies.map(call),
          },
        });
        const got = acc.finish().latency_ms!;
        const sorted = [...latencies].sort((a, b) => a - b);
        const exact = (q: number) => sorted[Math.ceil(q * sorted.length) - 1]!;
        for (const [q, value] of [
          [0.5, got.p50],
          [0.9, got.p90],
          [0.99, got.p99],
        ] as const) {
          // Rounded to whole ms, and 1% of a latency: the bucket's width.
          expect(Math.abs(value - exact(q))).toBeLessThanOrEqual(exact(q) * 0.01 + 1);
        }
        expect(got.max).toBe(sorted.at(-1));
      }),
    );
  });
});
