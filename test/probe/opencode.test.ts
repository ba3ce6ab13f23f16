/**
 * End to end with the real OpenCode CLI and a scripted OpenAI-compatible model that
 * calls the mailbox's MCP tools (OpenCode names them `<server>_<tool>`). Each check
 * is its own probe so every test stays under a minute on a loaded machine.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { mailboxModel } from '../support/mailbox-model.js';
import { binOrWarn, PROBE_TEST_MS, probeWith, RUNTIME_TIMEOUT_S, verdicts } from './runtime-helpers.js';

const OPENCODE = binOrWarn('opencode');

describe.skipIf(!OPENCODE)('witness probe opencode', () => {
  afterEach(() => {
    delete process.env.OPENCODE_DISABLE_PROJECT_CONFIG;
  });

  for (const check of ['send', 'receive', 'control'] as const) {
    it(
      `passes the ${check} check when the model calls the mailbox through MCP`,
      async () => {
        const { code, report } = await probeWith('opencode', OPENCODE!, mailboxModel('mcp'), ['--check', check]);
        expect(verdicts(report)).toEqual({ [check]: 'pass' });
        expect(report.preflight.connection.status).toBe('connected');
        expect(report.preflight.shadowing).toMatchObject({ source: 'runtime', clashes: [] });
        expect(report.preflight.shadowing.builtins).toContain('bash');
        expect(code).toBe(0);
      },
      PROBE_TEST_MS,
    );
  }

  it(
    'is undecided when OpenCode does not pick up the project config',
    async () => {
      process.env.OPENCODE_DISABLE_PROJECT_CONFIG = '1'; // a real OpenCode switch: project opencode.json is ignored
      const { code, report, ms } = await probeWith('opencode', OPENCODE!, mailboxModel('mcp'), ['--check', 'send']);
      expect(report.preflight.connection.status).toBe('not-listed');
      expect(report.checks[0]!.verdict).toBe('undecided');
      expect(report.checks[0]!.reason).toMatch(/did not pick up the config/);
      expect(code).toBe(1);
      expect(ms).toBeLessThan(RUNTIME_TIMEOUT_S * 1000); // decided before the runtime's deadline, not by it
    },
    PROBE_TEST_MS,
  );
});
