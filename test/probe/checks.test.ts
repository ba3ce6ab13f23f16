/**
 * What the agent is told: the send prompt carries its canary; the receive and
 * control prompts are the same words and never carry one (mailbox.md §3).
 */
import fc from 'fast-check';
import { expect, it } from 'vitest';
import { newCanary, taskFor } from '../../src/probe/index.js';

it('gives receive and control the same prompt, without the canary, for any prefix', () => {
  fc.assert(
    fc.property(fc.stringMatching(/^[A-Za-z0-9_-]{0,32}$/), (prefix) => {
      const canary = newCanary();
      const receive = taskFor('receive', prefix, 'witness-mailbox', canary);
      const control = taskFor('control', prefix, 'witness-mailbox', canary);
      expect(receive.prompt).toBe(control.prompt);
      expect(receive.prompt).not.toContain(canary);
      expect('canary' in receive).toBe(false);
      expect(receive.prompt).toContain(`${prefix}check_inbox`);
    }),
    { verbose: true },
  );
});

it('puts the canary and the peer in the send prompt, with the prefixed tool names', () => {
  const canary = newCanary();
  const send = taskFor('send', 'mailbox_', 'witness-mailbox', canary);
  expect(send).toMatchObject({ kind: 'send', peer: 'probe-peer', canary });
  expect(send.prompt).toMatch(
    new RegExp(`mailbox_list_agents.*mailbox_send_message with to=probe-peer and body=${canary}`),
  );
});

it('draws a fresh canary every time', () => {
  const canaries = new Set(Array.from({ length: 1000 }, () => newCanary()));
  expect(canaries.size).toBe(1000);
});
