/**
 * The runtimes' own tool lists, asked of the real binaries with no model answering
 * (Qwen Code's stream-json init event, `opencode debug agent build`), compared by
 * normalised name with the mailbox's tools; and witness's table of known built-ins,
 * the fallback where a runtime cannot be asked, checked against those real lists.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { adapterFor, type ProbeContext } from '../../src/probe/index.js';
import { servedTools, takeInventory } from '../../src/probe/inventory.js';
import { compareVersions, knownBuiltins } from '../../src/probe/known-builtins.js';
import { findClashes } from '../../src/probe/shadowing.js';
import { createWorkspace } from '../../src/probe/workspace.js';
import { witnessBundle } from '../support/witness-bundle.js';
import { binOrWarn } from './runtime-helpers.js';

const QWEN = binOrWarn('qwen');
const OPENCODE = binOrWarn('opencode');
const LIST_MS = 150_000;

let ctx: ProbeContext | undefined;
afterEach(() => ctx?.ws.remove());

async function installed(runtime: string, bin: string, toolPrefix: string): Promise<ProbeContext> {
  ctx = {
    ws: await createWorkspace(await witnessBundle()),
    serverName: 'witness-mailbox',
    toolPrefix,
    timeoutMs: 120_000,
    bin,
  };
  adapterFor(runtime).install(ctx);
  return ctx;
}

describe.skipIf(!QWEN)('Qwen Code lists its own tools', () => {
  it(
    'names its built-in send_message and list_agents, and the mailbox tools as mcp__witness-mailbox__…, with no model answering',
    async () => {
      const c = await installed('qwen', QWEN!, '');
      const listing = await adapterFor('qwen').listTools!(c);
      expect(listing.builtins).toEqual(
        expect.arrayContaining(['send_message', 'list_agents', 'read_file', 'run_shell_command']),
      );
      expect(listing.builtins.some((t) => t.startsWith('mcp__'))).toBe(false);
      expect(listing.mailbox).toEqual(expect.arrayContaining(servedTools('').map((t) => `mcp__witness-mailbox__${t}`)));
      expect(listing.how).toMatch(/stream-json init event \(Qwen Code 0\.24\.4/);
      expect(findClashes(listing.builtins, servedTools(''), c).map((x) => [x.tool, x.shadows, x.same_name])).toEqual([
        ['list_agents', 'list_agents', true],
        ['send_message', 'send_message', true],
      ]);
    },
    LIST_MS,
  );

  it(
    'is what the preflight reports with --tool-prefix mailbox_: the same built-ins, now shadowing in another spelling',
    async () => {
      const c = await installed('qwen', QWEN!, 'mailbox_');
      const shadowing = await takeInventory(adapterFor('qwen'), c, { found: true, version: '0.24.4' }, true);
      expect(shadowing.source).toBe('runtime');
      expect(shadowing.mailbox_tools).toContain('mcp__witness-mailbox__mailbox_send_message');
      expect(shadowing.clashes).toEqual([
        { tool: 'list_agents', shadows: 'mailbox_list_agents', action: 'list-agents', same_name: false },
        { tool: 'send_message', shadows: 'mailbox_send_message', action: 'send', same_name: false },
      ]);
    },
    LIST_MS,
  );

  it(
    'has a known-built-ins row for its version that finds the same clashes as its own list',
    async () => {
      const c = await installed('qwen', QWEN!, '');
      const listing = await adapterFor('qwen').listTools!(c);
      const known = knownBuiltins('qwen', '0.24.4')!;
      expect(known.exact).toBe(true);
      expect(findClashes(known.row.tools, servedTools(''), c)).toEqual(
        findClashes(listing.builtins, servedTools(''), c),
      );
    },
    LIST_MS,
  );
});

describe.skipIf(!OPENCODE)('OpenCode lists its own tools', () => {
  it(
    'names its built-in tools with opencode debug agent build, none of which shadows a mailbox tool',
    async () => {
      const c = await installed('opencode', OPENCODE!, '');
      const listing = await adapterFor('opencode').listTools!(c);
      expect(listing.builtins).toEqual(expect.arrayContaining(['bash', 'read', 'edit', 'write', 'task']));
      expect(listing.mailbox).toBeUndefined();
      expect(findClashes(listing.builtins, servedTools(''), c)).toEqual([]);
      // The table's row for 1.18.33 is this list: it must not drift from the runtime it describes.
      expect([...knownBuiltins('opencode', '1.18.33')!.row.tools].sort()).toEqual([...listing.builtins].sort());
    },
    LIST_MS,
  );
});

describe('known built-ins, the fallback', () => {
  it('picks the latest row at or below the version, and the newest row when the version is unknown or older', () => {
    expect(knownBuiltins('qwen', '0.21.13')).toMatchObject({ row: { since: '0.21.0' }, exact: true });
    expect(knownBuiltins('qwen', '0.24.10')).toMatchObject({ row: { since: '0.24.4' }, exact: true });
    expect(knownBuiltins('qwen', '0.20.0')).toMatchObject({ row: { since: '0.24.4' }, exact: false });
    expect(knownBuiltins('qwen')).toMatchObject({ row: { since: '0.24.4' }, exact: false });
    expect(knownBuiltins('command')).toBeUndefined();
    expect(compareVersions('0.24.4', '0.24.10')).toBeLessThan(0);
  });

  it("is used, and named as the source, for a runtime that is not installed: Claude Code's SendMessage and ListAgents", async () => {
    ctx = {
      ws: await createWorkspace(await witnessBundle()),
      serverName: 'witness-mailbox',
      toolPrefix: '',
      timeoutMs: 10_000,
    };
    const shadowing = await takeInventory(adapterFor('claude'), ctx, { found: false, reason: 'not installed' }, false);
    expect(shadowing.source).toBe('known');
    expect(shadowing.detail).toMatch(
      /not found, so it could not be asked; known built-ins of Claude Code ≥ 2\.1\.328, the newest known \(version unknown\), from the tool list Claude Code 2\.1\.328 printed itself/,
    );
    expect(shadowing.clashes.map((c) => `${c.tool}≈${c.shadows}`)).toEqual([
      'ListAgents≈list_agents',
      'SendMessage≈send_message',
    ]);
  });

  it('says shadowing was not checked where neither the runtime nor the table knows the tools', async () => {
    ctx = {
      ws: await createWorkspace(await witnessBundle()),
      serverName: 'witness-mailbox',
      toolPrefix: '',
      timeoutMs: 10_000,
      template: 'echo {prompt}',
    };
    const shadowing = await takeInventory(adapterFor('command'), ctx, { found: true }, true);
    expect(shadowing).toMatchObject({ source: 'none', builtins: [], clashes: [] });
    expect(shadowing.detail).toMatch(/no way to list its tools.*shadowing was not checked/);
  });
});
