import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { WitnessError } from '../../src/core/errors.js';
import { OpenAiCompatibleBackend } from '../../src/llm/openai-compatible.js';
import { createRunAgents } from '../../src/sim/agents/llm/index.js';
import { runExperiment } from '../../src/sim/experiment/run.js';
import { type ExperimentInput, parseExperiment } from '../../src/sim/experiment/schema.js';
import { loadPromptPack } from '../../src/sim/prompts/pack.js';
import { requestStage, type Script, type ScriptedServer, startScriptedServer } from '../llm/scripted-server.js';

const pack = loadPromptPack();
const servers: ScriptedServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function sweep(grid: Partial<ExperimentInput['grid']>, options: { script?: Script; runs?: number; out?: string; signal?: AbortSignal; maxRetries?: number; server?: ScriptedServer } = {}) {
  const server = options.server ?? (await startScriptedServer(options.script));
  if (!options.server) servers.push(server);
  const experiment = parseExperiment({ name: 'llm-test', seed: 7, runs: options.runs ?? 1, grid: { agents: 'llm', model: 'scripted', honest: 3, rounds: 5, ...grid } });
  const backend = new OpenAiCompatibleBackend({ endpoints: [server.url], model: 'scripted', backoffMs: 5, maxBackoffMs: 10, maxRetries: options.maxRetries ?? 2 });
  const summary = await runExperiment({ experiment, out: options.out, concurrency: 2, signal: options.signal, agentsFor: (run) => createRunAgents(run, { pack, backendFor: () => backend, signal: options.signal }) });
  return { server, summary, records: summary.records };
}

const agentOf = (body: { messages: { content: string }[] }) => /You are (agent_\d+)/.exec(body.messages[0]!.content)?.[1];

describe('LLM agents in the consensus game (scripted OpenAI-compatible server)', () => {
  it('reach agreement through the scripted model, and each record carries tokens, latency, retries and endpoint per call', async () => {
    const { server, records } = await sweep({});
    const [record] = records;
    expect(record!.outcome).toBe('valid');
    expect(record!.llm!.calls).toBe(record!.decisions);
    expect(record!.llm!.call_log).toHaveLength(server.requests.length);
    for (const call of record!.llm!.call_log) {
      expect(call).toMatchObject({ endpoint: server.url, retries: 0, valid: true });
      expect(call.prompt_tokens).toBeGreaterThan(0);
      expect(call.completion_tokens).toBeGreaterThan(0);
    }
    expect(record!.llm!.prompt_tokens).toBe(record!.llm!.call_log.reduce((s, c) => s + c.prompt_tokens, 0));
  });

  it('sends proposals at temperature 0.5 / 300 tokens and votes at 0.3 / 200, with the agent\'s own id, value and history', async () => {
    const { server, records } = await sweep({});
    const initial = records[0]!.initial;
    for (const { body } of server.requests) {
      const id = agentOf(body)!;
      const vote = requestStage(body) === 'vote';
      expect([body.temperature, body.max_tokens]).toEqual(vote ? [0.3, 200] : [0.5, 300]);
      expect(body.messages[0].content).toContain(`Your starting value is ${initial[id]}.`);
      expect(body.chat_template_kwargs).toEqual({ enable_thinking: false });
    }
    const roundTwo = server.requests.find((r) => requestStage(r.body) === 'decide' && r.body.messages[1].content.startsWith('Round 2 '));
    expect(roundTwo!.body.messages[1].content).toMatch(/^Round 1: agent_0 value: \d+ \| Reasoning: /m);
  });

  it('queries all agents of a round at once', async () => {
    const { server } = await sweep({ honest: 4 }, { script: () => ({ delayMs: 250 }) });
    expect(server.maxInFlight).toBe(4);
  });

  it('retries malformed JSON, then keeps the agent\'s previous value, counting the invalid answers and the fallback', async () => {
    const { records } = await sweep({ rounds: 1 }, { script: (r) => (agentOf(r.body) === 'agent_0' && requestStage(r.body) === 'decide' ? { content: 'Sure! {"value": 3' } : undefined) });
    const record = records[0]!;
    expect(record.trajectory[0]!.values[0]).toBe(record.initial.agent_0);
    expect(record.invalid_answers).toBe(3);
    expect(record.fallbacks).toBe(1);
    expect(record.llm!.invalid_replies).toBe(3);
    expect(record.llm!.call_log.filter((c) => c.agent === 'agent_0' && c.kind === 'decide').map((c) => c.attempt)).toEqual([1, 2, 3]);
  });

  it('counts schema-violating JSON as invalid: an out-of-range value, a missing field, an unknown vote', async () => {
    const script: Script = (r) => {
      const agent = agentOf(r.body);
      if (agent === 'agent_1' && requestStage(r.body) === 'decide') return { content: '{"internal_strategy":"x","value":99,"public_reasoning":"y"}' };
      if (agent === 'agent_2' && requestStage(r.body) === 'decide') return { content: '{"value":4}' };
      if (agent === 'agent_0' && requestStage(r.body) === 'vote') return { content: '{"decision":"maybe"}' };
      return undefined;
    };
    const record = (await sweep({ rounds: 1 }, { script })).records[0]!;
    expect(record.fallbacks).toBe(3);
    expect(record.invalid_answers).toBe(9);
    expect(record.trajectory[0]!.values.slice(1)).toEqual([record.initial.agent_1, record.initial.agent_2]);
    expect(record.trajectory[0]!.votes[0]).toBe('continue');
  });

  it('fails the sweep with an error naming the endpoint when the server stays down', async () => {
    const error = await sweep({}, { script: () => ({ status: 503 }), maxRetries: 1 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(WitnessError);
    expect((error as Error).message).toMatch(/http:\/\/127\.0\.0\.1:\d+\/v1 failed 2 times/);
  });

  it('plays honest LLM agents against rule-based Byzantine agents; only the honest seats query the model', async () => {
    const { server, records } = await sweep({ honest: 3, byzantine: 1, byzantineAgents: 'policy', byzantineStrategy: 'split' });
    const record = records[0]!;
    const honestIds = record.agents.filter((_, i) => record.roles[i] === 'honest');
    expect(record.config).toMatchObject({ agents: 'llm', byzantineAgents: 'policy', byzantineStrategy: 'split' });
    expect(new Set(server.requests.map((r) => agentOf(r.body)))).toEqual(new Set(honestIds));
  });

  it('gives Byzantine LLM agents their own prompt and lets them abstain', async () => {
    const script: Script = (r) => (r.body.messages[0].content.includes('secretly working against') && requestStage(r.body) === 'decide' ? { content: '{"internal_strategy":"hide","value":"abstain","public_reasoning":"Let me think."}' } : undefined);
    const record = (await sweep({ honest: 3, byzantine: 1, rounds: 2 }, { script })).records[0]!;
    const byzantine = record.roles.indexOf('byzantine');
    expect(record.trajectory[0]!.values[byzantine]).toBe('abstain');
    expect(record.invalid_answers).toBe(0);
  });

  it('asks for a confidence when the confidence rule decides, and the trajectory records it', async () => {
    const { server, records } = await sweep({ decide: 'rule:confidence', after: 2 });
    const decide = server.requests.find((r) => requestStage(r.body) === 'decide')!.body;
    const schema = decide.response_format.json_schema.schema;
    expect(schema.required).toContain('confidence');
    expect(decide.messages[1].content).toMatch(/"confidence": how sure you are/);
    expect(records[0]!.trajectory[0]!.confidence).toEqual([0.75, 0.75, 0.75]);
  });

  it('stops when the signal aborts mid-sweep, and a rerun resumes and finishes every run exactly once', async () => {
    const out = join(mkdtempSync(join(tmpdir(), 'witness-llm-')), 'results.jsonl');
    const server = await startScriptedServer(() => ({ delayMs: 5 }));
    servers.push(server);
    const controller = new AbortController();
    const first = sweep({ honest: 3 }, { runs: 6, out, signal: controller.signal, server });
    await server.received(40);
    controller.abort();
    const { summary } = await first;
    expect(summary.aborted).toBe(true);
    expect(summary.records.length).toBeLessThan(6);
    const { summary: second } = await sweep({ honest: 3 }, { runs: 6, out, server });
    expect(second.skipped).toBe(summary.records.length);
    const ids = readFileSync(out, 'utf8').trim().split('\n').map((l) => JSON.parse(l).id);
    expect(ids).toHaveLength(6);
    expect(new Set(ids).size).toBe(6);
  });
});
