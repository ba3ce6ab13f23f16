/**
 * Signed results in process: the writer, resume, merge and `verifyResults`, with real
 * Ed25519 keys and a real key directory. The CLI end to end (SIGKILL, shards) is in
 * signed-results-cli.test.ts; properties over random tamperings are in
 * transcript-property.test.ts.
 */
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { addKey, emptyDirectory, KeyDirectory, revokeKey } from '../../src/attest/key-directory.js';
import { newSigningKey, publicJwk, type SigningKey } from '../../src/attest/keys.js';
import { mergeResults } from '../../src/sim/experiment/merge.js';
import { preset } from '../../src/sim/experiment/presets.js';
import { runExperiment } from '../../src/sim/experiment/run.js';
import { type Experiment, parseExperiment } from '../../src/sim/experiment/schema.js';
import { merkleRoot } from '../../src/core/tlog/merkle.js';
import { ed25519Signer } from '../../src/attest/signature.js';
import { canonicalizeWithout } from '../../src/core/canonical-json.js';
import { signCheckpoint } from '../../src/sim/transcript/checkpoint.js';
import { checkpointPath, receiptDigest } from '../../src/sim/transcript/format.js';
import { verifyResults } from '../../src/sim/transcript/verify.js';

const tempDir = () => mkdtempSync(join(tmpdir(), 'witness-transcript-'));
const smoke = (overrides: Partial<Experiment> = {}) => parseExperiment({ ...preset('smoke'), runs: 5, ...overrides });
const lab = newSigningKey('lab');

function trusting(...keys: SigningKey[]): KeyDirectory {
  let file = emptyDirectory();
  for (const key of keys)
    file = addKey(file, publicJwk(key), { notBefore: Date.now() - 60_000, notAfter: Date.now() + 86_400_000 });
  return new KeyDirectory(file);
}

async function signed(
  options: { key?: SigningKey; lineSignatures?: boolean; experiment?: Experiment; out?: string } = {},
): Promise<string> {
  const out = options.out ?? join(tempDir(), 'r.jsonl');
  await runExperiment({
    experiment: options.experiment ?? smoke(),
    out,
    sign: { key: options.key ?? lab, lineSignatures: options.lineSignatures },
  });
  return out;
}

const lines = (path: string) => readFileSync(path, 'utf8').split('\n').filter(Boolean);
const codes = (path: string, directory = trusting(lab)) =>
  verifyResults(path, { directory }).problems.map((p) => `${p.line ?? '-'}:${p.code}`);

describe('a signed sweep', () => {
  it('verifies clean against a directory that trusts its key', async () => {
    const result = verifyResults(await signed(), { directory: trusting(lab) });
    expect(result).toMatchObject({
      ok: true,
      experiment: 'smoke',
      lines: 20,
      planned: 20,
      runs: 20,
      signatures: 1,
      problems: [],
    });
  });
  it('writes, once the receipts are removed, exactly the unsigned file', async () => {
    const dir = tempDir();
    await runExperiment({ experiment: smoke(), out: join(dir, 'plain.jsonl') });
    const out = await signed({ out: join(dir, 'signed.jsonl') });
    expect(readFileSync(out, 'utf8').replace(/,"receipt":\{[^{}]*\}\}$/gm, '}')).toBe(
      readFileSync(join(dir, 'plain.jsonl'), 'utf8'),
    );
  });
  it('is not valid for a directory that does not trust its key', async () => {
    expect(codes(await signed(), trusting(newSigningKey('lab')))).toContain('-:UNKNOWN_KEY');
  });
  it('is not valid once its key was revoked before the checkpoint was signed', async () => {
    const out = await signed();
    const directory = new KeyDirectory(
      revokeKey(
        addKey(emptyDirectory(), publicJwk(lab), { notBefore: Date.now() - 60_000, notAfter: Date.now() + 86_400_000 }),
        lab.kid,
        Date.now() - 1000,
      ),
    );
    expect(codes(out, directory)).toContain('-:REVOKED_KEY');
  });
  it('reports a checkpoint changed after it was signed as BAD_SIGNATURE', async () => {
    const out = await signed();
    const cp = JSON.parse(readFileSync(checkpointPath(out), 'utf8'));
    cp.checkpoints[0].count -= 1;
    writeFileSync(checkpointPath(out), JSON.stringify(cp));
    expect(codes(out)).toContain('-:BAD_SIGNATURE');
  });
  it("signs the RFC 6962 root of the chain's lines, each leaf the line's receipt digest", async () => {
    const out = await signed();
    const leaves = lines(out).map((l) =>
      Buffer.from(
        receiptDigest(
          canonicalizeWithout((JSON.parse(l) as { receipt: Record<string, unknown> }).receipt, 'sig').without,
        ),
        'hex',
      ),
    );
    const cp = JSON.parse(readFileSync(checkpointPath(out), 'utf8')).checkpoints[0];
    expect(cp).toMatchObject({ count: 20, root: merkleRoot(leaves).toString('hex') });
  });
  it('reports a signed root that is not the tree of the lines as CHECKPOINT_MISMATCH', async () => {
    const out = await signed();
    const { checkpoints } = JSON.parse(readFileSync(checkpointPath(out), 'utf8'));
    // Without its note, which names the true root (a note that disagrees is checked below).
    const { sig: _sig, note: _note, ...unsigned } = checkpoints[0];
    const wrong = signCheckpoint(
      { ...unsigned, root: merkleRoot([]).toString('hex') },
      ed25519Signer(lab, 'sign the test checkpoint'),
    );
    writeFileSync(checkpointPath(out), JSON.stringify({ v: 1, type: 'witness/sim-checkpoints', checkpoints: [wrong] }));
    expect(codes(out)).toEqual(['20:CHECKPOINT_MISMATCH']);
    await expect(signed({ out })).rejects.toThrow(
      /line 20: the Merkle root of the first 20 lines is not the one its checkpoint signed/,
    );
  });
  it('reports a tree-head note of another chain as BAD_SIGNATURE: it is not signed under this chain origin', async () => {
    const out = await signed();
    const { checkpoints } = JSON.parse(readFileSync(checkpointPath(out), 'utf8'));
    const { sig: _sig, ...unsigned } = checkpoints[0];
    const early = JSON.parse(readFileSync(checkpointPath(await signed({ experiment: smoke({ runs: 3 }) })), 'utf8'))
      .checkpoints[0].note;
    const wrong = signCheckpoint({ ...unsigned, note: early }, ed25519Signer(lab, 'sign the test checkpoint'));
    writeFileSync(checkpointPath(out), JSON.stringify({ v: 1, type: 'witness/sim-checkpoints', checkpoints: [wrong] }));
    expect(codes(out)).toEqual(['-:BAD_SIGNATURE']);
  });
  it('reports a checkpoint with a repeated key as NON_CANONICAL', async () => {
    const out = await signed();
    writeFileSync(checkpointPath(out), readFileSync(checkpointPath(out), 'utf8').replace('"v": 1,', '"v": 1, "v": 1,'));
    expect(codes(out)).toEqual(['-:NON_CANONICAL']);
  });
  it('says an unsigned results file has no checkpoint and unsigned lines', async () => {
    const out = join(tempDir(), 'plain.jsonl');
    await runExperiment({ experiment: smoke(), out });
    expect(codes(out).slice(0, 2)).toEqual(['1:UNSIGNED_LINE', '2:UNSIGNED_LINE']);
    expect(codes(out)).toContain('-:CHECKPOINT_MISSING');
  });
});

describe('resuming a signed file', () => {
  /** A signed sweep stopped after `k` runs, as Ctrl-C stops one (its last checkpoint written on close). */
  async function stoppedAfter(k: number, out: string): Promise<void> {
    const controller = new AbortController();
    await runExperiment({
      experiment: smoke(),
      out,
      signal: controller.signal,
      sign: { key: lab },
      onRecord: () => void (lines(out).length >= k - 1 && controller.abort()),
    });
  }
  it('writes the same bytes when stopped and resumed as when run through', async () => {
    const dir = tempDir();
    const through = await signed({ out: join(dir, 'through.jsonl') });
    await stoppedAfter(7, join(dir, 'resumed.jsonl'));
    expect(lines(join(dir, 'resumed.jsonl')).length).toBeLessThan(20);
    await signed({ out: join(dir, 'resumed.jsonl') });
    expect(readFileSync(join(dir, 'resumed.jsonl'), 'utf8')).toBe(readFileSync(through, 'utf8'));
    expect(codes(join(dir, 'resumed.jsonl'))).toEqual([]);
  });
  it('given an older copy of its own checkpoint file with --checkpoint, says so instead of asking for a resume', async () => {
    const dir = tempDir();
    const out = join(dir, 'r.jsonl');
    await stoppedAfter(7, out);
    const older = join(dir, 'older.checkpoint.json');
    writeFileSync(older, readFileSync(checkpointPath(out)));
    await signed({ out });
    expect(codes(out)).toEqual([]);
    const notCovered = verifyResults(out, { directory: trusting(lab), checkpoints: older }).problems.filter(
      (p) => p.code === 'NOT_COVERED',
    );
    expect(notCovered.map((p) => p.message)).toEqual([
      expect.stringMatching(
        /the checkpoint file given \(.*older\.checkpoint\.json\) does not sign them: if it is an older copy/,
      ),
    ]);
  });
  it('re-derives, on resume, lines a killed sweep wrote after its last checkpoint, and signs them once they come out the same', async () => {
    const dir = tempDir();
    const out = join(dir, 'r.jsonl');
    await stoppedAfter(7, out);
    const signedLines = lines(out).length;
    // The lines a killed process wrote before its next checkpoint: the rest of the same sweep's lines.
    const through = lines(await signed({ out: join(dir, 'through.jsonl') }));
    writeFileSync(out, `${through.join('\n')}\n`);
    expect(codes(out)).toEqual([`${signedLines + 1}:NOT_COVERED`]);
    const resumed = await runExperiment({ experiment: smoke(), out, sign: { key: lab } });
    const past = through.length - signedLines;
    expect(resumed).toMatchObject({
      ran: past,
      pastCheckpoint: { lines: past, firstLine: signedLines + 1, kept: past, forged: 0, rerun: 0, pending: 0 },
    });
    expect(lines(out)).toEqual(through);
    expect(codes(out)).toEqual([]);
  });
  it('refuses another key, naming the one that signed the file', async () => {
    const out = await signed();
    await expect(signed({ out, key: newSigningKey('lab') })).rejects.toThrow(`was signed for key ${lab.kid}`);
  });
  it('refuses another experiment', async () => {
    const out = await signed();
    await expect(signed({ out, experiment: smoke({ seed: 2 }) })).rejects.toThrow(/another experiment/);
  });
  it('refuses to sign over a line changed after it was written', async () => {
    const out = await signed({ experiment: smoke({ runs: 3 }) });
    const changed = lines(out);
    changed[4] = (changed[4] as string).replace(/"rounds":(\d+)/, (_, r) => `"rounds":${Number(r) + 1}`);
    writeFileSync(out, `${changed.join('\n')}\n`);
    await expect(signed({ out, experiment: smoke({ runs: 3 }) })).rejects.toThrow(/line 5: CONTENT_MISMATCH/);
  });
  it('refuses a file that holds unsigned results', async () => {
    const out = join(tempDir(), 'plain.jsonl');
    await runExperiment({ experiment: smoke(), out });
    await expect(signed({ out })).rejects.toThrow(/has no checkpoint/);
  });
  it('an unsigned sweep refuses to append to a signed file', async () => {
    const out = await signed();
    await expect(runExperiment({ experiment: smoke(), out })).rejects.toThrow(/is a signed results file/);
  });
});

describe('--sign-lines', () => {
  it('signs every line on its own, and verify checks each signature', async () => {
    const out = await signed({ lineSignatures: true });
    expect(lines(out).every((l) => /"sig":"[A-Za-z0-9_-]{86}","signed_at":"/.test(l))).toBe(true);
    expect(verifyResults(out, { directory: trusting(lab) })).toMatchObject({ ok: true, signatures: 21 });
  });
  it('reports a line whose signature was changed as BAD_SIGNATURE at that line', async () => {
    const out = await signed({ lineSignatures: true });
    const changed = lines(out);
    changed[2] = (changed[2] as string).replace(/"sig":"(.)/, (_, c) => `"sig":"${c === 'A' ? 'B' : 'A'}`);
    writeFileSync(out, `${changed.join('\n')}\n`);
    expect(codes(out)).toContain('3:BAD_SIGNATURE');
  });
  it('keeps, on resume, signed lines past the last checkpoint: each carries its own signature, which the resume checks', async () => {
    const out = join(tempDir(), 'r.jsonl');
    const controller = new AbortController();
    await runExperiment({
      experiment: smoke(),
      out,
      signal: controller.signal,
      sign: { key: lab, lineSignatures: true },
      onRecord: () => void (lines(out).length >= 6 && controller.abort()),
    });
    const early = readFileSync(checkpointPath(out));
    await signed({ out, lineSignatures: true });
    const through = lines(out);
    // The checkpoint of the stopped session: what a sweep killed after writing the rest leaves.
    writeFileSync(checkpointPath(out), early);
    expect(codes(out)[0]).toMatch(/:NOT_COVERED$/);
    const resumed = await runExperiment({ experiment: smoke(), out, sign: { key: lab, lineSignatures: true } });
    expect(resumed).toMatchObject({ ran: 0, skipped: 20 });
    expect(resumed.pastCheckpoint).toBeUndefined();
    expect(lines(out)).toEqual(through);
    expect(codes(out)).toEqual([]);
  });
  it('reports a line without its signature as SIGNATURE_MISSING when the checkpoint says lines are signed', async () => {
    const plain = await signed();
    const out = await signed({ lineSignatures: true });
    const mixed = lines(out);
    mixed[2] = lines(plain)[2] as string;
    writeFileSync(out, `${mixed.join('\n')}\n`);
    expect(codes(out)).toContain('3:SIGNATURE_MISSING');
  });
});

describe('merging signed shards', () => {
  it('keeps each shard chain and checkpoint, and the merged file verifies clean', async () => {
    const dir = tempDir();
    const parts = [1, 2, 3].map((i) => join(dir, `p${i}.jsonl`));
    for (const [i, out] of parts.entries())
      await runExperiment({ experiment: smoke(), out, shard: { index: i + 1, count: 3 }, sign: { key: lab } });
    const report = mergeResults(parts, join(dir, 'all.jsonl'));
    expect(report).toMatchObject({ lines: 20, signed: true });
    expect(verifyResults(join(dir, 'all.jsonl'), { directory: trusting(lab) })).toMatchObject({
      ok: true,
      runs: 20,
      shards: { count: 3, present: [1, 2, 3] },
    });
  });
  it('a merge of some shards is not the sweep: SHARD_MISSING names the others; with allowPartial it verifies as those shards', async () => {
    const dir = tempDir();
    const parts = [1, 3].map((i) => join(dir, `p${i}.jsonl`));
    for (const [k, out] of parts.entries())
      await runExperiment({
        experiment: smoke(),
        out,
        shard: { index: [1, 3][k] as number, count: 3 },
        sign: { key: lab },
      });
    mergeResults(parts, join(dir, 'some.jsonl'));
    const strict = verifyResults(join(dir, 'some.jsonl'), { directory: trusting(lab) });
    expect(strict).toMatchObject({ ok: false, partial: false, shards: { count: 3, present: [1, 3], missing: [2] } });
    expect(strict.problems).toEqual([
      {
        code: 'SHARD_MISSING',
        message: expect.stringMatching(/^shard 2 of 3 is not in this file, which holds shards 1, 3 of 3/),
      },
    ]);
    expect(verifyResults(join(dir, 'some.jsonl'), { directory: trusting(lab), allowPartial: true })).toMatchObject({
      ok: true,
      partial: true,
      problems: [],
    });
  });
  it('refuses to merge signed and unsigned files', async () => {
    const dir = tempDir();
    const a = await signed({ out: join(dir, 'a.jsonl') });
    await runExperiment({ experiment: smoke(), out: join(dir, 'b.jsonl') });
    expect(() => mergeResults([a, join(dir, 'b.jsonl')], join(dir, 'm.jsonl'))).toThrow(/is signed .* and .* is not/);
    expect(existsSync(join(dir, 'm.jsonl'))).toBe(false);
  });
  it('refuses a shard with lines no checkpoint signed yet (killed, not resumed)', async () => {
    const dir = tempDir();
    const a = await signed({ out: join(dir, 'a.jsonl') });
    const cp = JSON.parse(readFileSync(checkpointPath(a), 'utf8'));
    const short = await signed({ out: join(dir, 'short.jsonl'), experiment: smoke() });
    writeFileSync(checkpointPath(short), JSON.stringify({ ...cp, checkpoints: [{ ...cp.checkpoints[0], count: 3 }] }));
    expect(() => mergeResults([short], join(dir, 'm.jsonl'))).toThrow(/killed before it signed its last lines/);
  });
});
