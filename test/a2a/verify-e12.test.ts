// `witness verify` on E12 results files, without running the experiment: files are
// built here from real keys and a really signed card, so each check can be reached.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildAgentCard, signAgentCard } from '../../src/a2a/card.js';
import { E12_KIND } from '../../src/a2a/e12.js';
import { trialBytes, verifyTrial } from '../../src/a2a/e12-verify.js';
import { writeDirectoryFile } from '../../src/attest/key-directory.js';
import { newSigningKey } from '../../src/attest/keys.js';
import { createReleaseSigner } from '../../src/attest/signer.js';
import { sha256Hex } from '../../src/core/hash.js';
import { trust } from './helpers.js';
import { runCli } from '../support/cli.js';

const dir = mkdtempSync(join(tmpdir(), 'witness-verify-e12-'));
const parent = newSigningKey('org-parent');
const child = newSigningKey('org-child');
const { file: keys } = trust([parent, child]);
writeDirectoryFile(join(dir, 'trusted.json'), keys);
writeFileSync(join(dir, 'answer.txt'), 'anything');
const card = signAgentCard(
  buildAgentCard({ baseUrl: 'http://127.0.0.1:4100', name: 'child', deployer: 'org-child' }),
  child,
);

/** An E12 results file as `witness a2a bench` writes it, with `trials` and `forgery` as given. */
function results(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    kind: E12_KIND,
    v: 1,
    created_at: new Date().toISOString(),
    config: { trials: 0, warmup: 0, agent: 'policy' },
    keys,
    card,
    trials: [],
    forgery: [],
    summary: [],
    ...extra,
  };
}

function write(name: string, text: string): string {
  writeFileSync(join(dir, name), text);
  return name;
}

const cli = (...argv: string[]) => runCli(argv, dir);

describe('witness verify never ignores an option given with an E12 results file', () => {
  it('refuses --output, --construction and --nonces (exit 2), naming each and why', async () => {
    const file = write('empty.json', JSON.stringify(results()));
    const r = await cli(
      'verify',
      file,
      '--output',
      'answer.txt',
      '--keys',
      'trusted.json',
      '--construction',
      'dag',
      '--nonces',
      'nonces.db',
    );
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/--output, --nonces and --construction do not apply to an E12 results file/);
    expect(r.err.trim().split('\n')).toHaveLength(1);
    expect(r.out).toBe('');
  });

  it('refuses --now and --skew: each trial is checked as of its recorded time', async () => {
    const file = write('empty-now.json', JSON.stringify(results()));
    const r = await cli('verify', file, '--now', '2030-01-01T00:00:00Z', '--skew', '5');
    expect([r.code, r.err]).toEqual([
      2,
      expect.stringMatching(/--skew and --now do not apply to an E12 results file.*recorded/),
    ]);
  });
});

describe('witness verify finds an E12 results file that proves nothing invalid', () => {
  it('an E12 file without trials: exit 1 with MALFORMED, never "valid … 0/0"', async () => {
    const file = write('no-trials.json', JSON.stringify(results()));
    const r = await cli('verify', file, '--keys', 'trusted.json');
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/^invalid: E12 results/);
    expect(r.out).toMatch(/MALFORMED\s+.*trial/);
    expect(r.out).not.toMatch(/0\/0 trials verified/);
  });

  it('an E12 file without the forgery entries: exit 1 with MALFORMED', async () => {
    const file = write('no-forgery.json', JSON.stringify(results({ forgery: [] })));
    const r = await cli('verify', file, '--json');
    expect(r.code).toBe(1);
    expect(JSON.parse(r.out).problems).toContainEqual({
      code: 'MALFORMED',
      message: expect.stringMatching(/forgery/),
      at: 'forgery',
    });
  });

  it('an E12 file with a duplicate key: exit 1 with NON_CANONICAL', async () => {
    const text = JSON.stringify(results()).replace('{"kind":', '{"v":1,"kind":');
    const r = await cli('verify', write('duplicate.json', text));
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/NON_CANONICAL\s+.*duplicate key "v"/);
  });
});

describe('witness verify routes by the parsed kind, not by the text', () => {
  it('reads an E12 file whose kind is written with a JSON escape as an E12 file', async () => {
    const text = JSON.stringify(results()).replace(`"${E12_KIND}"`, `"${E12_KIND.replace('/', '\\/')}"`);
    const r = await cli('verify', write('escaped.json', text));
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/^invalid: E12 results/);
  });

  it('verifies a receipt that merely mentions the E12 kind as a receipt', async () => {
    const receipt = await createReleaseSigner({ key: child, instance: E12_KIND }).releaseOutput(
      readFileSync(join(dir, 'answer.txt')),
    );
    const r = await cli(
      'verify',
      write('receipt.json', JSON.stringify(receipt)),
      '--output',
      'answer.txt',
      '--keys',
      'trusted.json',
    );
    expect([r.code, r.out]).toEqual([0, expect.stringMatching(/^valid: 8 bytes/)]);
  });
});

describe('an E12 file written when results were messages', () => {
  // Written by `witness a2a bench --trials 1 --warmup 0` at 9f23e60, before the child
  // answered with Tasks: each receipt covers the output text itself, and no trial has `artifact`.
  const fixture = join(import.meta.dirname, '..', 'fixtures', 'e12', 'message-era.json');

  it('still verifies: its receipts cover the output text', async () => {
    const r = await cli('verify', fixture);
    expect([r.code, r.out]).toEqual([0, expect.stringMatching(/^valid: E12 results, 3\/3 trials verified/)]);
  });

  it('is still refused when an output text is changed (EVIDENCE_INVALID, OUTPUT_MISMATCH)', async () => {
    const old = JSON.parse(readFileSync(fixture, 'utf8')) as {
      trials: Array<{ output_text: string; output_sha256: string }>;
    };
    const t = old.trials[0]!;
    t.output_text += '!';
    t.output_sha256 = sha256Hex(Buffer.from(t.output_text, 'utf8'));
    const r = await cli('verify', write('message-era-edited.json', JSON.stringify(old)));
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/EVIDENCE_INVALID .*OUTPUT_MISMATCH/);
  });
});

describe('an E12 file with the dag+stream condition', () => {
  // Written by `witness a2a bench --trials 1 --warmup 0` with this condition: one trial of each of four conditions.
  const fixture = join(import.meta.dirname, '..', 'fixtures', 'e12', 'stream-era.json');

  it('verifies, re-checking the streamed trial chunk by chunk', async () => {
    const r = await cli('verify', fixture);
    expect([r.code, r.out]).toEqual([
      0,
      expect.stringMatching(
        /^valid: E12 results, 4\/4 trials verified .*, 1 recorded streams re-checked chunk by chunk \(4 chunks\)\)/,
      ),
    ]);
  });

  it("is refused when a recorded reason is edited: the forgery's, or a valid trial's (*_NOT_REPRODUCED)", async () => {
    const forged = JSON.parse(readFileSync(fixture, 'utf8')) as {
      forgery: Array<{ construction: string; reasons: string[] }>;
    };
    const dag = forged.forgery.find((f) => f.construction === 'dag')!;
    expect(dag.reasons).toEqual(['COSIGNATURE_MISSING']);
    dag.reasons = ['BAD_SIGNATURE'];
    const r1 = await cli('verify', write('stream-era-forgery-reasons.json', JSON.stringify(forged)));
    expect(r1.code).toBe(1);
    expect(r1.out).toMatch(
      /FORGERY_NOT_REPRODUCED +\[forgery dag\] forgery under dag: recorded reasons BAD_SIGNATURE, re-verification gives COSIGNATURE_MISSING/,
    );
    const trial = JSON.parse(readFileSync(fixture, 'utf8')) as {
      trials: Array<{ verdict: { ok: boolean; reasons: Array<{ code: string; message: string }> } }>;
    };
    trial.trials[0]!.verdict.reasons = [{ code: 'OUTPUT_MISMATCH', message: 'x' }];
    const r2 = await cli('verify', write('stream-era-trial-reasons.json', JSON.stringify(trial)));
    expect(r2.code).toBe(1);
    expect(r2.out).toMatch(
      /VERDICT_NOT_REPRODUCED +\[trial 0\] .*recorded reasons OUTPUT_MISMATCH, re-verification gives none/,
    );
    // Removed instead of edited, they are not skipped: every era of the file records them.
    const bare = JSON.parse(readFileSync(fixture, 'utf8')) as { forgery: Array<{ reasons?: string[] }> };
    delete bare.forgery[1]!.reasons;
    const r3 = await cli('verify', write('stream-era-no-reasons.json', JSON.stringify(bare)));
    expect([r3.code, r3.out]).toEqual([1, expect.stringMatching(/MALFORMED +.*forgery\.1\.reasons/)]);
  });

  it("is refused when the streamed trial's chunks were moved (CHUNK_REORDERED)", async () => {
    const file = JSON.parse(readFileSync(fixture, 'utf8')) as { trials: Array<{ stream?: Array<{ type: string }> }> };
    const stream = file.trials.find((t) => t.stream)?.stream as Array<{ type: string }>;
    const [first, second] = stream.flatMap((l, i) => (l.type === 'chunk' ? [i] : [])) as [number, number];
    [stream[first], stream[second]] = [stream[second] as { type: string }, stream[first] as { type: string }];
    const r = await cli('verify', write('stream-era-moved.json', JSON.stringify(file)));
    expect(r.code).toBe(1);
    expect(r.out).toMatch(
      /EVIDENCE_INVALID +\[trial 3\] dag\+stream trial, task .*CHUNK_REORDERED \[stream of artifact \S+, chunk [01]\]/,
    );
  });
});

describe('an E12 file written before the dag+stream condition', () => {
  // Written by `witness a2a bench --trials 1 --warmup 0` at 0824343, when the child answered
  // with Tasks and E12 ran none, chain and dag only: no config.conditions, no trial streamed.
  const fixture = join(import.meta.dirname, '..', 'fixtures', 'e12', 'task-era.json');

  it('still verifies as the complete run of its three conditions', async () => {
    const r = await cli('verify', fixture);
    expect([r.code, r.out]).toEqual([
      0,
      expect.stringMatching(/^valid: E12 results, 3\/3 trials verified \([^)]*dag edges re-verified\), trusting/),
    ]);
  });

  it('is refused when a dag+stream trial is added to it: its config runs no such condition (MALFORMED)', async () => {
    const old = JSON.parse(readFileSync(fixture, 'utf8')) as { trials: Array<{ condition: string }> };
    old.trials.push({
      ...(old.trials.find((t) => t.condition === 'dag') as { condition: string }),
      condition: 'dag+stream',
    });
    const r = await cli('verify', write('task-era-added.json', JSON.stringify(old)));
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/MALFORMED +the file holds dag\+stream trials, but its config runs only none, chain, dag/);
  });
});

describe('each E12 trial is re-checked by the one check of an answer (verifyTrial)', () => {
  const artifact = { task_id: 't-1', context_id: 'c-1', artifact_id: 'a-1', parts: [{ text: 'Lot 7: ok.' }] };
  /** A none trial whose artifact `key`'s runtime released. */
  async function trial(key: typeof child) {
    const leaf = await createReleaseSigner({ key, instance: 'test' }).releaseOutput(
      trialBytes({ output_text: '', artifact }),
    );
    return {
      condition: 'none' as const,
      output_text: 'Lot 7: ok.',
      artifact,
      evidence: { path: [leaf] },
      verified_at: new Date().toISOString(),
    };
  }
  const directory = trust([parent, child]).directory;

  it("accepts a trial released by the child the file's card names", async () => {
    expect((await verifyTrial(await trial(child), 'org-child', { directory })).problems).toEqual([]);
  });

  it('refuses a trial released by another deployer, even one the keys trust (CHILD_MISMATCH)', async () => {
    const check = await verifyTrial(await trial(parent), 'org-child', { directory });
    expect(check.problems.map((p) => [p.code, p.at])).toEqual([['CHILD_MISMATCH', 'artifact 0 (a-1), receipt 0']]);
  });
});
