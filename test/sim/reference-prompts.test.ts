/**
 * `--prompts reference:PATH` (sim/prompts/reference.ts, python/reference_bridge.py):
 * prompts built by a checkout's own functions through python3. The checkout here is
 * a stand-in with the reference's module, class and method names and our own trivial
 * wording (test/fixtures/reference-standin), which imports vllm and torch like the
 * real one: nothing here runs without the bridge's stubs.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { memoryIo } from '../../src/cli/io.js';
import { runMain } from '../../src/cli/main.js';
import { WitnessError } from '../../src/core/errors.js';
import { sealRound, summarizeRound } from '../../src/sim/network.js';
import { loadPromptPack } from '../../src/sim/prompts/pack.js';
import { type ExternalPrompts, openReferencePrompts } from '../../src/sim/prompts/reference.js';
import type { GameRules, Proposal, PublicRound, Role, VoteView } from '../../src/sim/types.js';
import { type ScriptedServer, startScriptedServer } from '../llm/scripted-server.js';

const STANDIN = join(import.meta.dirname, '..', 'fixtures', 'reference-standin');
const pack = loadPromptPack();
const hasPython = spawnSync('python3', ['--version']).status === 0;
if (!hasPython) console.log('reference-prompts.test.ts: skipped, python3 is not installed (the bridge needs it)');

const opened: ExternalPrompts[] = [];
const servers: ScriptedServer[] = [];
afterEach(async () => {
  await Promise.all([...opened.splice(0).map((p) => p.close()), ...servers.splice(0).map((s) => s.close())]);
});

async function open(path = STANDIN, python?: string): Promise<ExternalPrompts> {
  const prompts = await openReferencePrompts(path, { pack, python });
  opened.push(prompts);
  return prompts;
}

/** Round 4 of 12 agents (agent_10 and agent_11 sort before agent_2), seen by agent_1. */
function view(role: Role, now: Proposal[] = Array.from({ length: 12 }, (_, i) => i)): VoteView {
  const ids = Array.from({ length: 12 }, (_, i) => `agent_${i}`);
  const history: PublicRound[] = [1, 2, 3].map((r) =>
    sealRound(
      r,
      ids,
      ids.map((_, i) => r + i),
      ids.map((id) => `${id} in round ${r}`),
    ),
  );
  const round = sealRound(
    4,
    ids,
    now,
    ids.map((id) => `${id} now`),
  );
  const rules = { totalAgents: 12, range: [0, 50], maxRounds: 12, awareness: 'may_exist' } as GameRules;
  return {
    id: 'agent_1',
    role,
    round: 4,
    rules,
    initialValue: role === 'honest' ? 33 : null,
    currentValue: 1,
    history: [...history, round],
    notes: [
      { round: 1, text: ' first note ' },
      { round: 2, text: '\x1f ' },
      { round: 3, text: 'third note' },
    ],
    proposals: round.messages,
    proposalValues: round.values,
  };
}
const decideView = (v: VoteView): VoteView => ({
  ...v,
  history: v.history.slice(0, -1),
  proposals: [],
  proposalValues: [],
});

describe.skipIf(!hasPython)('prompts from a checkout of the reference', () => {
  it("builds a proposal with the checkout's own functions from the engine's state, with the pack's sampling", async () => {
    const v = decideView(view('honest'));
    const request = await (await open()).render('decide', v);
    expect(request.messages).toEqual([
      { role: 'system', content: 'SYS agent_1 H may_exist init=33 R=12 range=[0, 50]' },
      // The stand-in keeps 2 notes cut to 8 characters and shows 2 history lines, newest first.
      {
        role: 'user',
        content: `ROUND 4 value=1\nHIST ${summarizeRound(v.history[2]!)} / ${summarizeRound(v.history[1]!)}\nNOTES 1:first no;3:third no`,
      },
    ]);
    expect(request.schema).toEqual({ type: 'object', properties: { value: { type: 'integer' } }, stand_in: 'H' });
    expect(request).toMatchObject({ temperature: 0.5, maxTokens: 300, topP: 1, topK: -1, schemaName: 'decide_honest' });
  });

  it("builds a vote with the agent's own reasoning and the others that proposed, in the reference's order", async () => {
    const v = view('byzantine', [0, 1, 'abstain', ...Array.from({ length: 9 }, (_, i) => i + 3)]);
    const request = await (await open()).render('vote', v);
    const others = [
      'agent_0',
      'agent_10',
      'agent_11',
      'agent_3',
      'agent_4',
      'agent_5',
      'agent_6',
      'agent_7',
      'agent_8',
      'agent_9',
    ].map((id) => `${id}=${id.slice(6)}(${id} now)`);
    expect(request.messages[0]!.content).toBe('VOTESYS agent_1 B');
    expect(request.messages[1]!.content).toBe(
      `VOTE 4 me=1 said=agent others=${others.join(',')}\nHIST ${summarizeRound(v.history[3]!)}`,
    );
    expect(request).toMatchObject({ temperature: 0.3, maxTokens: 200, schemaName: 'vote_byzantine' });
  });

  it("gives a single follow-up's later tries the checkout's own retry prompts, and whole-round retries the first prompt", async () => {
    const prompts = await open();
    const v = decideView(view('honest'));
    const user = async (phase: 'round' | 'single', number: number) =>
      (await prompts.render('decide', v, { phase, number, of: 3 })).messages[1]!.content;
    const first = await user('round', 1);
    expect(await user('round', 2)).toBe(first);
    expect(await user('single', 1)).toBe(first);
    expect(await user('single', 2)).toBe(`${first}\nAGAIN 2/3`);
    expect(await user('single', 3)).toBe(`${first}\nAGAIN 3/3`);
  });

  it('answers many questions in flight at once, each with its own prompt', async () => {
    const prompts = await open();
    const views = Array.from({ length: 40 }, (_, i) => ({ ...decideView(view('honest')), currentValue: i }));
    const requests = await Promise.all(views.map((v) => prompts.render('decide', v)));
    expect(requests.map((r) => /value=(\d+)/.exec(r.messages[1]!.content)![1])).toEqual(views.map((_, i) => String(i)));
  });

  it('changes its hash when any Python file of the checkout changes', async () => {
    const copy = mkdtempSync(join(tmpdir(), 'witness-ref-'));
    cpSync(STANDIN, copy, { recursive: true });
    const before = (await open(copy)).hash;
    writeFileSync(
      join(copy, 'byzantine_consensus_game', 'config.py'),
      `${readFileSync(join(copy, 'byzantine_consensus_game', 'config.py'), 'utf8')}# changed\n`,
    );
    expect((await open(copy)).hash).not.toBe(before);
    expect((await open(STANDIN)).name).toBe('reference');
  });

  it('refuses a path that is not a checkout, saying what it looked for', async () => {
    const error = await openReferencePrompts(tmpdir(), { pack }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(WitnessError);
    expect(error).toMatchObject({
      code: 'NOT_FOUND',
      message: expect.stringMatching(/not a checkout of the reference: .*bcg_agents\.py/),
    });
  });

  it('says so when the Python interpreter cannot be started', async () => {
    const error = await openReferencePrompts(STANDIN, { pack, python: '/nonexistent/python3' }).catch(
      (e: unknown) => e,
    );
    expect(error).toMatchObject({
      code: 'NOT_FOUND',
      message: expect.stringMatching(/\/nonexistent\/python3 was not found.*WITNESS_PYTHON/),
    });
  });

  it('names a function the checkout lacks before any question is asked', async () => {
    const copy = mkdtempSync(join(tmpdir(), 'witness-ref-'));
    cpSync(STANDIN, copy, { recursive: true });
    const file = join(copy, 'byzantine_consensus_game', 'bcg_agents.py');
    writeFileSync(file, readFileSync(file, 'utf8').replace('def build_vote_prompt(', 'def _gone('));
    const error = await openReferencePrompts(copy, { pack }).catch((e: unknown) => e);
    expect(error).toMatchObject({
      code: 'INVALID_INPUT',
      message: expect.stringMatching(/cannot be used: .*has no build_vote_prompt/),
    });
  });

  it('offers only may_exist for a checkout from before the awareness variants, and will not render none_exist', async () => {
    const copy = mkdtempSync(join(tmpdir(), 'witness-ref-'));
    cpSync(STANDIN, copy, { recursive: true });
    const file = join(copy, 'byzantine_consensus_game', 'bcg_agents.py');
    const text = readFileSync(file, 'utf8').replace(
      ', byzantine_awareness="may_exist"):\n    return BCGAgent(agent_id, is_byzantine, model_name, model_config, value_range, byzantine_awareness)',
      '):\n    return BCGAgent(agent_id, is_byzantine, model_name, model_config, value_range)',
    );
    writeFileSync(file, text);
    const prompts = await open(copy);
    expect(prompts.awareness).toEqual(['may_exist']);
    expect((await prompts.render('decide', decideView(view('honest')))).messages[0]!.content).toMatch(/ may_exist /);
    const none = {
      ...decideView(view('honest')),
      rules: { ...view('honest').rules, awareness: 'none_exist' as const },
    };
    await expect(prompts.render('decide', none)).rejects.toThrow(/has only the may_exist prompts/);
  });

  it('fails a question whose prompt the checkout could not build, naming it and the reason', async () => {
    const copy = mkdtempSync(join(tmpdir(), 'witness-ref-'));
    cpSync(STANDIN, copy, { recursive: true });
    const file = join(copy, 'byzantine_consensus_game', 'bcg_agents.py');
    writeFileSync(
      file,
      readFileSync(file, 'utf8').replace(
        '    def build_vote_round_prompt(self, game_state):\n',
        '    def build_vote_round_prompt(self, game_state):\n        raise ValueError("no votes today")\n',
      ),
    );
    const prompts = await open(copy);
    const error = await prompts.render('vote', view('honest')).catch((e: unknown) => e);
    expect(error).toMatchObject({
      code: 'INVALID_INPUT',
      message: expect.stringMatching(
        /could not build the vote prompt of agent_1 in round 4: ValueError: no votes today/,
      ),
    });
    expect((await prompts.render('decide', decideView(view('honest')))).messages[0]!.content).toMatch(/^SYS agent_1/);
  });
});

describe.skipIf(!hasPython)('witness sim --prompts reference:PATH', () => {
  const cli = async (args: string[]) => {
    const io = memoryIo(mkdtempSync(join(tmpdir(), 'witness-ref-cli-')));
    return { code: await runMain(args, io), io };
  };

  it("sends the checkout's prompts and records them as the reference's, with their hash", async () => {
    const server = await startScriptedServer();
    servers.push(server);
    const r = await cli([
      'sim',
      '--quiet',
      '--honest',
      '2',
      '--rounds',
      '2',
      '--runs',
      '1',
      '--agents',
      'llm',
      '--model',
      'm',
      '--endpoint',
      server.url,
      '--prompts',
      `reference:${STANDIN}`,
      '--out',
      'a.jsonl',
    ]);
    expect(r.io.err).not.toMatch(/witness:/);
    expect(r.code).toBe(0);
    expect(server.requests[0]!.body.messages[0].content).toMatch(
      /^SYS agent_\d H may_exist init=\d+ R=2 range=\[0, 50\]$/,
    );
    const record = JSON.parse(readFileSync(join(r.io.cwd, 'a.jsonl'), 'utf8').split('\n')[0]!);
    expect(record.llm.prompts).toEqual({ name: 'reference', hash: (await open()).hash });
  });

  it('refuses a none_exist grid when the checkout has only the may_exist prompts', async () => {
    const copy = mkdtempSync(join(tmpdir(), 'witness-ref-'));
    cpSync(STANDIN, copy, { recursive: true });
    const file = join(copy, 'byzantine_consensus_game', 'bcg_agents.py');
    writeFileSync(
      file,
      readFileSync(file, 'utf8').replace(
        ', byzantine_awareness="may_exist"):\n    return BCGAgent(agent_id, is_byzantine, model_name, model_config, value_range, byzantine_awareness)',
        '):\n    return BCGAgent(agent_id, is_byzantine, model_name, model_config, value_range)',
      ),
    );
    const r = await cli([
      'sim',
      '--quiet',
      '--honest',
      '2',
      '--runs',
      '1',
      '--awareness',
      'may_exist,none_exist',
      '--agents',
      'llm',
      '--model',
      'm',
      '--endpoint',
      'http://127.0.0.1:9/v1',
      '--prompts',
      `reference:${copy}`,
    ]);
    expect(r.code).toBe(2);
    expect(r.io.err).toMatch(/has no none_exist prompts \(only may_exist\): run with --awareness may_exist/);
  });

  it('refuses extra cues with the reference prompts, which have none', async () => {
    const r = await cli([
      'sim',
      '--quiet',
      '--honest',
      '2',
      '--runs',
      '1',
      '--agents',
      'llm',
      '--model',
      'm',
      '--endpoint',
      'http://127.0.0.1:9/v1',
      '--prompts',
      `reference:${STANDIN}`,
      '--prompt-cue',
      'rounds-left',
    ]);
    expect(r.code).toBe(2);
    expect(r.io.err).toMatch(/--prompt-cue .*reference/);
  });

  it("prints the checkout's prompts for the sample state with `witness sim prompts`", async () => {
    const r = await cli([
      'sim',
      'prompts',
      '--prompts',
      `reference:${STANDIN}`,
      '--role',
      'honest',
      '--stage',
      'vote',
      '--awareness',
      'none_exist',
    ]);
    expect(r.code).toBe(0);
    expect(r.io.out).toMatch(
      /^Prompts of the reference checkout at .*reference-standin\/byzantine_consensus_game, sha256 [0-9a-f]{16}…$/m,
    );
    expect(r.io.out).toContain('VOTESYS agent_');
  });
});
