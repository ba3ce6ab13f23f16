/**
 * A signed resume refuses what it cannot vouch for even when every receipt links and
 * the checkpoint verifies — a file the key's own holder rewrote and re-chained: a run
 * of another plan, a run twice, two runs swapped, lines removed, a head the checkpoint
 * did not sign. The resume reads the plan lazily and the file as a stream;
 * these are the plan checks it must keep. Tampering by anyone else (an edited value, a
 * broken chain, another key) is in transcript.test.ts.
 */
import { copyFileSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isoTime } from '../../src/attest/receipt.js';
import { addKey, emptyDirectory, KeyDirectory } from '../../src/attest/key-directory.js';
import { newSigningKey, publicJwk } from '../../src/attest/keys.js';
import { ed25519Signer } from '../../src/attest/signature.js';
import { canonicalize, canonicalizeWithout } from '../../src/core/canonical-json.js';
import { leafHash, rootOfHashes } from '../../src/core/tlog/merkle.js';
import { sha256Hex } from '../../src/core/hash.js';
import { ENGINE } from '../../src/core/version.js';
import { preset } from '../../src/sim/experiment/presets.js';
import { runExperiment } from '../../src/sim/experiment/run.js';
import { type Experiment, parseExperiment } from '../../src/sim/experiment/schema.js';
import { signCheckpoint, writeCheckpoints } from '../../src/sim/transcript/checkpoint.js';
import {
  CHECKPOINT_TYPE,
  checkpointPath,
  ReceiptBuilder,
  receiptDigest,
  signedLine,
} from '../../src/sim/transcript/format.js';
import { chainOrigin, treeHeadSigner } from '../../src/sim/transcript/tree-head.js';
import { verifyResults } from '../../src/sim/transcript/verify.js';

const lab = newSigningKey('lab');
const smoke = (overrides: Partial<Experiment> = {}) => parseExperiment({ ...preset('smoke'), runs: 3, ...overrides });
const unsigned = (line: string) => line.replace(/,"receipt":\{[^{}]*\}\}$/, '}');

/** Unsigned lines of a sweep of `experiment`. */
async function plainLines(experiment: Experiment): Promise<string[]> {
  const out = join(mkdtempSync(join(tmpdir(), 'witness-resume-')), 'plain.jsonl');
  await runExperiment({ experiment, out });
  return readFileSync(out, 'utf8').split('\n').filter(Boolean);
}

/** Writes `lines` as a signed file of `experiment` by `lab`: receipts chained in this order, a checkpoint over the first `covered`. */
function rechained(lines: readonly string[], experiment: Experiment, covered = lines.length): string {
  const out = join(mkdtempSync(join(tmpdir(), 'witness-resume-')), 'signed.jsonl');
  const receipts = new ReceiptBuilder(ENGINE, lab.kid);
  let head: string | null = null;
  let signedHead: string | null = null;
  const signed = lines.map((content, i) => {
    const r = JSON.parse(content) as { id: string; seq: number; seed: number; cell: string };
    const signing = receipts.signingText({
      run: r.id,
      seq: r.seq,
      seed: r.seed,
      cellText: canonicalize(r.cell),
      contentSha256: sha256Hex(content),
      prompts: null,
      prev: head,
    });
    head = sha256Hex(signing);
    if (i === covered - 1) signedHead = head;
    return signedLine(content, ReceiptBuilder.receipt(signing));
  });
  writeFileSync(out, signed.map((l) => `${l}\n`).join(''));
  const base = {
    v: 1 as const,
    type: CHECKPOINT_TYPE as typeof CHECKPOINT_TYPE,
    experiment: experiment as unknown as Record<string, unknown>,
    shard: null,
    engine: ENGINE,
    prompts: null,
    cassette: null,
    line_signatures: false,
  };
  const checkpoint = {
    ...base,
    count: covered,
    head: signedHead,
    key_id: lab.kid,
    deployer: lab.deployer,
    signed_at: isoTime(Date.now()),
  };
  writeCheckpoints(checkpointPath(out), [signCheckpoint(checkpoint, ed25519Signer(lab, 'sign the test file'))]);
  return out;
}

/** Tree-head notes of a signed file's chain at `sizes`, signed by `lab` as a sweep signs them (leaf: each line's receipt digest). */
function treeHeads(file: string, experiment: Experiment, sizes: readonly number[]): string[] {
  const digests = readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) =>
      Buffer.from(
        receiptDigest(
          canonicalizeWithout((JSON.parse(l) as { receipt: Record<string, unknown> }).receipt, 'sig').without,
        ),
        'hex',
      ),
    );
  const sign = treeHeadSigner(lab, chainOrigin(experiment, null));
  return sizes.map((n) => sign(n, rootOfHashes(digests.slice(0, n).map((d) => leafHash(d))).toString('hex')));
}

const resume = (out: string, experiment: Experiment) => runExperiment({ experiment, out, sign: { key: lab } });

describe('a signed resume of a re-chained file', () => {
  it('continues a file of the sweep own lines, re-chained as the writer chains them', async () => {
    const e = smoke();
    const lines = await plainLines(e);
    const out = rechained(lines.slice(0, 5), e);
    const summary = await resume(out, e);
    expect(summary).toMatchObject({ skipped: 5, ran: lines.length - 5 });
    expect(readFileSync(out, 'utf8').split('\n').filter(Boolean).map(unsigned)).toEqual(lines);
  });
  it('refuses a run of another plan, naming its line', async () => {
    const e = smoke();
    const [mine, other] = [await plainLines(e), await plainLines(smoke({ seed: 2 }))];
    const out = rechained([...mine.slice(0, 3), other[3]!], e);
    await expect(resume(out, e)).rejects.toThrow(
      /line 4: run r-[0-9a-f]{16} \(seq 3, .*\) is not in the plan of experiment "smoke"/,
    );
  });
  it('refuses a run twice', async () => {
    const e = smoke();
    const lines = await plainLines(e);
    const out = rechained([...lines.slice(0, 4), lines[2]!], e);
    await expect(resume(out, e)).rejects.toThrow(/line 5: run r-[0-9a-f]{16} is a duplicate or out of plan order/);
  });
  it('refuses two runs swapped', async () => {
    const e = smoke();
    const lines = await plainLines(e);
    const out = rechained([lines[0]!, lines[2]!, lines[1]!], e);
    await expect(resume(out, e)).rejects.toThrow(/line 3: run r-[0-9a-f]{16} is a duplicate or out of plan order/);
  });
  it('refuses a file with fewer lines than its checkpoint signed', async () => {
    const e = smoke();
    const lines = await plainLines(e);
    const out = rechained(lines.slice(0, 6), e);
    writeFileSync(
      out,
      readFileSync(out, 'utf8')
        .split('\n')
        .slice(0, 4)
        .map((l) => `${l}\n`)
        .join(''),
    );
    await expect(resume(out, e)).rejects.toThrow(/has 4 lines, and its checkpoint signed 6: lines were removed/);
  });
  it('refuses a chain whose head at the signed count is not the signed head', async () => {
    const e = smoke();
    const lines = await plainLines(e);
    const out = rechained(lines.slice(0, 6), e, 4);
    const other = rechained([...lines.slice(0, 3), lines[4]!, lines[5]!], e);
    // The checkpoint signed lines 1–4; the file now holds a different line 4, re-chained.
    writeFileSync(checkpointPath(other), readFileSync(checkpointPath(out)));
    await expect(resume(other, e)).rejects.toThrow(
      /line 4: the chain's head here is not the one its checkpoint signed \(4 lines\)/,
    );
  });
});

/** `lines` with the outcome of line `n` (1-based) changed, as a forger would: the line stays in the writer's form. */
function withForgedOutcome(lines: readonly string[], n: number): string[] {
  const forged = [...lines];
  forged[n - 1] = (forged[n - 1] as string).replace(
    /"outcome":"(\w+)"/,
    (_, o) => `"outcome":"${o === 'valid' ? 'none' : 'valid'}"`,
  );
  expect(forged[n - 1]).not.toBe(lines[n - 1]);
  return forged;
}

describe('a signed resume of lines past the last checkpoint', () => {
  it('plays their runs again and keeps the lines that come out byte for byte the same', async () => {
    const e = smoke();
    const lines = await plainLines(e);
    const out = rechained(lines.slice(0, 7), e, 3);
    const summary = await resume(out, e);
    expect(summary).toMatchObject({
      skipped: 3,
      ran: lines.length - 3,
      pastCheckpoint: { lines: 4, firstLine: 4, kept: 4, forged: 0, rerun: 0, pending: 0 },
    });
    expect(readFileSync(out, 'utf8').split('\n').filter(Boolean).map(unsigned)).toEqual(lines);
  });
  it('never signs a forged line: the replay replaces it, and the report names it', async () => {
    const e = smoke();
    const lines = await plainLines(e);
    // Re-chained by the forger (no key needed): content digests and prev links all fit.
    const out = rechained(withForgedOutcome(lines, 5).slice(0, 7), e, 3);
    const summary = await resume(out, e);
    expect(summary.pastCheckpoint).toMatchObject({
      lines: 4,
      kept: 3,
      forged: 1,
      firstForged: { line: 5, run: (JSON.parse(lines[4]!) as { id: string }).id },
    });
    expect(readFileSync(out, 'utf8').split('\n').filter(Boolean).map(unsigned)).toEqual(lines);
  });
  it('reports nothing when the checkpoint covers every line', async () => {
    const e = smoke();
    const lines = await plainLines(e);
    const summary = await resume(rechained(lines.slice(0, 4), e), e);
    expect(summary.pastCheckpoint).toBeUndefined();
  });
});

describe('a kept tree head (the note a checkpoint carries) against a later file', () => {
  const directory = new KeyDirectory(
    addKey(emptyDirectory(), publicJwk(lab), { notBefore: Date.now() - 60_000, notAfter: Date.now() + 86_400_000 }),
  );
  /** A signed sweep of `e` stopped after `k` lines, its tree head kept; then its file copied aside and the sweep finished. */
  async function keptThenFinished(e: Experiment, k: number): Promise<{ out: string; kept: string; early: string }> {
    const dir = mkdtempSync(join(tmpdir(), 'witness-kept-'));
    const out = join(dir, 'r.jsonl');
    const controller = new AbortController();
    await runExperiment({
      experiment: e,
      out,
      signal: controller.signal,
      sign: { key: lab },
      onRecord: () => void (readFileSync(out, 'utf8').split('\n').length > k && controller.abort()),
    });
    const kept = join(dir, 'kept.txt');
    writeFileSync(
      kept,
      (JSON.parse(readFileSync(checkpointPath(out), 'utf8')) as { checkpoints: { note: string }[] }).checkpoints[0]!
        .note,
    );
    const early = join(dir, 'early.jsonl');
    copyFileSync(out, early);
    copyFileSync(checkpointPath(out), checkpointPath(early));
    await resume(out, e);
    return { out, kept, early };
  }
  const codes = (out: string, keptHeads: string) =>
    verifyResults(out, { directory, keptHeads }).problems.map((p) => p.code);
  // A stopped sweep's file lacks its later runs (RUN_MISSING) whatever is kept: these are the codes a kept head adds.
  const logCodes = (out: string, keptHeads: string) => codes(out, keptHeads).filter((c) => c !== 'RUN_MISSING');

  it('accepts the file it was kept from, and an append-only extension of it', async () => {
    const { out, kept, early } = await keptThenFinished(smoke(), 5);
    expect(logCodes(early, kept)).toEqual([]);
    expect(codes(out, kept)).toEqual([]);
  });
  it('reports a file rolled back to an older state, with its older checkpoint, as TRUNCATED: its own checkpoint cannot tell lines cut from lines never run', async () => {
    const { out, early } = await keptThenFinished(smoke(), 5);
    const later = join(mkdtempSync(join(tmpdir(), 'witness-kept-')), 'later.txt');
    writeFileSync(
      later,
      (JSON.parse(readFileSync(checkpointPath(out), 'utf8')) as { checkpoints: { note: string }[] }).checkpoints[0]!
        .note,
    );
    expect(verifyResults(early, { directory }).problems.filter((p) => p.code !== 'RUN_MISSING')).toEqual([]);
    expect(logCodes(early, later)).toEqual(['TRUNCATED']);
  });
  it('reports a chain rewritten under it (re-chained and re-signed by the key holder) as INCONSISTENT', async () => {
    const e = smoke();
    const { kept } = await keptThenFinished(e, 5);
    const rewritten = rechained(withForgedOutcome(await plainLines(e), 2), e);
    expect(verifyResults(rewritten, { directory }).ok).toBe(true);
    expect(codes(rewritten, kept)).toEqual(['INCONSISTENT']);
  });
  it('with tree heads kept as the chain grew, names the first changed line exactly when two kept sizes are one apart, else the lines it lies between', async () => {
    const e = smoke();
    const lines = await plainLines(e);
    const genuine = rechained(lines, e);
    const rewritten = rechained(withForgedOutcome(lines, 3), e);
    const dir = mkdtempSync(join(tmpdir(), 'witness-kept-'));
    const heads = (sizes: number[]) => {
      const file = join(dir, `kept-${sizes.join('-')}.txt`);
      writeFileSync(file, treeHeads(genuine, e, sizes).join(''));
      return file;
    };
    const inconsistent = (kept: string) =>
      verifyResults(rewritten, { directory, keptHeads: kept }).problems.filter((p) => p.code === 'INCONSISTENT');
    expect(verifyResults(genuine, { directory, keptHeads: heads([1, 2, 3, 5]) }).problems).toEqual([]);
    const [exact] = inconsistent(heads([1, 2, 3, 5]));
    expect(exact).toMatchObject({ line: 3 });
    expect(exact!.message).toMatch(
      /the first 3 lines of the file's chain do not have the root the kept checkpoint signed .*; the first changed line is the chain's line 3 \(file line 3\)$/,
    );
    const [range] = inconsistent(heads([1, 5]));
    expect(range!.line).toBeUndefined();
    expect(range!.message).toMatch(
      /the first changed line is one of the chain's lines 2–5, from file line 2 \(a kept checkpoint proves the first 1 unchanged\); a tree head proves only that one of the lines it signs differs, not which/,
    );
  });
  it('reports a kept head of another experiment as INCONSISTENT: the file is not that log', async () => {
    const { kept } = await keptThenFinished(smoke({ seed: 9 }), 3);
    const { out } = await keptThenFinished(smoke(), 3);
    expect(codes(out, kept)).toEqual(['INCONSISTENT']);
  });
  it('reports a kept head with its signature changed as BAD_SIGNATURE', async () => {
    const { out, kept } = await keptThenFinished(smoke(), 5);
    writeFileSync(
      kept,
      readFileSync(kept, 'utf8').replace(/(— \S+ )(.)/, (_, a, c) => `${a}${c === 'A' ? 'B' : 'A'}`),
    );
    expect(codes(out, kept)).toEqual(['BAD_SIGNATURE']);
  });
});
