/**
 * Commands that would wait on nothing fail instead: `mailbox tail` on a folder that is
 * missing or no mailbox, or for an agent nobody registered, used to print "Waiting for
 * new messages" for ever; `mailbox serve` on PostgreSQL with a bad --agent printed the
 * error and never exited (its pool and LISTEN connection kept the process alive).
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cli, makeMailbox, type TestMailbox, tempDir, witnessCommand } from './helpers.js';

describe('mailbox tail', () => {
  it('on a folder that does not exist: exit 2, and no "Waiting"', async () => {
    const dir = join(tempDir(), 'nosuch');
    const { err } = await cli(['mailbox', 'tail', dir], 2);
    expect(err).toBe(`witness: ${dir} does not exist; give a mailbox folder (made by \`witness mailbox init\`).\n`);
  });

  it('on a folder that is not a mailbox: exit 2', async () => {
    const dir = tempDir();
    const { err } = await cli(['mailbox', 'tail', dir], 2);
    expect(err).toBe(
      `witness: ${dir} is not a mailbox (no mailbox.json). Create one with \`witness mailbox init ${dir}\`.\n`,
    );
  });

  for (const store of ['jsonl', 'sqlite', 'postgres'] as const) {
    it(`for an agent that is not registered (${store}): exit 2, naming the agents there are`, async () => {
      const mb = await makeMailbox(['alice', 'bob'], { store });
      try {
        const { err } = await cli(['mailbox', 'tail', mb.dir, '--agent', 'carol'], 2);
        expect(err).toBe(
          `witness: The agent "carol" is not registered in ${mb.dir} (its agents: alice, bob); register it with: witness mailbox add-agent ${mb.dir} carol\n`,
        );
      } finally {
        await mb.cleanup();
      }
    });
  }
});

describe('mailbox serve on PostgreSQL', () => {
  let mb: TestMailbox;
  afterAll(async () => mb?.cleanup());

  /** The real process, with a deadline: the bug was a process that never exits. */
  function serve(agent: string) {
    const [command, ...args] = witnessCommand();
    const r = spawnSync(command as string, [...args, 'mailbox', 'serve', '--dir', mb.dir, '--agent', agent], {
      encoding: 'utf8',
      timeout: 60_000,
      input: '',
    });
    return { status: r.status, err: r.stderr };
  }

  it('with an unregistered --agent exits 2 after one line', async () => {
    mb = await makeMailbox(['alice'], { store: 'postgres' });
    expect(serve('carol')).toEqual({
      status: 2,
      err: `witness: The agent "carol" is not registered in ${mb.dir}. Register it first: witness mailbox add-agent ${mb.dir} carol\n`,
    });
  });

  it('with an invalid --agent exits 2 after one line', () => {
    const r = serve('bad name');
    expect(r.status).toBe(2);
    expect(r.err).toMatch(/^witness: Invalid --agent: the agent name "bad name" is not .*\n$/);
  });
});
