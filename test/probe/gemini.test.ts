/**
 * End to end with the real Gemini CLI and the scripted model speaking the Gemini
 * API: a model that uses the mailbox's MCP tools (`mcp_witness-mailbox_<tool>`)
 * passes every check; a model that says "sent" without calling any tool fails the
 * send check on the records.
 */
import { describe, expect, it } from 'vitest';
import { mailboxModel } from '../support/mailbox-model.js';
import { binOrWarn, PROBE_TEST_MS, probeWith, verdicts } from './runtime-helpers.js';

const GEMINI = binOrWarn('gemini');

describe.skipIf(!GEMINI)('witness probe gemini', () => {
  it('passes every check when the model calls the mailbox through MCP, with the tools Gemini CLI declared as its inventory', async () => {
    const { code, report, model } = await probeWith('gemini', GEMINI!, mailboxModel('mcp'));
    console.log(JSON.stringify(report, null, 1).slice(0, 6000));
    console.log(JSON.stringify(model.raw.map((r) => [r.path, r.body.tools?.flatMap((t: { functionDeclarations?: Array<{ name: string }> }) => (t.functionDeclarations ?? []).map((d) => d.name))])).slice(0, 3000));
    expect(verdicts(report)).toEqual({ send: 'pass', receive: 'pass', control: 'pass' });
    expect(code).toBe(0);
  }, PROBE_TEST_MS * 2);
});
