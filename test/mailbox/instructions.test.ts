/**
 * The instructions name the tools as the agent sees them: with --tool-prefix (what
 * `install` writes) the tools are mailbox_send_message …, and an instruction to "use
 * send_message" points the agent at exactly the name a built-in may hold.
 */
import { describe, expect, it } from 'vitest';
import { cli, makeMailbox, stdioClient, tempDir } from './helpers.js';

/** Every name in `text` that looks like a mailbox tool, with whatever prefix it has. */
const named = (text: string) =>
  new Set(
    text.match(
      /\b[A-Za-z0-9_-]*(list_agents|send_message|check_inbox|wait_for_message|ack_message|message_status|whoami)\b/g,
    ),
  );

describe('instructions name the tools with their prefix', () => {
  it('the server with --tool-prefix mailbox_ names every tool it lists, prefixed, and no unprefixed one', async () => {
    const mb = await makeMailbox(['alice']);
    const { client, close } = await stdioClient(mb.dir, 'alice', ['--tool-prefix', 'mailbox_', '--channel']);
    try {
      const text = client.getInstructions() ?? '';
      // The one place a bare name belongs: the built-in it warns about.
      const told = text.replace(/\(a built-in [^)]*\)/, '');
      const tools = new Set((await client.listTools()).tools.map((t) => t.name));
      expect(told).not.toBe(text);
      for (const name of named(told)) expect(tools, `${name} in the instructions`).toContain(name);
      expect(text).toMatch(
        /\(a built-in send_message, SendMessage or any tool named like these without the prefix does not reach this mailbox\)/,
      );
      expect(text).toMatch(/Use exactly these tools, by these names — mailbox_list_agents/);
      expect(text).toMatch(/never a built-in tool of your runtime with a similar name/);
      expect(text).toMatch(/answer one with mailbox_send_message .* acknowledge it with mailbox_ack_message/);
    } finally {
      await close();
    }
  });

  it('install notes tell the agent the prefixed names it will see', async () => {
    const mb = await makeMailbox(['alice']);
    const { err } = await cli([
      'mailbox',
      'install',
      'opencode',
      '--dir',
      mb.dir,
      '--agent',
      'alice',
      '--project',
      tempDir('witness-proj-'),
      '--server-command',
      '["node","/opt/witness/main.js"]',
      '--tool-prefix',
      'team_',
      '--dry-run',
    ]);
    const note = err.split('\n').find((l) => l.startsWith('Tell the agent')) ?? '';
    expect(note).toMatch(/team_list_agents to find recipients, team_send_message to send/);
    expect(note).toMatch(/delivery is proven by team_message_status/);
    expect(note).not.toMatch(/— list_agents/);
  });
});
