import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ChildAgent, serveChildAgent } from '../../src/a2a/agent.js';
import { openAiCompatibleBackend } from '../../src/a2a/llm-backend.js';
import { delegate } from '../../src/a2a/parent.js';
import { type ScriptedServer, startScriptedServer } from '../llm/scripted-server.js';
import { startWorld, type World } from './helpers.js';

let world: World;
let model: ScriptedServer;
let agent: ChildAgent;
beforeAll(async () => {
  world = await startWorld();
  // A real OpenAI-compatible HTTP server answering from a script (test/llm).
  model = await startScriptedServer((request) =>
    String(request.body.messages?.[1]?.content).includes('garbled')
      ? { content: 'not json at all' }
      : { content: '{"verdict":"REJECT","reason":"two of three findings are outside tolerance"}' },
  );
  agent = await serveChildAgent({
    key: world.child,
    toolUrl: world.tool.url,
    cosigners: { 'org-parent': world.cosigner.url },
    backend: openAiCompatibleBackend({ endpoint: model.url, model: 'scripted' }),
  });
});
afterAll(async () => {
  await agent.close();
  await model.close();
  await world.close();
});

const options = () => ({ key: world.parent, directory: world.directory, cosigner: world.service });

describe('the llm child', () => {
  it('releases the model answer under dag, and the parent verifies it', async () => {
    const result = await delegate(agent.url, 'Inspect lot 12.', 'dag', options());
    expect(result.verdict.ok).toBe(true);
    expect(result.output_text).toMatch(
      /^Task [0-9a-f]{16}: verdict REJECT\. two of three findings are outside tolerance$/,
    );
  });

  it('asks the model for schema-constrained JSON with the task and the tool evidence', async () => {
    const seen = model.requests.at(-1)?.body;
    expect(seen.response_format).toMatchObject({
      type: 'json_schema',
      json_schema: { name: 'lot_verdict', strict: true },
    });
    expect(seen.messages[1].content).toMatch(/^Task: Inspect lot 12\.\nFindings:\n- finding 1: /);
  });

  it('fails the task, releasing nothing, when the model answer is not JSON', async () => {
    await expect(delegate(agent.url, 'A garbled lot.', 'dag', options())).rejects.toThrow(
      /returned no result.*not JSON/,
    );
  });
});
