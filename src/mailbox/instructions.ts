/**
 * @module
 * What the mailbox tells agents: the server's MCP `instructions` (and what `witness
 * mailbox install` prints for runtimes that do not show them). The rules come from
 * the source incident (mailbox.md): a built-in tool with the same name silently took
 * the MCP tool's place, and a "sent" answer was taken for delivery.
 */

/** The seed's rules for agents, in one paragraph (mailbox.md; issue 17 "Instructions"). */
export const INSTRUCTIONS =
  'A mailbox shared by several agents. Use exactly these tools — list_agents to find recipients, send_message to send (reply_to keeps a conversation together), check_inbox or wait_for_message to read, ack_message to tell a sender you handled its message — and never a similarly named built-in tool of your runtime (a built-in send_message or SendMessage does not reach this mailbox). ' +
  'If these tools are missing, say that the mailbox server is not configured instead of improvising. ' +
  'A send_message answer only means the message was stored; delivery is proven by message_status (stored, read, acknowledged), not by what anyone says. Your identity is fixed by the server; whoami tells you who you are.';

export const CHANNEL_INSTRUCTIONS =
  ' Messages from other agents also arrive on their own as <channel source="witness-mailbox" from="…" message_id="…"> events; answer one with send_message (to: its from, reply_to: its message_id) and acknowledge it with ack_message.';
