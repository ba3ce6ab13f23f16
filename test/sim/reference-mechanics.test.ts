/**
 * The reference implementation's mechanics (consensus.md §2, docs/fidelity.md), played
 * end to end by LLM agents against a scripted OpenAI-compatible server: real HTTP,
 * real backend, real engine and prompt pack.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { OpenAiCompatibleBackend } from '../../src/llm/openai-compatible.js';
import { createRunAgents } from '../../src/sim/agents/llm/index.js';
import { runExperiment } from '../../src/sim/experiment/run.js';
import { parseExperiment } from '../../src/sim/experiment/schema.js';
import { loadPromptPack } from '../../src/sim/prompts/pack.js';
import {
  historyValues,
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

// biome-ignore lint/suspicious/noExplicitAny: request bodies are free-form JSON in tests
type Body = any;
const userOf = (body: Body): string => body.messages[1].content;
const agentOf = (body: Body): string => /(agent_\d+)/.exec(body.messages[0].content)![1]!;
const isByzantine = (body: Body) => JSON.stringify(requestSchema(body)).includes('abstain');
const reply = (value: unknown) => ({ content: JSON.stringify(value) });

/**
 * Honest agents propose the smallest value of the newest history line (their own in
 * round 1); the Byzantine agent proposes 0 in round 1 and abstains afterwards; every
 * voter says stop only when the newest history line is unanimous.
 */
const script: Script = ({ body }) => {
  const newest = historyValues(userOf(body));
  if (requestStage(body) === 'vote')
    return reply({ decision: newest.length > 0 && newest.every((v) => v === newest[0]) ? 'stop' : 'continue' });
  if (!isByzantine(body)) return undefined;
  return newest.length === 0
    ? reply({
        internal_strategy: 'Anchor everyone low.',
        value: 0,
        public_reasoning: 'Zero is the simplest common ground for all of us.',
      })
    : reply({
        internal_strategy: 'Go quiet now.',
        value: 'abstain',
        public_reasoning: 'I will wait and see what the group does.',
      });
};

async function play(model: string) {
  const server = await startScriptedServer(script);
  servers.push(server);
  const experiment = parseExperiment({
    name: 'reference-mechanics',
    seed: 11,
    runs: 1,
    grid: { agents: 'llm', model, honest: 3, byzantine: 1, rounds: 6 },
  });
  const backend = new OpenAiCompatibleBackend({ endpoints: [server.url], model });
  const { records } = await runExperiment({
    experiment,
    concurrency: 1,
    agents: { forRun: (run) => createRunAgents(run, { pack, backendFor: () => backend }) },
  });
  return { server, record: records[0]! };
}

describe('the reference mechanics against a scripted server', () => {
  it('stops in the round whose own history line agrees: the line reaches the history before the vote', async () => {
    const { record, server } = await play('Qwen/Qwen3-14B');
    // Round 1 differs; in round 2 every value is 0, and the round-2 vote already sees round 2.
    expect(record.rounds).toBe(2);
    expect(record.ended_by).toBe('vote');
    const votes = server.requests.filter(
      (r) => requestStage(r.body) === 'vote' && userOf(r.body).includes('Round 2/6'),
    );
    expect(votes).toHaveLength(4);
    for (const v of votes) expect(userOf(v.body)).toMatch(/^Round 2: /m);
  });

  it("shows a Byzantine agent that proposed and then abstains with its previous value and this round's reasoning", async () => {
    const { record, server } = await play('Qwen/Qwen3-14B');
    const byz = record.roles.indexOf('byzantine');
    const id = record.agents[byz]!;
    expect(record.trajectory[1]!.values[byz]).toBe(0);
    expect(record.trajectory[1]!.abstained![byz]).toBe(true);
    const vote = server.requests.find(
      (r) => requestStage(r.body) === 'vote' && !isByzantine(r.body) && userOf(r.body).includes('Round 2/6'),
    )!;
    expect(userOf(vote.body)).toContain(`${id} value: 0 | Reasoning: I will wait and see what the group does.`);
    expect(userOf(vote.body)).toMatch(
      new RegExp(`^  ${id}: 0\\n    Reasoning: I will wait and see what the group does\\.$`, 'm'),
    );
    const own = server.requests.find(
      (r) => requestStage(r.body) === 'vote' && isByzantine(r.body) && userOf(r.body).includes('Round 2/6'),
    )!;
    expect(userOf(own.body)).toContain(`  ${id} (you): 0\n`);
  });

  it('sends top_p 1 and top_k -1 on every request, and switches Qwen3 thinking off with the /no_think suffix', async () => {
    const { server } = await play('Qwen/Qwen3-14B');
    expect(server.requests.length).toBeGreaterThan(0);
    for (const { body } of server.requests) {
      expect(body.top_p).toBe(1);
      expect(body.top_k).toBe(-1);
      expect(userOf(body).endsWith(' /no_think')).toBe(true);
      expect(body.chat_template_kwargs).toBeUndefined();
    }
  });

  it('gives the vote its own system prompt, which asks for no proposal fields and no initial value', async () => {
    const { server } = await play('scripted');
    for (const id of new Set(server.requests.map((r) => agentOf(r.body)))) {
      const mine = server.requests.filter((r) => agentOf(r.body) === id);
      const decide = mine.find((r) => requestStage(r.body) === 'decide')!.body;
      const vote = mine.find((r) => requestStage(r.body) === 'vote')!.body;
      expect(vote.messages[0].content).not.toBe(decide.messages[0].content);
      for (const m of vote.messages)
        expect(m.content).not.toMatch(/internal_strategy|public_reasoning|initial value you were given/i);
      expect(Object.keys(requestSchema(vote).properties)).toEqual(['decision']);
      if (!isByzantine(vote)) expect(userOf(vote)).toMatch(/valid initial value\?/);
    }
  });

  it('gives none of the cues the reference does not give: no rounds left, no agent count, no stop-vote count', async () => {
    const { server } = await play('scripted');
    for (const { body } of server.requests) {
      const text = body.messages.map((m: { content: string }) => m.content).join('\n');
      expect(text).not.toMatch(/rounds remain|rounds? left|stop votes end|\b4 agents\b|\b3 of 4\b/);
    }
  });
});
