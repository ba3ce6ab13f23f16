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
  it.skipIf(!CODEX)('probes each installed runtime, one row each, and skips the ones that are not installed', async () => {
    const model = await startToolModel(mailboxModel('mcp'));
    try {
      const report = await runAll({ runtimes: ['codex', 'openhands'], serverCommand: await witnessBundle(), modelEndpoint: model.url, model: 'scripted', timeoutMs: RUNTIME_TIMEOUT_S * 1000, checks: ['send'] });
      expect(report.rows).toEqual([{ runtime: 'codex', version: '0.169.0', verdicts: { send: 'pass' }, shadowing: [], seconds: expect.any(Number), ok: true }]);
      expect(report.skipped).toEqual([{ runtime: 'openhands', reason: 'no executable "openhands" on PATH or in .tools' }]);
      expect(report.ok).toBe(true);
      const table = renderAll(report);
      expect(table).toMatch(/^ {2}runtime +version +send +receive +control +shadowing built-ins +seconds$/m);
      expect(table).toMatch(/^ {2}codex +0\.169\.0 +pass +— +— +none +\d+\.\d$/m);
      expect(table).toMatch(/skipped openhands: no executable/);
    } finally {
      await model.close();
    }
  }, PROBE_TEST_MS);

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
