/**
 * @module
 * Shadowing by name: a runtime's built-in tool that names the same
 * action as a mailbox tool, in any spelling, can be called in its place and report
 * success without delivering anything — the incident in mailbox.md, where Qwen
 * Code's built-in `send_message` won over the MCP tool of the same name.
 *
 * Two names clash when, after lower-casing, splitting at separators and camelCase
 * boundaries, and stripping namespace prefixes (`mcp__<server>__`, `<server>_`, the
 * `--tool-prefix`, `mailbox_`), they name the same mailbox action (`send_message`,
 * `SendMessage`, `sendMessage`, `send-message`, `mailbox_send`,
 * `mcp__witness-mailbox__send_message` all mean "send"), or are the same words.
 *
 * Deliberately not a clash: another action on the same object (`send_email`: an
 * email to an address is not a mailbox message; `list_files`, `read_file`), and a
 * bare verb with no namespace (`send`, OpenCode's `list`): too general to be read as
 * the mailbox's action. The verb alone counts only after a namespace was stripped
 * (`mailbox_send`), and `list` never does (list what? agents or messages).
 */

/** A mailbox action, by the joined words that spell it. */
const ACTIONS: Record<string, { names: readonly string[]; verbs: readonly string[] }> = {
  send: { names: ['sendmessage', 'sendmessages', 'sendmsg'], verbs: ['send'] },
  'list-agents': { names: ['listagents', 'listagent'], verbs: [] },
  'read-inbox': {
    names: [
      'checkinbox',
      'readinbox',
      'getinbox',
      'checkmessages',
      'readmessages',
      'getmessages',
      'receivemessages',
      'receivemessage',
    ],
    verbs: ['check', 'read', 'inbox'],
  },
  wait: { names: ['waitformessage', 'waitformessages', 'waitmessage'], verbs: ['wait'] },
  whoami: { names: ['whoami'], verbs: [] },
};

/** The namespaces a tool name may carry in a runtime. */
export interface NameContext {
  /** The MCP server's name in the runtime's config (OpenCode prefixes `<server>_`). */
  serverName?: string;
  /** The mailbox's `--tool-prefix`. */
  toolPrefix?: string;
}

/** One built-in that shadows one mailbox tool. */
export interface Clash {
  /** The runtime's built-in tool, as the runtime names it. */
  tool: string;
  /** The mailbox tool it shadows, as the mailbox serves it (the name the agent is told to call). */
  shadows: string;
  /** The action both name (`send`, `list-agents`, …), or their shared words. */
  action: string;
  /** Exactly the name the agent is told to call: the incident itself. */
  same_name: boolean;
}

/** Lower-case words of a name: split at separators and camelCase boundaries (`WhoAmI` → who, am, i). */
export function nameWords(name: string): string[] {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((w) => w.toLowerCase());
}

/** The words left after every namespace prefix, and whether one was stripped. */
function _unprefixed(name: string, ctx: NameContext): { words: string[]; namespaced: boolean } {
  // `mcp__<server>__<tool>` (Qwen Code, Claude Code): the server part may hold `_` or `-`.
  const mcp = /^mcp__(.+?)__(.+)$/i.exec(name);
  let words = nameWords(mcp ? mcp[2]! : name);
  let namespaced = Boolean(mcp);
  for (const prefix of [ctx.serverName, ctx.toolPrefix, 'mailbox']) {
    const p = nameWords(prefix ?? '');
    // Never strip a name down to nothing: a tool called `mailbox` is named `mailbox`.
    if (p.length === 0 || words.length <= p.length || !p.every((w, i) => words[i] === w)) continue;
    words = words.slice(p.length);
    namespaced = true;
  }
  return { words, namespaced };
}

/** What a tool name stands for: `action:<name>` for a mailbox action, else `words:<joined words>`. */
export function toolKey(name: string, ctx: NameContext = {}): string {
  const { words, namespaced } = _unprefixed(name, ctx);
  const joined = words.join('');
  for (const [action, forms] of Object.entries(ACTIONS)) {
    if (forms.names.includes(joined) || (namespaced && words.length === 1 && forms.verbs.includes(joined)))
      return `action:${action}`;
  }
  return `words:${joined}`;
}

/** Whether two tool names name the same thing (see the module comment). */
export function toolsClash(a: string, b: string, ctx: NameContext = {}): boolean {
  return toolKey(a, ctx) === toolKey(b, ctx);
}

/** Every built-in that shadows a mailbox tool, in the order of the mailbox's tools. */
export function findClashes(
  builtins: readonly string[],
  mailboxTools: readonly string[],
  ctx: NameContext = {},
): Clash[] {
  const clashes: Clash[] = [];
  for (const shadows of mailboxTools) {
    const key = toolKey(shadows, ctx);
    for (const tool of builtins) {
      if (toolKey(tool, ctx) === key)
        clashes.push({ tool, shadows, action: key.slice(key.indexOf(':') + 1), same_name: tool === shadows });
    }
  }
  return clashes;
}
