/**
 * Push that reaches the model, with the real runtimes: the probe's push step over
 * each path the runtime offers, "delivered" judged from the mailbox server's records
 * (session log, signed channel_push) and "seen" from the scripted model's request
 * records, reported apart; the protocol version negotiated comes from the session log.
 * What each runtime really does is whatever these records say: the assertions pin the
 * shape of the answer and its consistency with the records, and print the outcome.
 */
import { describe, expect, it } from 'vitest';
import { type ProbeReport, runProbe } from '../../src/probe/index.js';
import { mailboxModel } from '../support/mailbox-model.js';
import type { RuntimeName } from '../support/runtimes.js';
import { startToolModel } from '../support/tool-model.js';
import { witnessBundle } from '../support/witness-bundle.js';
import { binOrWarn, PROBE_TEST_MS, RUNTIME_TIMEOUT_S } from './runtime-helpers.js';

async function probePush(
  runtime: RuntimeName,
  bin: string,
): Promise<{ report: ProbeReport; texts: Array<{ at: number; text: string }> }> {
  const model = await startToolModel(mailboxModel('mcp'));
  try {
    const records = () => model.raw.map((r) => ({ at: r.at, text: JSON.stringify(r.body) }));
    const report = await runProbe({
      runtime,
      bin,
      serverCommand: await witnessBundle(),
      modelEndpoint: model.url,
      model: 'scripted',
      timeoutMs: RUNTIME_TIMEOUT_S * 1000,
      checks: [],
      push: true,
      modelRecords: records,
    });
    return { report, texts: records() };
  } finally {
    await model.close();
  }
}

function checkConsistent(report: ProbeReport, texts: Array<{ at: number; text: string }>): void {
  for (const p of report.push ?? []) {
    console.log(
      `${report.runtime} ${report.version} push over ${p.path}: delivered ${p.delivered} (${p.delivered_reason}); seen ${p.seen} (${p.seen_reason}); agent calls ${p.agent_calls.join(',')}`,
    );
    if (p.delivered === 'n/a') continue;
    expect(p.agent_calls.length).toBeGreaterThan(0); // the message arrived mid-run
    expect(p.agent_calls).not.toContain('check_inbox');
    // "seen" must agree with the model's own records, both ways.
    const shown = texts.some((t) => t.text.includes(p.canary));
    expect(p.seen === 'yes').toBe(shown);
    if (p.seen === 'yes') expect(p.seen_ms).toBeGreaterThanOrEqual(0);
    if (p.delivered === 'yes') expect(p.delivered_ms).toBeGreaterThanOrEqual(0);
  }
}

const CLAUDE = binOrWarn('claude');
const CODEX = binOrWarn('codex');

describe.skipIf(!CLAUDE)('push with Claude Code', () => {
  it(
    'measures the inbox subscription and the channel, delivered and seen apart, and the negotiated protocol',
    async () => {
      const { report, texts } = await probePush('claude', CLAUDE!);
      expect(report.push?.map((p) => p.path)).toEqual(['resource', 'channel']);
      expect(report.protocol?.versions.length).toBeGreaterThan(0);
      expect(report.protocol?.clients.join(' ')).toMatch(/claude/i);
      checkConsistent(report, texts);
      expect(report.push?.every((p) => p.delivered !== 'n/a')).toBe(true);
    },
    PROBE_TEST_MS * 2,
  );
});

describe.skipIf(!CODEX)('push with Codex', () => {
  it(
    'measures the inbox subscription; the channel is n/a with the reason',
    async () => {
      const { report, texts } = await probePush('codex', CODEX!);
      expect(report.push?.map((p) => [p.path, p.delivered === 'n/a'])).toEqual([
        ['resource', false],
        ['channel', true],
      ]);
      expect(report.push?.[1]?.delivered_reason).toMatch(/Codex has no channels/);
      expect(report.protocol?.versions.length).toBeGreaterThan(0);
      checkConsistent(report, texts);
    },
    PROBE_TEST_MS * 2,
  );
});
