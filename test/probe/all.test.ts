/**
 * `witness probe --all`: every installed runtime in one table, the missing ones
 * skipped. Run on Codex alone (and OpenHands, never installed here) to stay short;
 * the scripted model answers each runtime in its own API.
 */
import { describe, expect, it } from 'vitest';
import { memoryIo } from '../../src/cli/io.js';
import { runMain } from '../../src/cli/main.js';
import { renderAll, runAll } from '../../src/probe/index.js';
import { mailboxModel } from '../support/mailbox-model.js';
import { startToolModel } from '../support/tool-model.js';
import { witnessBundle } from '../support/witness-bundle.js';
import { binOrWarn, PROBE_TEST_MS, RUNTIME_TIMEOUT_S } from './runtime-helpers.js';

const CODEX = binOrWarn('codex');

describe('witness probe --all', () => {
  it.skipIf(!CODEX)(
    'probes each installed runtime, one row each, and skips the ones that are not installed',
    async () => {
      const model = await startToolModel(mailboxModel('mcp'));
      try {
        const report = await runAll({
          runtimes: ['codex', 'openhands'],
          serverCommand: await witnessBundle(),
          modelEndpoint: model.url,
          model: 'scripted',
          timeoutMs: RUNTIME_TIMEOUT_S * 1000,
          checks: ['send'],
        });
        // The protocol version comes from the mailbox server's session log: what it answered Codex's initialize with.
        expect(report.rows).toEqual([
          {
            runtime: 'codex',
            version: '0.169.0',
            protocol: ['2025-06-18'],
            verdicts: { send: 'pass' },
            shadowing: [],
            seconds: expect.any(Number),
            ok: true,
          },
        ]);
        // OpenHands cannot be installed here (Python): said so, with the known built-ins marked as the fallback.
        expect(report.skipped).toEqual([
          {
            runtime: 'openhands',
            reason: expect.stringMatching(
              /^OpenHands CLI is a Python package .* cannot be installed into \.tools here$/,
            ),
            known_builtins: {
              tools: expect.arrayContaining(['terminal', 'delegate']),
              source: expect.stringMatching(/not checked against a running OpenHands CLI/),
              shadowing: [],
            },
          },
        ]);
        expect(report.ok).toBe(true);
        const table = renderAll(report);
        expect(table).toMatch(
          /^ {2}runtime +version +MCP protocol +send +receive +control +shadowing built-ins +seconds$/m,
        );
        expect(table).toMatch(/^ {2}codex +0\.169\.0 +2025-06-18 +pass +— +— +none +\d+\.\d$/m);
        expect(table).toMatch(
          /skipped openhands: OpenHands CLI is a Python package.*; known built-ins \(not asked of the runtime\): shadowing none/,
        );
      } finally {
        await model.close();
      }
    },
    PROBE_TEST_MS,
  );

  it('with push, the table gains a delivered/seen column per path, n/a where the runtime offers none', () => {
    const row = {
      runtime: 'claude',
      version: '2.1.328',
      protocol: ['2025-11-25'],
      verdicts: { send: 'pass' as const },
      shadowing: [],
      seconds: 1,
      ok: true,
    };
    const table = renderAll({
      format: 'witness-probe-all/1',
      started_at: '',
      ok: true,
      skipped: [],
      reports: [],
      rows: [
        { ...row, push: { resource: { delivered: 'no', seen: 'no' }, channel: { delivered: 'yes', seen: 'no' } } },
        {
          ...row,
          runtime: 'codex',
          push: { resource: { delivered: 'yes', seen: 'undecided' }, channel: { delivered: 'n/a', seen: 'n/a' } },
        },
      ],
    });
    expect(table).toMatch(
      /^ {2}runtime +version +MCP protocol +send +receive +control +shadowing built-ins +push resource +push channel +seconds$/m,
    );
    expect(table).toMatch(/^ {2}claude +2\.1\.328 +2025-11-25 +pass +— +— +none +no\/no +yes\/no +1\.0$/m);
    expect(table).toMatch(/^ {2}codex .* +yes\/undecided +n\/a +1\.0$/m);
    expect(table).toMatch(/delivered to the runtime \/ seen by the model/);
  });

  it('refuses a runtime together with --all, and neither', async () => {
    for (const [argv, message] of [
      [['probe', 'codex', '--all'], /a runtime or --all, not both/],
      [['probe'], /Name the runtime to probe .* or pass --all/],
    ] as const) {
      const io = memoryIo();
      expect(await runMain([...argv], io)).toBe(2);
      expect(io.err).toMatch(message);
    }
  });
});
