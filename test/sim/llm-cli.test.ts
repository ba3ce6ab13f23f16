import { spawn } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_PACK_DIR } from '../../src/sim/prompts/pack.js';
import { requestStage, type ScriptedServer, startScriptedServer } from '../llm/scripted-server.js';
import { runCli } from '../support/cli.js';

const tempDir = () => mkdtempSync(join(tmpdir(), 'witness-llm-cli-'));
const root = join(import.meta.dirname, '..', '..');

const cli = async (args: string[], cwd = tempDir()) => ({ ...(await runCli(args, cwd)), cwd });

const servers: ScriptedServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

describe('witness sim with LLM agents', () => {
  it('replays a recorded cassette into a byte-identical results file, with no model', async () => {
    // Jittered delays shuffle the order replies arrive in; a 500 and a malformed reply put retries and invalid answers in the record.
    const server = await startScriptedServer((r) => {
      if (r.index === 3) return { status: 500 };
      if (r.index === 7) return { content: 'not json' };
      return { delayMs: Math.floor(Math.random() * 15) };
    });
    servers.push(server);
    const common = ['--quiet', '--honest', '3', '--byzantine', '1', '--rounds', '3', '--runs', '3', '-c', '3'];
    const recorded = await cli([
      'sim',
      ...common,
      '--agents',
      'llm',
      '--model',
      'scripted',
      '--endpoint',
      server.url,
      '--record',
      'sweep.cassette.jsonl',
      '--out',
      'recorded.jsonl',
    ]);
    expect(recorded.err).not.toMatch(/Error/);
    expect(recorded.code).toBe(0);
    await servers.pop()!.close();
    const replayed = await cli(
      [
        'sim',
        '--quiet',
        '-c',
        '2',
        '--agents',
        'replay',
        '--cassette',
        'sweep.cassette.jsonl',
        '--out',
        'replayed.jsonl',
      ],
      recorded.cwd,
    );
    expect(replayed.code).toBe(0);
    const a = readFileSync(join(recorded.cwd, 'recorded.jsonl'), 'utf8');
    expect(a.split('\n').filter(Boolean)).toHaveLength(3);
    expect(a).toContain('"retries":1');
    expect(a).toMatch(/"invalid_replies":[1-9]/);
    expect(readFileSync(join(recorded.cwd, 'replayed.jsonl'), 'utf8')).toBe(a);
  });

  it('sends --top-p and leaves top_k out with --top-k off; a cassette recorded with a cue replays with it', async () => {
    const server = await startScriptedServer();
    servers.push(server);
    const args = [
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
    ];
    const r = await cli([
      ...args,
      '--top-p',
      '0.9',
      '--top-k',
      'off',
      '--prompt-cue',
      'rounds-left',
      '--record',
      'c.jsonl',
      '--out',
      'a.jsonl',
    ]);
    expect(r.code).toBe(0);
    for (const { body } of server.requests) {
      expect(body.top_p).toBe(0.9);
      expect(body).not.toHaveProperty('top_k');
      expect(body.messages[1].content).toMatch(/^\d+ rounds remain after this one\.$/m);
    }
    const record = JSON.parse(readFileSync(join(r.cwd, 'a.jsonl'), 'utf8').split('\n')[0]!);
    expect(record.llm.prompts.cues).toEqual(['rounds-left']);
    const replay = await cli(
      ['sim', '--quiet', '--agents', 'replay', '--cassette', 'c.jsonl', '--out', 'b.jsonl'],
      r.cwd,
    );
    expect(replay.code).toBe(0);
    expect(readFileSync(join(r.cwd, 'b.jsonl'), 'utf8')).toBe(readFileSync(join(r.cwd, 'a.jsonl'), 'utf8'));
  });

  it('refuses to replay with a prompt pack other than the recorded one', async () => {
    const server = await startScriptedServer();
    servers.push(server);
    const r = await cli([
      'sim',
      '--quiet',
      '--honest',
      '2',
      '--rounds',
      '1',
      '--runs',
      '1',
      '--agents',
      'llm',
      '--model',
      'm',
      '--endpoint',
      server.url,
      '--record',
      'c.jsonl',
      '--out',
      'a.jsonl',
    ]);
    const pack = join(r.cwd, 'pack');
    cpSync(DEFAULT_PACK_DIR, pack, { recursive: true });
    writeFileSync(join(pack, 'decide.honest.txt'), 'Round {{round}}. Propose a value.');
    const replay = await cli(
      ['sim', '--quiet', '--agents', 'replay', '--cassette', 'c.jsonl', '--out', 'b.jsonl', '--prompts', 'pack'],
      r.cwd,
    );
    expect(replay.code).toBe(2);
    expect(replay.err).toMatch(/another prompt pack/);
  });

  it('sends the wording of a pack given with --prompts', async () => {
    const server = await startScriptedServer();
    servers.push(server);
    const cwd = tempDir();
    cpSync(DEFAULT_PACK_DIR, join(cwd, 'pack'), { recursive: true });
    writeFileSync(
      join(cwd, 'pack', 'vote.honest.may_exist.txt'),
      'Round {{round}}. Proposals:\n{{proposals}}\nStop only if they all match.',
    );
    const r = await cli(
      [
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
        'pack',
      ],
      cwd,
    );
    expect(r.code).toBe(0);
    const vote = server.requests.find((q) => requestStage(q.body) === 'vote')!;
    expect(vote.body.messages[1].content).toMatch(/^Round 1\. Proposals:\n {2}agent_0 \(you\): \d+\n {4}Reasoning: /);
  });

  it('refuses a pack whose template uses an unknown variable, naming the file', async () => {
    const cwd = tempDir();
    cpSync(DEFAULT_PACK_DIR, join(cwd, 'pack'), { recursive: true });
    writeFileSync(join(cwd, 'pack', 'decide.byzantine.txt'), 'Round {{round}} of {{rounds_total}}');
    const r = await cli(['sim', 'prompts', '--prompts', 'pack'], cwd);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/decide\.byzantine\.txt uses an unknown variable \{\{rounds_total\}\}/);
  });

  it('prints the rendered prompts and schemas of both roles for a sample state: a system and a user message per question, the vote with its own', async () => {
    const r = await cli(['sim', 'prompts']);
    expect(r.code).toBe(0);
    expect(r.out).toContain(
      '===== decide · honest · may_exist · temperature 0.5 · max tokens 300 · top_p 1 · top_k -1 =====',
    );
    expect(r.out).toContain('===== vote · byzantine');
    expect(r.out).toContain('MAY be Byzantine');
    expect(r.out).toContain('NO Byzantine (malicious) agents');
    expect(r.out).toContain('"enum":["stop","continue","abstain"]');
    const vote = r.out.slice(r.out.indexOf('===== vote · honest · may_exist'));
    expect(vote).toMatch(/^----- system -----\nYour name is agent_1; you are honest, and now you vote/m);
    expect(vote).toMatch(/^ {2}agent_1 \(you\): 30\n/m);
    expect(vote).toMatch(/^Round 3: agent_0 value: 30/m);
  });

  it('prints the extra cues and the retry notice when asked', async () => {
    const r = await cli([
      'sim',
      'prompts',
      '--role',
      'honest',
      '--stage',
      'decide',
      '--awareness',
      'may_exist',
      '--prompt-cue',
      'rounds-left',
      '--retry',
    ]);
    expect(r.code).toBe(0);
    expect(r.out).toContain('47 rounds remain after this one.');
    expect(r.out).toContain('RETRY, TRY 2 OF 3:');
    const bad = await cli(['sim', 'prompts', '--prompt-cue', 'mood']);
    expect(bad.code).toBe(2);
    expect(bad.err).toMatch(/"mood" is not a prompt cue; choose from: rounds-left, agent-count/);
  });

  it('prints the request bodies a server would get, with the chosen thinking switch', async () => {
    const r = await cli([
      'sim',
      'prompts',
      '--body',
      '--thinking-off',
      'kwargs',
      '--structured-output',
      'guided_json',
      '--role',
      'honest',
      '--stage',
      'vote',
      '--awareness',
      'none_exist',
    ]);
    const [only] = JSON.parse(r.out) as { body: Record<string, unknown> & { messages: { content: string }[] } }[];
    expect(only!.body.messages[1]!.content.endsWith(' /no_think')).toBe(false);
    expect(only!.body.chat_template_kwargs).toEqual({ enable_thinking: false });
    expect(only!.body.guided_json).toBeDefined();
    expect(only!.body).toMatchObject({ temperature: 0.3, top_p: 1, top_k: -1 });
    // By default, the study's way for a Qwen3 model: the suffix, no template flag.
    const auto = JSON.parse(
      (await cli(['sim', 'prompts', '--body', '--role', 'honest', '--stage', 'decide', '--awareness', 'may_exist']))
        .out,
    ) as (typeof only)[];
    expect(auto[0]!.body.messages[1]!.content.endsWith(' /no_think')).toBe(true);
    expect(auto[0]!.body.chat_template_kwargs).toBeUndefined();
  });

  it.each([
    [['--agents', 'llm', '--model', 'm'], /--endpoint URL/],
    [['--agents', 'llm', '--model', 'm', '--endpoint', 'localhost:8000'], /--endpoint.*must start with http:\/\//],
    [['--agents', 'llm', '--model', 'm', '--endpoint', 'not a url'], /--endpoint.*not a URL/],
    [['--agents', 'llm', '--endpoint', 'http://127.0.0.1:1/v1'], /grid\.model: is required/],
    [['--honest-agents', 'policy:nope'], /--honest-agents.*unknown honest policy "nope"/],
    [['--byzantine-agents', 'gpt'], /--byzantine-agents.*not llm, embedded or policy:NAME/],
    [['--agents', 'replay'], /--agents replay needs --cassette/],
    [['--agents', 'replay', '--cassette', 'x.jsonl'], /needs --out FILE/],
    [['--cassette', 'x.jsonl'], /--cassette is for --agents replay/],
    [['--record', 'c.jsonl'], /--record needs model-backed agents/],
    [
      ['--agents', 'llm', '--model', 'm', '--endpoint', 'http://127.0.0.1:1/v1', '--decide-temperature', '3'],
      /--decide-temperature "3" must be a number from 0 to 2/,
    ],
    [['--agents', 'gpt'], /--agents.*Allowed choices are policy, llm, embedded, replay/],
    [['--structured-output', 'xml'], /--structured-output/],
    [['--top-p', '0'], /--top-p "0" must be a number above 0 and at most 1, or off/],
    [['--top-k', '-2'], /--top-k "-2" must be a whole number from -1 up, or off/],
    [['--prompt-cue', 'rounds-left,mood'], /"mood" is not a prompt cue/],
  ])('rejects %j with exit status 2 and a message naming the option', async (args, message) => {
    const r = await cli(['sim', '--quiet', ...args]);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(message);
  });

  it('stops on Ctrl-C with exit status 130, cancelling requests in flight, and the same command then finishes the sweep', {
    timeout: 120_000,
  }, async () => {
    const server = await startScriptedServer((r) => (r.index >= 30 ? { delayMs: 60_000 } : undefined));
    servers.push(server);
    const cwd = tempDir();
    const out = join(cwd, 'r.jsonl');
    const args = [
      'sim',
      '--quiet',
      '--honest',
      '3',
      '--byzantine',
      '0',
      '--rounds',
      '3',
      '--runs',
      '8',
      '--agents',
      'llm',
      '--model',
      'm',
      '--endpoint',
      server.url,
      '--out',
      out,
    ];
    const child = spawn(process.execPath, ['--import', 'tsx', join(root, 'src/cli/main.ts'), ...args], {
      cwd: root,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    // Request 31 onwards hang: the sweep is stuck mid-run until interrupted.
    await server.received(31);
    child.kill('SIGINT');
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect(code).toBe(130);
    expect(stderr).toContain('rerun the same command to resume');
    const before = readFileSync(out, 'utf8').split('\n').filter(Boolean).length;
    expect(before).toBeLessThan(8);
    const fresh = await startScriptedServer();
    servers.push(fresh);
    const rerun = await cli([...args.slice(0, -4), '--endpoint', fresh.url, '--out', out, '--json'], cwd);
    expect(rerun.code).toBe(0);
    expect(JSON.parse(rerun.out)).toMatchObject({ skipped: before, ran: 8 - before });
  });

  it('exits 1 naming the endpoint when the server is down', async () => {
    const server = await startScriptedServer(() => ({ status: 502 }));
    servers.push(server);
    const r = await cli([
      'sim',
      '--quiet',
      '--honest',
      '2',
      '--rounds',
      '1',
      '--runs',
      '1',
      '--agents',
      'llm',
      '--model',
      'm',
      '--endpoint',
      server.url,
      '--max-retries',
      '1',
    ]);
    expect(r.code).toBe(1);
    expect(r.err).toContain(`The LLM endpoint ${server.url} failed 2 times in a row (last: HTTP 502`);
  });

  it('documents the LLM options with examples in --help', async () => {
    const r = await cli(['sim', '--help']);
    expect(r.out).toContain('--endpoint <url>');
    expect(r.out).toContain('--agents replay --cassette');
    expect(r.out).toContain('--honest-agents llm --byzantine-agents policy:split');
  });
});
