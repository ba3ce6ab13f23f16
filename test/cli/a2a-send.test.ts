/**
 * `witness a2a send` as a user runs it: against real `witness a2a serve`, `witness a2a
 * tool` and `witness a2a cosigner` processes, for each construction, ending with a
 * verified verdict and a record `witness verify` accepts by its type; and each way it
 * can fail — a wrong URL, an untrusted or unsigned card, a co-signer that refuses, a
 * child holding only its own key — with a clear message and the documented exit status.
 * The documented example of docs/a2a.md §4 runs here too, against the same processes.
 */
import { spawn } from 'node:child_process';
import { copyFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeDirectoryFile } from '../../src/attest/key-directory.js';
import { SqliteNonceStore } from '../../src/attest/nonce-store.js';
import { createReleaseSigner } from '../../src/attest/signer.js';
import { forge } from '../../src/attest/testing/world.js';
import { EVIDENCE_KEY } from '../../src/a2a/metadata.js';
import { trust } from '../a2a/helpers.js';
import { AgentEvent, serveScriptedAgent, TaskState, taskOf } from '../a2a/scripted-agent.js';
import { witnessBundle } from '../support/witness-bundle.js';
import { a2aCliFixture } from './a2a-fixture.js';

const ROOT = join(import.meta.dirname, '..', '..');
const validateReport = new Ajv2020({ allErrors: true, strict: false }).compile(
  JSON.parse(readFileSync(join(ROOT, 'docs', 'schemas', 'verify-report.schema.json'), 'utf8')) as object,
);

const fixture = a2aCliFixture('witness-a2a-send-');
const { dir, parentKey, childKey, scripted, cli } = fixture;
const start = (args: string[]) => fixture.servers.start(args);
let agent: string;
let cosigner: string;
/** A second co-signer of the parent's, which the child does not use: a grant recorded there is not the child's. */
let otherCosigner: string;

beforeAll(async () => {
  writeDirectoryFile(join(dir, 'parent-only.json'), trust([parentKey]).file);
  const tool = await start(['a2a', 'tool']);
  [cosigner, otherCosigner] = await Promise.all([
    start(['a2a', 'cosigner', '--key', 'parent.key.json', '--admin-token-file', 'grants.token']),
    start(['a2a', 'cosigner', '--key', 'parent.key.json', '--admin-token-file', 'other.token']),
  ]);
  agent = await fixture.serveChild(tool, cosigner);
}, 120_000);

afterAll(() => fixture.close());

/** `witness a2a send TO TASK --keys trusted.json OPTIONS…` */
const send = (to: string, task: string, ...options: string[]) =>
  cli('a2a', 'send', to, task, '--keys', 'trusted.json', ...options);
/** Your key, and a co-signer with the admin token file it was started with. */
const granting = (url: string, tokenFile: string) => [
  '--key',
  'parent.key.json',
  '--cosigner',
  url,
  '--admin-token-file',
  tokenFile,
];
const dag = () => granting(cosigner, 'grants.token');
const BY_CONSTRUCTION: Record<string, () => string[]> = {
  none: () => [],
  chain: () => ['--key', 'parent.key.json'],
  dag,
};

/** One line on stderr, no stack trace, no "internal error". */
function oneLine(err: string): void {
  expect(err.trim().split('\n')).toHaveLength(1);
  expect(err).not.toMatch(/internal error|\n\s+at /);
}

describe('witness a2a send to a running witness a2a serve', () => {
  it.each(Object.keys(BY_CONSTRUCTION))(
    'under %s ends verified, and witness verify accepts its record by its type',
    async (construction) => {
      const out = `${construction}.delegation.json`;
      const sent = await send(agent, 'Inspect lot 7.', ...BY_CONSTRUCTION[construction]!(), '--out', out);
      expect([sent.code, sent.err], sent.out).toEqual([
        0,
        `record: ${out} (check it with: witness verify ${out} --keys …)\n`,
      ]);
      expect(sent.out).toMatch(
        new RegExp(
          `^valid: the answer of org-child \\(task [0-9a-f-]{36}, 1 attested artifact\\(s\\), \\d+ bytes of text\\) verified under ${construction}: released by org-child/policy with key ${childKey.kid}, at depth ${construction === 'none' ? 0 : 1}${construction === 'dag' ? ', co-signed by org-parent' : ''}\\.\\nTask [0-9a-f]{16}`,
        ),
      );
      const checked = await cli('verify', out, '--keys', 'trusted.json');
      expect([checked.code, checked.out]).toEqual([
        0,
        expect.stringMatching(/^valid: the answer of org-child .* verified under \S+ as of /),
      ]);
      expect(checked.out).not.toMatch(/legacy/);
      const report = JSON.parse((await cli('verify', out, '--keys', 'trusted.json', '--json')).out);
      expect(validateReport(report) ? [] : validateReport.errors).toEqual([]);
      expect(report).toMatchObject({ ok: true, type: 'witness/a2a-delegation', legacy: false, problems: [] });
    },
  );

  it('keeps the nonce of the answer it accepted in the store --nonces names', async () => {
    const r = await send(agent, 'Inspect lot 21.', '--key', 'parent.key.json', '--nonces', 'nonces.db', '--json');
    expect(r.code).toBe(0);
    const leaf = (JSON.parse(r.out) as { paths: Array<Array<{ key_id: string; nonce: string }>> }).paths[0]!.at(-1)!;
    const store = new SqliteNonceStore(join(dir, 'nonces.db'));
    expect(await store.claim(`${leaf.key_id}:${leaf.nonce}`, Date.now() + 60_000)).toBe(false); // already accepted
    store.close();
  });

  it('prints {ok, output, problems, …} with --json', async () => {
    const { code, out } = await send(agent, 'Inspect lot 8.', ...dag(), '--json');
    expect(code).toBe(0);
    expect(JSON.parse(out)).toMatchObject({
      ok: true,
      child: 'org-child',
      construction: 'dag',
      answer: 'task',
      task: { state: 'TASK_STATE_COMPLETED' },
      output: expect.stringMatching(/^Task [0-9a-f]{16}/),
      problems: [],
      out: null,
    });
  });

  it('with --stream prints the text, then the verdict on its own line', async () => {
    const { code, out } = await send(agent, 'Inspect lot 9.', '--stream');
    expect(code).toBe(0);
    expect(out).toMatch(/^Task [0-9a-f]{16}[\s\S]* tolerance\nvalid: the answer of org-child [^\n]*\n$/);
  });

  it('refuses a record edited after the answer, naming what no longer matches', async () => {
    await send(agent, 'Inspect lot 10.', ...dag(), '--out', 'edited.json');
    const record = JSON.parse(readFileSync(join(dir, 'edited.json'), 'utf8'));
    record.answer.task.artifacts[0].parts[0].text += ' (edited)';
    writeFileSync(join(dir, 'edited.json'), JSON.stringify(record));
    const { code, out } = await cli('verify', 'edited.json', '--keys', 'trusted.json');
    expect(code).toBe(1);
    expect(out).toMatch(/^invalid: .*\n {2}OUTPUT_MISMATCH +\[artifact 0 \([0-9a-f-]{36}\), receipt 1\]/);
    expect(out).toMatch(/VERDICT_NOT_REPRODUCED/);
  });

  it('with --revocation all, refuses a record whose child key was revoked after it was verified (by the real clock)', async () => {
    await send(agent, 'Inspect lot 12.', ...dag(), '--out', 'revoked-later.json');
    copyFileSync(join(dir, 'trusted.json'), join(dir, 'revoking.json'));
    expect((await cli('keys', 'revoke', childKey.kid, '--dir', 'revoking.json')).code).toBe(0);
    const lenient = await cli('verify', 'revoked-later.json', '--keys', 'revoking.json');
    expect(lenient.code, lenient.out).toBe(0); // issued before the revocation
    const strict = await cli('verify', 'revoked-later.json', '--keys', 'revoking.json', '--revocation', 'all');
    expect(strict.code).toBe(1);
    expect(strict.out).toMatch(
      new RegExp(`REVOKED_KEY +Key ${childKey.kid} was revoked at .*"all" refuses every receipt`),
    );
    expect(strict.out).not.toMatch(/VERDICT_NOT_REPRODUCED/);
  });

  it('refuses --output, --nonces, --now, --skew and --construction on a record (exit 2), and asks for --keys', async () => {
    await send(agent, 'Inspect lot 11.', '--out', 'opts.json');
    for (const option of [
      ['--output', 'x'],
      ['--nonces', 'n.db'],
      ['--now', '2026-01-01T00:00:00Z'],
      ['--skew', '1'],
      ['--construction', 'dag'],
    ]) {
      const r = await cli('verify', 'opts.json', '--keys', 'trusted.json', ...option);
      expect([r.code, r.err], option[0]).toEqual([2, expect.stringContaining(option[0]!)]);
    }
    const noKeys = await cli('verify', 'opts.json');
    expect([noKeys.code, noKeys.err]).toEqual([2, expect.stringContaining('--keys')]);
  });
});

describe('witness a2a send: what fails, and its exit status', () => {
  it('a URL where no agent runs: exit 1, saying the agent may not be running', async () => {
    const r = await send('http://127.0.0.1:1', 'Inspect lot 12.');
    expect([r.code, r.err]).toEqual([
      1,
      expect.stringMatching(/Cannot fetch the Agent Card at .* Is the agent running\?/),
    ]);
    oneLine(r.err);
  });

  it('an argument that is not a URL: exit 2', async () => {
    const r = await send('127.0.0.1:4100', 'Inspect lot 13.');
    expect([r.code, r.err]).toEqual([2, expect.stringMatching(/is not an http\(s\) URL/)]);
  });

  it('a card your directory does not trust: exit 1 with CARD_UNKNOWN_KEY, and nothing written', async () => {
    const r = await cli(
      'a2a',
      'send',
      agent,
      'Inspect lot 14.',
      '--keys',
      'parent-only.json',
      '--out',
      'untrusted.json',
    );
    expect([r.code, r.err]).toEqual([1, expect.stringMatching(/Agent Card at .* did not verify: CARD_UNKNOWN_KEY/)]);
    oneLine(r.err);
    expect(existsSync(join(dir, 'untrusted.json'))).toBe(false);
  });

  it('an unsigned card: exit 1 with CARD_UNSIGNED', async () => {
    const unsigned = await serveScriptedAgent(childKey, async () => {}, { unsigned: true });
    scripted.push(unsigned);
    const r = await send(unsigned.url, 'Inspect lot 15.');
    expect([r.code, r.err]).toEqual([1, expect.stringMatching(/did not verify: CARD_UNSIGNED/)]);
  });

  it('a co-signer that refuses the grant (not its admin token): exit 1, before anything is sent', async () => {
    writeFileSync(join(dir, 'wrong.token'), 'not-the-admin-token-at-all\n');
    const r = await send(agent, 'Inspect lot 16.', ...granting(cosigner, 'wrong.token'));
    expect([r.code, r.err]).toEqual([
      1,
      expect.stringMatching(/the co-signer refused to record the grant \(HTTP 401\)/),
    ]);
    oneLine(r.err);
  });

  it('a co-signer that is not running: exit 1, naming it', async () => {
    const r = await send(agent, 'Inspect lot 17.', ...granting('http://127.0.0.1:1', 'grants.token'));
    expect([r.code, r.err]).toEqual([
      1,
      expect.stringMatching(/the co-signer at http:\/\/127\.0\.0\.1:1 is unreachable/),
    ]);
  });

  it("a co-signer that refuses the child's edge: the task fails, exit 1 with TASK_FAILED and the child's reason; its record is invalid", async () => {
    // The grant goes to a co-signer the child does not ask: the child's co-signer has none, refuses, and nothing is released.
    const r = await send(agent, 'Inspect lot 18.', ...granting(otherCosigner, 'other.token'), '--out', 'refused.json');
    expect(r.code).toBe(1);
    expect(r.out).toMatch(
      /^invalid: the answer of org-child \(task \S+, 0 attested artifact\(s\), 0 bytes of text\) did not verify under dag:\n {2}TASK_FAILED +\[task\] The child's task \S+ ended TASK_STATE_FAILED without a result: REFUSED: .*refused/,
    );
    const checked = await cli('verify', 'refused.json', '--keys', 'trusted.json');
    expect([checked.code, checked.out]).toEqual([1, expect.stringMatching(/TASK_FAILED/)]);
  });

  it('a child holding only its own key that claims the parent under dag: exit 1 with COSIGNATURE_MISSING', async () => {
    const forger = await serveScriptedAgent(childKey, async (turn) => {
      const text = 'Forged: every lot is within tolerance.';
      const link = await createReleaseSigner({ key: childKey, instance: 'forger' }).releaseOutput(Buffer.from(text), {
        ancestors: turn.ancestors,
        construction: 'chain',
      });
      const { signatures: _own, ...unsigned } = link;
      const edge = forge({ ...unsigned, type: 'edge', construction: 'dag', cosigners: ['org-parent'] }, [childKey]);
      const message = taskOf(turn, TaskState.TASK_STATE_COMPLETED, [], {
        [EVIDENCE_KEY]: { path: [...turn.ancestors, edge] },
      }).status!.message!;
      turn.bus.publish(
        AgentEvent.message({
          ...message,
          taskId: '',
          parts: [{ content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: '' }],
        }),
      );
    });
    scripted.push(forger);
    const r = await send(forger.url, 'Inspect lot 19.', ...dag(), '--out', 'forged.json');
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/^invalid: .*\n {2}COSIGNATURE_MISSING +\[message, receipt 1\]/);
    expect(r.out).not.toMatch(/Forged: every lot/); // an answer that did not verify is not printed as the output
    const checked = await cli('verify', 'forged.json', '--keys', 'trusted.json');
    expect([checked.code, checked.out]).toEqual([1, expect.stringMatching(/COSIGNATURE_MISSING/)]);
  });

  it('Ctrl-C while the child works: exit 130, nothing verified, no record written', async () => {
    let reached: () => void = () => {};
    const called = new Promise<void>((resolve) => {
      reached = resolve;
    });
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const slow = await serveScriptedAgent(childKey, async (turn) => {
      reached();
      await held;
      turn.bus.publish(AgentEvent.task(taskOf(turn, TaskState.TASK_STATE_CANCELED)));
    });
    scripted.push(slow);
    const [node, bundle] = await witnessBundle();
    const proc = spawn(
      node!,
      [bundle!, 'a2a', 'send', slow.url, 'Inspect lot 30.', '--keys', 'trusted.json', '--out', 'stopped.json'],
      { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let err = '';
    proc.stderr.on('data', (d: Buffer) => {
      err += d.toString();
    });
    const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
    await called; // the task reached the child: the command is waiting for its answer
    proc.kill('SIGINT');
    expect(await exited).toBe(130);
    release();
    expect(err).toMatch(
      /^witness: The delegation to \S+ was interrupted before the child answered; nothing was verified\.\n$/,
    );
    expect(existsSync(join(dir, 'stopped.json'))).toBe(false);
  });

  it.each([
    [['--key', 'parent.key.json', '--construction', 'none'], /--key applies to chain and dag/],
    [['--construction', 'chain'], /--construction chain signs the task: give your key with --key FILE/],
    [['--key', 'parent.key.json', '--construction', 'dag'], /--construction dag needs your co-signing service/],
    [['--key', 'parent.key.json', '--cosigner', 'http://127.0.0.1:1'], /--cosigner needs --admin-token-file FILE/],
    [
      [
        '--key',
        'parent.key.json',
        '--cosigner',
        'http://127.0.0.1:1',
        '--admin-token-file',
        'grants.token',
        '--construction',
        'chain',
      ],
      /--cosigner applies to dag only/,
    ],
    [['--admin-token-file', 'grants.token'], /--admin-token-file applies only with --cosigner/],
    [['--out', 'no-such-folder/d.json'], /the folder .*no-such-folder does not exist/],
  ])('%j: exit 2 before anything is sent', async (options, message) => {
    const r = await send(agent, 'Inspect lot 20.', ...options);
    expect([r.code, r.err]).toEqual([2, expect.stringMatching(message)]);
    oneLine(r.err);
  });

  it('shows an example in `witness a2a send --help`', async () => {
    const { code, out } = await cli('a2a', 'send', '--help');
    expect(code).toBe(0);
    expect(out).toMatch(/Example:\n {2}\$ witness a2a send http/);
  });
});

describe('docs/a2a.md §4', () => {
  it('runs the documented example against the running services, with the exit status and verdicts it shows', async () => {
    const guide = readFileSync(join(ROOT, 'docs', 'a2a.md'), 'utf8');
    const section = guide.slice(guide.indexOf('## 4. '), guide.indexOf('\n## ', guide.indexOf('## 4. ') + 1));
    const block = /```console\n([\s\S]*?)```/.exec(section)?.[1] ?? '';
    const lines = block.replace(/\\\n\s*/g, '').split('\n');
    const commands = lines.flatMap((line, i) => {
      const m = /^parent\$ npx witness (.*)$/.exec(line);
      return m ? [{ argv: _words(m[1]!), shown: lines[i + 1] ?? '' }] : [];
    });
    expect(commands.map((c) => c.argv[0])).toEqual(['a2a', 'verify']);
    // The guide's services listen on 4100 (agent) and 4300 (co-signer); here they run on free ports.
    const ports: Record<string, string> = { 'http://127.0.0.1:4100': agent, 'http://127.0.0.1:4300': cosigner };
    for (const { argv, shown } of commands) {
      const r = await cli(...argv.map((a) => ports[a] ?? a));
      expect(r.code, `${argv.join(' ')}\n${r.err}`).toBe(0);
      expect(r.out.split('\n')[0]).toMatch(_shownAsPattern(shown));
    }
  });
});

/** Shell words: spaces split, quotes group. */
function _words(line: string): string[] {
  return [...line.matchAll(/'([^']*)'|"([^"]*)"|(\S+)/g)].map((m) => m[1] ?? m[2] ?? (m[3] as string));
}

/** A line the guide shows, `…` standing for what differs from run to run. */
function _shownAsPattern(shown: string): RegExp {
  return new RegExp(
    `^${shown
      .split('…')
      .map((s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
      .join('.*')}$`,
  );
}
