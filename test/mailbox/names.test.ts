/**
 * Agent names are unique case-insensitively: `alice` and `Alice` would share one
 * inbox file on a case-insensitive file system (macOS, Windows). Registering the
 * second is refused, and so is an agents.json that already holds such a pair (or a
 * name that is not a valid agent name, or a repeated key).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createRuntime, readAgents } from '../../src/mailbox/index.js';
import { cli, makeMailbox } from './helpers.js';

const agentsFile = (dir: string) => join(dir, 'agents.json');

describe('agent names', () => {
  for (const [first, second] of [
    ['alice', 'Alice'],
    ['BOB', 'bob'],
    ['a.B-1', 'A.b-1'],
  ]) {
    it(`add-agent refuses ${second} when ${first} is registered, naming both`, async () => {
      const mb = await makeMailbox([first!]);
      const { err } = await cli(['mailbox', 'add-agent', mb.dir, second!], 2);
      expect(err).toBe(
        `witness: The name ${second} differs only in case from the registered agent ${first}; names are unique regardless of case (they are file names). Pick another name.\n`,
      );
      expect(readAgents(mb.dir).map((a) => a.name)).toEqual([first]);
    });
  }

  it('an agents.json that already holds alice and Alice is refused when serving, with the fix', async () => {
    const mb = await makeMailbox(['alice', 'bob']);
    const file = JSON.parse(readFileSync(agentsFile(mb.dir), 'utf8')) as { agents: Array<{ name: string }> };
    file.agents.push({ ...file.agents[0]!, name: 'Alice' });
    writeFileSync(agentsFile(mb.dir), JSON.stringify(file));
    await expect((await createRuntime({ dir: mb.dir })).store.agents()).rejects.toThrow(
      `${agentsFile(mb.dir)} registers both alice and Alice; agent names must differ regardless of case (they are file names). Remove or rename one.`,
    );
    expect((await cli(['mailbox', 'add-agent', mb.dir, 'carol'], 2)).err).toMatch(/registers both alice and Alice/);
  });

  it('an agents.json entry whose name is not a valid agent name is refused', async () => {
    const mb = await makeMailbox(['alice']);
    const file = JSON.parse(readFileSync(agentsFile(mb.dir), 'utf8')) as { agents: Array<{ name: string }> };
    file.agents.push({ ...file.agents[0]!, name: '../../etc/x' });
    writeFileSync(agentsFile(mb.dir), JSON.stringify(file));
    expect(() => readAgents(mb.dir)).toThrow(/agents\.json: entry 2 .*path separator/);
  });

  it('an agents.json with a repeated key is refused rather than read one way', async () => {
    const mb = await makeMailbox(['alice']);
    const text = readFileSync(agentsFile(mb.dir), 'utf8').replace(
      '"name": "alice"',
      '"name": "alice", "name": "mallory"',
    );
    writeFileSync(agentsFile(mb.dir), text);
    expect(() => readAgents(mb.dir)).toThrow(/duplicate key "name"/);
  });
});
