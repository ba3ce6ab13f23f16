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
import {
  requestSchema,
  requestStage,
  type Script,
  type ScriptedServer,
  startScriptedServer,
} from '../llm/scripted-server.js';

const pack = loadPromptPack();
const servers: ScriptedServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function sweep(
  grid: Partial<ExperimentInput['grid']>,
  options: {
    script?: Script;
    runs?: number;
    out?: string;
    signal?: AbortSignal;
    maxRetries?: number;
    server?: ScriptedServer;
  } = {},
) {
  const server = options.server ?? (await startScriptedServer(options.script));
  if (!options.server) servers.push(server);
  const experiment = parseExperiment({
    name: 'llm-test',
    seed: 7,
    runs: options.runs ?? 1,
    grid: { agents: 'llm', model: 'scripted', honest: 3, rounds: 5, ...grid },
  });
  const model = typeof grid.model === 'string' ? grid.model : 'scripted';
  const backend = new OpenAiCompatibleBackend({
    endpoints: [server.url],
    model,
    backoffMs: 5,
    maxBackoffMs: 10,
    maxRetries: options.maxRetries ?? 2,
  });
  const summary = await runExperiment({
    experiment,
    out: options.out,
    concurrency: 2,
    signal: options.signal,
    agents: { forRun: (run) => createRunAgents(run, { pack, backendFor: () => backend, signal: options.signal }) },
  });
  return { server, summary, records: summary.records };
}

// biome-ignore lint/suspicious/noExplicitAny: request bodies are free-form JSON in tests
type Body = any;
const agentOf = (body: Body): string | undefined => /(agent_\d+)/.exec(body.messages[0]!.content)?.[1];
const userOf = (body: Body): string => body.messages[1]!.content;
const isByzantine = (body: Body) => JSON.stringify(requestSchema(body)).includes('abstain');
const reply = (value: unknown) => ({ content: JSON.stringify(value) });

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

  it("sends proposals at temperature 0.5 / 300 tokens and votes at 0.3 / 200, top_p 1 and top_k -1 on every request, with the agent's own id, value and history", async () => {
    const { server, records } = await sweep({});
    const initial = records[0]!.initial;
    for (const { body } of server.requests) {
      const id = agentOf(body)!;
      const vote = requestStage(body) === 'vote';
      expect([body.temperature, body.max_tokens, body.top_p, body.top_k]).toEqual(
        vote ? [0.3, 200, 1, -1] : [0.5, 300, 1, -1],
      );
      if (!vote) expect(body.messages[0].content).toContain(`Initial value you were given: ${initial[id]}`);
      // Not a Qwen3 model: the study's thinking switch sends nothing.
      expect(body.chat_template_kwargs).toBeUndefined();
      expect(userOf(body).endsWith('/no_think')).toBe(false);
    }
    const roundTwo = server.requests.find(
      (r) => requestStage(r.body) === 'decide' && userOf(r.body).startsWith('=== ROUND 2 ==='),
    );
    expect(userOf(roundTwo!.body)).toMatch(/^Round 1: agent_0 value: \d+ \| Reasoning: /m);
  });

  it('queries all agents of a round at once', async () => {
    const { server } = await sweep({ honest: 4 }, { script: () => ({ delayMs: 250 }) });
    expect(server.maxInFlight).toBe(4);
  });

  it("asks many failing agents the same question again together, then keeps each one's previous value with reasoning saying every try failed", async () => {
    // One agent of three is more than 30%: the reference repeats the whole-round question, unchanged.
    const { server, records } = await sweep(
      { rounds: 1 },
      {
        script: (r) =>
          agentOf(r.body) === 'agent_0' && requestStage(r.body) === 'decide'
            ? { content: 'Sure! {"value": 3' }
            : undefined,
      },
    );
    const record = records[0]!;
    expect(record.trajectory[0]!.values[0]).toBe(record.initial.agent_0);
    expect(record.trajectory[0]!.abstained).toEqual([true, false, false]);
    expect(record.trajectory[0]!.reasoning![0]).toBe('No usable answer after 3 tries.');
    expect(record.invalid_answers).toBe(3);
    expect(record.fallbacks).toBe(1);
    expect(record.llm!.invalid_replies).toBe(3);
    expect(
      record.llm!.call_log.filter((c) => c.agent === 'agent_0' && c.kind === 'decide').map((c) => c.attempt),
    ).toEqual([1, 2, 3]);
    const asked = server.requests
      .filter((r) => agentOf(r.body) === 'agent_0' && requestStage(r.body) === 'decide')
      .map((r) => userOf(r.body));
    expect(new Set(asked).size).toBe(1);
  });

  it('follows up a few failing agents one at a time, telling each from its second try that it is a retry', async () => {
    // One agent of four is at most 30%: single follow-ups, the first unchanged, then with the retry notice.
    const script: Script = (r) =>
      agentOf(r.body) === 'agent_0' && requestStage(r.body) === 'decide' && !userOf(r.body).includes('RETRY')
        ? { content: 'I need to think first.' }
        : undefined;
    const { server, records } = await sweep({ honest: 4, rounds: 1 }, { script });
    const asked = server.requests
      .filter((r) => agentOf(r.body) === 'agent_0' && requestStage(r.body) === 'decide')
      .map((r) => userOf(r.body));
    expect(asked).toHaveLength(3);
    expect(asked[1]).toBe(asked[0]);
    expect(asked[2]!.startsWith(`${asked[0]}\n\nRETRY, TRY 2 OF 3:`)).toBe(true);
    expect(records[0]!.invalid_answers).toBe(2);
    expect(records[0]!.fallbacks).toBe(0);
  });

  it('clamps an out-of-range value instead of retrying it, takes JSON from text around it, and refuses reasoning under 10 or a note under 3 characters', async () => {
    const script: Script = (r) => {
      if (requestStage(r.body) !== 'decide') return undefined;
      const agent = agentOf(r.body);
      if (agent === 'agent_0')
        return reply({ internal_strategy: 'Go high.', value: 99, public_reasoning: 'Ninety-nine is my pick.' });
      if (agent === 'agent_1')
        return {
          content:
            'Here you go: {"internal_strategy": "Go low.", "value": 4, "public_reasoning": "Four {braces} are fine."} Thanks!',
        };
      if (agent === 'agent_2') return reply({ internal_strategy: 'ok', value: 5, public_reasoning: 'Short.' });
      return undefined;
    };
    const record = (await sweep({ honest: 3, rounds: 1 }, { script })).records[0]!;
    expect(record.trajectory[0]!.values.slice(0, 2)).toEqual([50, 4]);
    expect(record.trajectory[0]!.reasoning![1]).toBe('Four {braces} are fine.');
    expect(record.trajectory[0]!.values[2]).toBe(record.initial.agent_2);
    expect(record.invalid_answers).toBe(3);
  });

  it('retries a Byzantine abstain vote in a whole-round try and takes it in a single follow-up; a vote still unusable after every try counts as continue', async () => {
    const abstaining: Script = (r) =>
      requestStage(r.body) === 'vote' && isByzantine(r.body) ? reply({ decision: 'abstain' }) : undefined;
    const byzantineVotes = (server: ScriptedServer) =>
      server.requests.filter((r) => requestStage(r.body) === 'vote' && isByzantine(r.body)).length;
    // One failing agent of five (20%): one whole-round try, then a single follow-up, which takes the abstain.
    const few = await sweep({ honest: 4, byzantine: 1, rounds: 1 }, { script: abstaining });
    const byz = few.records[0]!.roles.indexOf('byzantine');
    expect(few.records[0]!.trajectory[0]!.votes[byz]).toBe('abstain');
    expect(byzantineVotes(few.server)).toBe(2);
    // Two of five (40%): three whole-round tries, then the fallback, continue.
    const other = byz === 0 ? 'agent_1' : 'agent_0';
    const many = await sweep(
      { honest: 4, byzantine: 1, rounds: 1 },
      {
        script: (r) =>
          abstaining(r) ??
          (requestStage(r.body) === 'vote' && agentOf(r.body) === other ? reply({ decision: 'maybe' }) : undefined),
      },
    );
    expect(many.records[0]!.trajectory[0]!.votes[byz]).toBe('continue');
    expect(many.records[0]!.trajectory[0]!.votes[Number(other.slice(6))]).toBe('continue');
    expect(byzantineVotes(many.server)).toBe(3);
    expect(many.records[0]!.fallbacks).toBe(2);
  });

  it('fails the sweep with an error naming the endpoint when the server stays down', async () => {
    const error = await sweep({}, { script: () => ({ status: 503 }), maxRetries: 1 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(WitnessError);
    expect((error as Error).message).toMatch(/http:\/\/127\.0\.0\.1:\d+\/v1 failed 2 times/);
  });

  it('plays honest LLM agents against rule-based Byzantine agents; only the honest seats query the model', async () => {
    const { server, records } = await sweep({
      honest: 3,
      byzantine: 1,
      byzantineAgents: 'policy',
      byzantineStrategy: 'split',
    });
    const record = records[0]!;
    const honestIds = record.agents.filter((_, i) => record.roles[i] === 'honest');
    expect(record.config).toMatchObject({ agents: 'llm', byzantineAgents: 'policy', byzantineStrategy: 'split' });
    expect(new Set(server.requests.map((r) => agentOf(r.body)))).toEqual(new Set(honestIds));
  });

  it('gives Byzantine LLM agents their own prompt and lets them abstain', async () => {
    const script: Script = (r) =>
      isByzantine(r.body) && requestStage(r.body) === 'decide'
        ? reply({ internal_strategy: 'hide', value: 'abstain', public_reasoning: 'Let me think about it.' })
        : undefined;
    const { server, records } = await sweep({ honest: 3, byzantine: 1, rounds: 2 }, { script });
    const record = records[0]!;
    const byzantine = record.roles.indexOf('byzantine');
    // It never proposed: it is shown as abstained, and it sends nothing others would list.
    expect(record.trajectory[0]!.values[byzantine]).toBe('abstain');
    expect(record.invalid_answers).toBe(0);
    const system = server.requests.find((r) => isByzantine(r.body) && requestStage(r.body) === 'decide')!.body
      .messages[0].content;
    expect(system).toMatch(/In secret, you work against them/);
    const honestVote = server.requests.find((r) => !isByzantine(r.body) && requestStage(r.body) === 'vote')!;
    expect(userOf(honestVote.body)).toContain(
      `agent_${byzantine} value: ABSTAINED | Reasoning: Let me think about it.`,
    );
    expect(userOf(honestVote.body)).not.toMatch(new RegExp(`^  agent_${byzantine}:`, 'm'));
  });

  it('asks for a confidence when the confidence rule decides, and the trajectory records it', async () => {
    const { server, records } = await sweep({ decide: 'rule:confidence', after: 2 });
    const decide = server.requests.find((r) => requestStage(r.body) === 'decide')!.body;
    const schema = decide.response_format.json_schema.schema;
    expect(schema.required).toContain('confidence');
    expect(userOf(decide)).toMatch(/"confidence": how sure you are/);
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
    const ids = readFileSync(out, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l).id);
    expect(ids).toHaveLength(6);
    expect(new Set(ids).size).toBe(6);
  });
});
