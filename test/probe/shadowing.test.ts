/**
 * Shadowing by normalised name: every spelling of a mailbox action
 * clashes with the mailbox's tool, with and without a tool prefix and under every
 * namespace a runtime gives MCP tools; unrelated tools never do. Property tests
 * check the normaliser's invariants over generated spellings.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { TOOL_NAMES } from '../../src/mailbox/index.js';
import { findClashes, nameWords, toolKey, toolsClash } from '../../src/probe/shadowing.js';

const SERVER = 'witness-mailbox';
const served = (prefix: string) => TOOL_NAMES.map((t) => `${prefix}${t}`);

describe('the shadowing test, per spelling, against the mailbox tools', () => {
  for (const prefix of ['', 'mailbox_']) {
    for (const builtin of [
      'send_message',
      'SendMessage',
      'sendMessage',
      'mailbox_send',
      'send-message',
      'mcp__other-server__send_message',
    ]) {
      it(`finds built-in ${builtin} shadowing ${prefix}send_message (tool prefix ${JSON.stringify(prefix)})`, () => {
        const clashes = findClashes([builtin, 'read_file', 'list_files'], served(prefix), {
          serverName: SERVER,
          toolPrefix: prefix,
        });
        expect(clashes).toEqual([
          {
            tool: builtin,
            shadows: `${prefix}send_message`,
            action: 'send',
            same_name: builtin === `${prefix}send_message`,
          },
        ]);
      });
    }
  }

  it('finds ListAgents, read_inbox, WaitForMessage and WhoAmI shadowing their mailbox tools', () => {
    const clashes = findClashes(['ListAgents', 'read_inbox', 'WaitForMessage', 'WhoAmI'], served('mb-'), {
      toolPrefix: 'mb-',
    });
    expect(clashes.map((c) => [c.tool, c.shadows, c.action])).toEqual([
      ['ListAgents', 'mb-list_agents', 'list-agents'],
      ['read_inbox', 'mb-check_inbox', 'read-inbox'],
      ['WaitForMessage', 'mb-wait_for_message', 'wait'],
      ['WhoAmI', 'mb-whoami', 'whoami'],
    ]);
  });

  it('marks only the exact name the agent is told to call as same_name: the incident', () => {
    const clashes = findClashes(['send_message', 'SendMessage'], served(''), { serverName: SERVER });
    expect(clashes.map((c) => [c.tool, c.same_name])).toEqual([
      ['send_message', true],
      ['SendMessage', false],
    ]);
  });

  it('reads the names runtimes give MCP tools as the mailbox tool itself', () => {
    for (const name of [
      'mcp__witness-mailbox__send_message',
      'witness-mailbox_send_message',
      'mcp__witness-mailbox__mailbox_send_message',
    ]) {
      expect(toolKey(name, { serverName: SERVER, toolPrefix: 'mailbox_' })).toBe('action:send');
    }
  });

  it('covers mailbox tools outside the action table by their words: MessageStatus and AckMessage shadow message_status and ack_message', () => {
    const clashes = findClashes(['MessageStatus', 'mailbox-ack-message', 'message_state'], served('mailbox_'), {
      serverName: SERVER,
      toolPrefix: 'mailbox_',
    });
    expect(clashes.map((c) => [c.tool, c.shadows, c.action])).toEqual([
      ['MessageStatus', 'mailbox_message_status', 'messagestatus'],
      ['mailbox-ack-message', 'mailbox_ack_message', 'ackmessage'],
    ]);
  });

  it('finds no clash for unrelated tools, for send_email, or for a bare verb without a namespace', () => {
    const unrelated = [
      'send_email',
      'SendEmail',
      'list_files',
      'list',
      'send',
      'read_file',
      'ReadFile',
      'task_list',
      'Task',
      'team_create',
      'cron_list',
      'TodoWrite',
      'web_fetch',
      'read_mcp_resource',
      'message',
      'mailbox',
      'mailbox_list',
    ];
    for (const prefix of ['', 'mailbox_'])
      expect(findClashes(unrelated, served(prefix), { serverName: SERVER, toolPrefix: prefix })).toEqual([]);
  });
});

/** The five mailbox actions, each as word lists a runtime might use. */
const SPELLINGS: Record<string, string[][]> = {
  send: [
    ['send', 'message'],
    ['send', 'msg'],
  ],
  'list-agents': [
    ['list', 'agents'],
    ['list', 'agent'],
  ],
  'read-inbox': [
    ['check', 'inbox'],
    ['read', 'inbox'],
    ['get', 'messages'],
  ],
  wait: [
    ['wait', 'for', 'message'],
    ['wait', 'message'],
  ],
  whoami: [['who', 'am', 'i'], ['whoami']],
};

const STYLES: Array<(w: string[]) => string> = [
  (w) => w.join('_'),
  (w) => w.join('-'),
  (w) => w.join('.'),
  (w) => w.join(' '),
  (w) => w.join('').toUpperCase(),
  (w) => w.map((x, i) => (i === 0 ? x : x[0]!.toUpperCase() + x.slice(1))).join(''),
  (w) => w.map((x) => x[0]!.toUpperCase() + x.slice(1)).join(''),
  (w) => w.join('_').toUpperCase(),
];
const NAMESPACES = [
  '',
  'mcp__witness-mailbox__',
  'mcp__some_server__',
  'witness-mailbox_',
  'mailbox_',
  'Mailbox-',
  'mb_',
];

const spelling = fc.constantFrom(
  ...Object.entries(SPELLINGS).flatMap(([action, forms]) => forms.map((words) => ({ action, words }))),
);
const style = fc.constantFrom(...STYLES);
const namespace = fc.constantFrom(...NAMESPACES);
const ctx = { serverName: SERVER, toolPrefix: 'mb_' };

describe('normaliser invariants', () => {
  it('gives every spelling of an action, in any case and separators, under any namespace, the same key', () => {
    fc.assert(
      fc.property(spelling, style, namespace, ({ action, words }, render, ns) => {
        expect(toolKey(`${ns}${render(words)}`, ctx)).toBe(`action:${action}`);
      }),
      { verbose: true },
    );
  });

  it('never lets spellings of two different actions clash', () => {
    fc.assert(
      fc.property(spelling, spelling, style, style, namespace, namespace, (a, b, ra, rb, na, nb) => {
        fc.pre(a.action !== b.action);
        expect(toolsClash(`${na}${ra(a.words)}`, `${nb}${rb(b.words)}`, ctx)).toBe(false);
      }),
      { verbose: true },
    );
  });

  it('is insensitive to case and separators for any name, mailbox action or not', () => {
    const word = fc.stringMatching(/^[a-z][a-z0-9]{0,7}$/);
    // ALLCAPSJOINED is left out: it erases the word boundaries a namespace is stripped at.
    const keepsBoundaries = fc.constantFrom(...STYLES.filter((_, i) => i !== 4));
    fc.assert(
      fc.property(fc.array(word, { minLength: 1, maxLength: 4 }), keepsBoundaries, keepsBoundaries, (words, ra, rb) => {
        expect(toolKey(ra(words))).toBe(toolKey(rb(words)));
        expect(toolsClash(ra(words), rb(words))).toBe(true);
      }),
      { verbose: true },
    );
  });

  it('is symmetric', () => {
    const name = fc.stringMatching(/^[A-Za-z][A-Za-z0-9_.-]{0,20}$/);
    fc.assert(
      fc.property(name, name, (a, b) => {
        expect(toolsClash(a, b, ctx)).toBe(toolsClash(b, a, ctx));
      }),
      { verbose: true },
    );
  });

  it('splits camelCase, acronyms and separators into lower-case words', () => {
    expect(nameWords('WhoAmI')).toEqual(['who', 'am', 'i']);
    expect(nameWords('readMCPResource')).toEqual(['read', 'mcp', 'resource']);
    expect(nameWords('mcp__witness-mailbox__send_message')).toEqual(['mcp', 'witness', 'mailbox', 'send', 'message']);
  });
});
