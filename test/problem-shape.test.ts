/**
 * Every library verifier answers in the one problem shape (src/core/problem.ts): for each
 * kind of artifact `witness verify` recognises, a real input broken in a real way gives
 * problems with a code, a message and — where the problem has a place — `at`, in the
 * words the CLI prints, and no field but those and the verifier's documented extensions.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyDelegationRecord } from '../src/a2a/delegation-record.js';
import { verifyE12Results } from '../src/a2a/e12-verify.js';
import { sendTask } from '../src/a2a/send.js';
import { bundleOf, exportDsse, verifyBundle, verifyDsse, verifyEvidence, verifyStream } from '../src/attest/index.js';
import { newSigningKey } from '../src/attest/keys.js';
import type { Receipt } from '../src/attest/receipt.js';
import { ARTIFACT_KINDS } from '../src/cli/verify/kinds.js';
import { type Problem, pickProblem } from '../src/core/problem.js';
import { addAgent, initMailbox, openStore, verifyMailbox } from '../src/mailbox/index.js';
import { preset } from '../src/sim/experiment/presets.js';
import { runExperiment } from '../src/sim/experiment/run.js';
import { parseExperiment } from '../src/sim/experiment/schema.js';
import { verifyResults } from '../src/sim/transcript/verify.js';
import { startWorld, type World } from './a2a/helpers.js';
import { DAY, NOW, signerAt, trust } from './attest/helpers.js';
import { lineOfChunk, recordedStream, text } from './attest/stream-helpers.js';

/** A problem's fields, as a program reading it sees them. */
type Fields = Record<string, unknown>;

/** One kind's verifier run on a broken input, and what its problems must look like. */
interface Case {
  problems: readonly Problem[];
  /** The verifier's own fields beyond the Problem's (documented with it). */
  extensions: readonly string[];
  /** Where a problem is, from the verifier's own fields, in the CLI's words (undefined: nowhere in particular). */
  where?: (p: Fields) => string | undefined;
  /** Problems that must be among them: their code, and their `at` (undefined: none). */
  expected: ReadonlyArray<{ code: string; at: string | undefined }>;
}

const dir = mkdtempSync(join(tmpdir(), 'witness-problem-shape-'));
const root = newSigningKey('org-parent');
const leaf = newSigningKey('org-child');
const { directory } = trust([root, leaf]);
const output = Buffer.from('the answer');
const other = Buffer.from('another answer');
// A sweep signs at the real time.
const today = trust([leaf], { notBefore: Date.now() - DAY, notAfter: Date.now() + DAY }).directory;
const receiptAt = (p: Fields) => (p.index === undefined ? undefined : `receipt ${p.index}`);

/** A chain path of two receipts: the parent's task, the child's answer. */
async function path(): Promise<Receipt[]> {
  const task = await signerAt(root, NOW - 1000).releaseOutput(Buffer.from('the task'));
  const answer = await signerAt(leaf, NOW).releaseOutput(output, { ancestors: [task], construction: 'chain' });
  return [task, answer];
}

const attestCase = (problems: readonly Problem[], at: string | undefined): Case => ({
  problems,
  extensions: ['index'],
  where: receiptAt,
  expected: [
    { code: 'OUTPUT_MISMATCH', at },
    { code: 'LENGTH_MISMATCH', at },
  ],
});

let world: World;
beforeAll(async () => {
  world = await startWorld();
});
afterAll(async () => {
  await world?.close();
});

const CASES: Record<string, () => Promise<Case>> = {
  'a release receipt': async () => {
    const [, answer] = await path();
    const result = await verifyEvidence(answer, other, { directory, now: NOW });
    // A lone receipt has no place on a path worth naming.
    return attestCase(result.reasons, undefined);
  },
  'a delegation path': async () => {
    const result = await verifyEvidence({ type: 'witness/path', path: await path() }, other, { directory, now: NOW });
    return attestCase(result.reasons, 'receipt 1');
  },
  'a DSSE envelope': async () => {
    const result = await verifyDsse(exportDsse(await path(), leaf), other, { directory, now: NOW });
    return attestCase(result.reasons, 'receipt 1');
  },
  'an evidence bundle (a receipt or path with its output)': async () => {
    const bundle = { ...bundleOf(await path(), output), output_base64: other.toString('base64') };
    const result = await verifyBundle(bundle, { directory, now: NOW });
    return attestCase(result.reasons, 'receipt 1');
  },
  'an E12 results file': async () => {
    const file = JSON.parse(readFileSync(join(import.meta.dirname, 'fixtures', 'e12', 'stream-era.json'), 'utf8'));
    file.trials[0].output_sha256 = '0'.repeat(64);
    const result = await verifyE12Results(file);
    // `at` names the trial (its message, the trial's condition and task too).
    return { problems: result.problems, extensions: [], expected: [{ code: 'OUTPUT_MISMATCH', at: 'trial 0' }] };
  },
  'an A2A delegation record': async () => {
    const sent = await sendTask(world.agent.url, 'Inspect lot 9.', {
      directory: world.directory,
      construction: 'chain',
      key: world.parent,
    });
    const record = JSON.parse(JSON.stringify(sent.record));
    const artifact = record.answer.task.artifacts[0];
    artifact.parts[0].text = `${artifact.parts[0].text} (edited)`;
    const result = await verifyDelegationRecord(record, { directory: world.directory });
    return {
      problems: result.problems,
      extensions: [],
      expected: [
        { code: 'OUTPUT_MISMATCH', at: `artifact 0 (${artifact.artifactId}), receipt 1` },
        { code: 'VERDICT_NOT_REPRODUCED', at: undefined },
      ],
    };
  },
  'a mailbox folder': async () => {
    const mailbox = join(dir, 'mb');
    await initMailbox(mailbox, { keyPath: join(dir, 'mailbox.key') });
    for (const name of ['a', 'b']) await addAgent(mailbox, name);
    const store = await openStore(mailbox);
    for (const body of ['one', 'two', 'three']) await store.send('a', { to: 'b', body });
    await store.close();
    const calls = join(mailbox, 'calls.jsonl');
    const lines = readFileSync(calls, 'utf8').split('\n');
    lines[1] = (lines[1] as string).replace('"agent":"a"', '"agent":"b"');
    writeFileSync(calls, lines.join('\n'));
    const report = await verifyMailbox(mailbox);
    return {
      problems: report.problems,
      extensions: ['kind', 'file', 'line'],
      where: (p) => `${String(p.file).slice(mailbox.length + 1)}:${p.line}`,
      expected: [{ code: 'MODIFIED', at: 'calls.jsonl:2' }],
    };
  },
  'a signed results file': async () => {
    const out = join(dir, 'results.jsonl');
    const experiment = parseExperiment({ ...preset('smoke'), runs: 1 });
    await runExperiment({ experiment, out, sign: { key: leaf } });
    const lines = readFileSync(out, 'utf8').split('\n');
    lines[2] = (lines[2] as string).replace(/"rounds":(\d+)/, (_, r) => `"rounds":${Number(r) + 1}`);
    writeFileSync(out, lines.join('\n'));
    const result = verifyResults(out, { directory: today });
    return {
      problems: result.problems,
      extensions: ['line'],
      where: (p) => (p.line === undefined ? undefined : `line ${p.line}`),
      expected: [{ code: 'CONTENT_MISMATCH', at: 'line 3' }],
    };
  },
  'a results checkpoint file': async () => {
    const out = join(dir, 'cut.jsonl');
    await runExperiment({ experiment: parseExperiment({ ...preset('smoke'), runs: 1 }), out, sign: { key: leaf } });
    const checkpoints = join(dir, 'cut.jsonl.checkpoint.json');
    writeFileSync(checkpoints, '{"type": "witness/sim-checkpoints",');
    const result = verifyResults(out, { directory: today, checkpoints });
    return {
      problems: result.problems,
      extensions: ['line'],
      where: (p) => (p.line === undefined ? undefined : `line ${p.line}`),
      expected: [{ code: 'MALFORMED', at: undefined }],
    };
  },
  'a recorded stream': async () => {
    const lines = await recordedStream(leaf, 4);
    const dropped = lines.filter((_, i) => i !== lineOfChunk(lines, 1));
    const recording = `${text(dropped)}not json\n`;
    const result = await verifyStream(Buffer.from(recording), { directory, now: NOW });
    return {
      problems: result.problems,
      extensions: ['seq', 'line'],
      where: (p) => (p.seq !== undefined ? `chunk ${p.seq}` : p.line !== undefined ? `line ${p.line}` : undefined),
      expected: [
        { code: 'CHUNK_MISSING', at: 'chunk 1' },
        { code: 'MALFORMED', at: `line ${dropped.length + 1}` },
      ],
    };
  },
};

it('has a broken input for every kind of artifact witness verify recognises', () => {
  expect(Object.keys(CASES).sort()).toEqual([...new Set(ARTIFACT_KINDS.map((k) => k.what))].sort());
});

describe.each(Object.keys(CASES))('%s: its library verifier', (what) => {
  let found: Case;
  beforeAll(async () => {
    found = await (CASES[what] as () => Promise<Case>)();
  });

  it('finds the problems expected, each located exactly where it has a place', () => {
    const seen = found.problems.map((p) => ({ code: p.code, at: p.at }));
    for (const e of found.expected) expect(seen).toContainEqual(e);
  });

  it('gives every problem a code, a message, and at only with a place, in the words of its own fields', () => {
    expect(found.problems.length).toBeGreaterThan(0);
    for (const p of found.problems as unknown as Fields[]) {
      expect(p.code).toMatch(/^[A-Z][A-Z_]*$/);
      expect(typeof p.message === 'string' && p.message.length > 0).toBe(true);
      if ('at' in p) expect(typeof p.at === 'string' && p.at.length > 0).toBe(true);
      if (found.where) expect(p.at, JSON.stringify(p)).toBe(found.where(p));
    }
  });

  it('adds no field but the Problem keys and its documented extensions', () => {
    const allowed = new Set(['code', 'message', 'at', ...found.extensions]);
    for (const p of found.problems) expect(Object.keys(p).filter((k) => !allowed.has(k))).toEqual([]);
    for (const p of found.problems)
      expect(Object.keys(pickProblem(p))).toEqual('at' in p ? ['code', 'message', 'at'] : ['code', 'message']);
  });
});
