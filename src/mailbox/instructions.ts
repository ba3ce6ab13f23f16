/**
 * @module
 * What the mailbox tells agents: the server's MCP `instructions` (and what `witness
 * mailbox install` prints for runtimes that do not show them). The rules come from
 * the source incident (mailbox.md): a built-in tool with the same name silently took
 * the MCP tool's place, and a "sent" answer was taken for delivery. Tools are named
 * as the agent sees them — with the server's `--tool-prefix` — because the unprefixed
 * name is exactly the one a built-in may hold.
 */

/** The seed's rules for agents, in one paragraph (mailbox.md, "Instructions"), naming the tools with `prefix`. */
export function instructionsFor(prefix = ''): string {
  const t = (name: string) => `${prefix}${name}`;
  const builtIn =
    prefix === ''
      ? 'a built-in send_message or SendMessage'
      : 'a built-in send_message, SendMessage or any tool named like these without the prefix';
  return (
    `A mailbox shared by several agents. Use exactly these tools, by these names — ${t('list_agents')} to find recipients, ${t('send_message')} to send (reply_to keeps a conversation together), ${t('check_inbox')} or ${t('wait_for_message')} to read, ${t('ack_message')} to tell a sender you handled its message — and never a built-in tool of your runtime with a similar name (${builtIn} does not reach this mailbox). ` +
    'If these tools are missing, say that the mailbox server is not configured instead of improvising. ' +
    `A ${t('send_message')} answer only means the message was stored; delivery is proven by ${t('message_status')} (stored, read, acknowledged), not by what anyone says. Your identity is fixed by the server; ${t('whoami')} tells you who you are.`
  );
}

/** Added when the server pushes mail as Claude Code channel events. */
export function channelInstructionsFor(prefix = ''): string {
  return ` Messages from other agents also arrive on their own as <channel source="witness-mailbox" from="…" message_id="…"> events; answer one with ${prefix}send_message (to: its from, reply_to: its message_id) and acknowledge it with ${prefix}ack_message.`;
}
