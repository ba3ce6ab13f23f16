// The bytes an artifact receipt covers (src/a2a/artifact.ts) and the one check of a
// whole task (verifyTaskArtifacts, src/a2a/answer.ts): real Ed25519 keys, the one
// release signer, the real verifier.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type AnswerExpectation, COMPLETED_STATE, verifyTaskArtifacts } from '../../src/a2a/answer.js';
import { artifactBytes, artifactText, type WireArtifact } from '../../src/a2a/artifact.js';
import { EVIDENCE_KEY } from '../../src/a2a/metadata.js';
import { createReleaseSigner, MemoryNonceStore } from '../../src/attest/index.js';
import { newSigningKey } from '../../src/attest/keys.js';
import { trust } from './helpers.js';

const child = newSigningKey('org-child');
const parent = newSigningKey('org-parent');
const { directory } = trust([child, parent]);
const signer = createReleaseSigner({ key: child, instance: 'test' });

/** An artifact with its receipt in its metadata, as the child releases it. */
async function released(taskId: string, contextId: string, artifact: WireArtifact): Promise<WireArtifact> {
  const leaf = await signer.releaseOutput(artifactBytes({ taskId, contextId }, artifact));
  return { ...artifact, metadata: { ...artifact.metadata, [EVIDENCE_KEY]: { path: [leaf] } } };
}

function task(artifacts: WireArtifact[], state = COMPLETED_STATE, id = 't-1', contextId = 'c-1') {
  return { id, contextId, status: { state, timestamp: '2026-01-01T00:00:00Z' }, artifacts };
}

const text = (value: string, extra: Record<string, unknown> = {}) => ({
  text: value,
  mediaType: 'text/plain',
  ...extra,
});
const none: AnswerExpectation = { construction: 'none', childDeployer: child.deployer };
/** The one check as a parent that asked for `expected` runs it, with the test's directory. */
const check = (value: unknown, expected = none, options: { nonceStore?: MemoryNonceStore } = {}) =>
  verifyTaskArtifacts(value, expected, { directory, ...options });

describe('artifactBytes', () => {
  it('is the UTF-8 of the RFC 8785 form of {v, type, task_id, context_id, artifact_id, parts}', () => {
    const bytes = artifactBytes(
      { taskId: 't-1', contextId: 'c-1' },
      { artifactId: 'a-1', name: 'ignored', parts: [{ text: 'é', mediaType: 'text/plain' }], metadata: { x: 1 } },
    );
    expect(bytes.toString('utf8')).toBe(
      '{"artifact_id":"a-1","context_id":"c-1","parts":[{"mediaType":"text/plain","text":"é"}],"task_id":"t-1","type":"agent-witness.dev/a2a-artifact","v":1}',
    );
  });

  it('gives the text a user reads: every text part of every artifact, in order', () => {
    expect(
      artifactText([
        { artifactId: 'a', parts: [text('one '), { data: { n: 1 } }, text('two ')] },
        { artifactId: 'b', parts: [text('three')] },
      ]),
    ).toBe('one two three');
  });
});

describe('verifyTaskArtifacts', () => {
  it('accepts a completed task whose every artifact verifies, and gives their text', async () => {
    const a = await released('t-1', 'c-1', { artifactId: 'a-1', parts: [text('first, ')] });
    const b = await released('t-1', 'c-1', { artifactId: 'a-2', parts: [text('second'), { data: { k: [1, 2] } }] });
    const result = await check(task([a, b]));
    expect(result.problems).toEqual([]);
    expect(result.ok).toBe(true);
    expect(result.output).toBe('first, second');
    expect(result.paths.map((p) => p.length)).toEqual([1, 1]);
  });

  it.each([
    ['another task', { id: 't-2' }],
    ['another context', { contextId: 'c-2' }],
  ])('refuses a receipt moved to %s (OUTPUT_MISMATCH)', async (_what, change) => {
    const a = await released('t-1', 'c-1', { artifactId: 'a-1', parts: [text('x')] });
    const result = await check({ ...task([a]), ...change });
    expect(result.ok).toBe(false);
    expect(result.problems.map((p) => [p.code, p.at])).toEqual([['OUTPUT_MISMATCH', 'artifact 0 (a-1)']]);
  });

  it('refuses a receipt moved to another artifact of the same task', async () => {
    const a = await released('t-1', 'c-1', { artifactId: 'a-1', parts: [text('x')] });
    const moved = { ...a, artifactId: 'a-9' };
    expect((await check(task([moved]))).problems[0]?.code).toBe('OUTPUT_MISMATCH');
  });

  it("refuses a changed part's metadata, but not a change of the artifact's own metadata", async () => {
    const a = await released('t-1', 'c-1', { artifactId: 'a-1', parts: [text('x', { metadata: { lang: 'en' } })] });
    const partEdited = { ...a, parts: [text('x', { metadata: { lang: 'fr' } })] };
    expect((await check(task([partEdited]))).problems[0]?.code).toBe('OUTPUT_MISMATCH');
    const labelled = { ...a, name: 'renamed', metadata: { ...a.metadata, note: 'added later' } };
    expect((await check(task([labelled]))).ok).toBe(true);
  });

  it.each(['TASK_STATE_WORKING', 'TASK_STATE_FAILED', 'TASK_STATE_CANCELED'])(
    'refuses a task in %s with TASK_FAILED, even with verifying artifacts',
    async (state) => {
      const a = await released('t-1', 'c-1', { artifactId: 'a-1', parts: [text('x')] });
      const result = await check(task([a], state));
      expect(result.problems.map((p) => [p.code, p.at])).toEqual([['TASK_FAILED', 'task']]);
    },
  );

  it('refuses a completed task without artifacts with EVIDENCE_MISSING', async () => {
    expect((await check(task([]))).problems.map((p) => [p.code, p.at])).toEqual([['EVIDENCE_MISSING', 'task']]);
  });

  it('refuses an artifact without evidence with EVIDENCE_MISSING, naming it', async () => {
    const a = await released('t-1', 'c-1', { artifactId: 'a-1', parts: [text('x')] });
    const bare = { artifactId: 'a-2', parts: [text('y')] };
    const result = await check(task([a, bare]));
    expect(result.problems.map((p) => [p.code, p.at])).toEqual([['EVIDENCE_MISSING', 'artifact 1 (a-2)']]);
  });

  it.each([
    ['not an object', 'a task'],
    ['without an id', { contextId: 'c', status: { state: COMPLETED_STATE } }],
    ['with a numeric state (not the wire form)', { id: 't', contextId: 'c', status: { state: 3 } }],
    [
      'with a repeated artifact id',
      task([
        { artifactId: 'a', parts: [text('x')] },
        { artifactId: 'a', parts: [text('y')] },
      ]),
    ],
    ['with an artifact of no parts', task([{ artifactId: 'a', parts: [] }])],
  ])('refuses a task %s as MALFORMED', async (_what, value) => {
    expect((await check(value)).problems.map((p) => p.code)).toEqual(['MALFORMED']);
  });

  it('refuses an artifact whose parts have no canonical JSON form (a lone surrogate) as MALFORMED, naming it', async () => {
    const a = await released('t-1', 'c-1', { artifactId: 'a-1', parts: [text('x')] });
    const result = await check(task([{ ...a, parts: [text('\ud800')] }]));
    expect(result.problems.map((p) => [p.code, p.at])).toEqual([['MALFORMED', 'artifact 0 (a-1)']]);
  });

  it('claims no nonce when one artifact fails, so the genuine receipts still verify afterwards', async () => {
    const nonceStore = new MemoryNonceStore();
    const a = await released('t-1', 'c-1', { artifactId: 'a-1', parts: [text('x')] });
    const b = await released('t-1', 'c-1', { artifactId: 'a-2', parts: [text('y')] });
    const forged = { ...b, parts: [text('z')] };
    expect((await check(task([a, forged]), none, { nonceStore })).ok).toBe(false);
    expect((await check(task([a, b]), none, { nonceStore })).ok).toBe(true);
    const again = await check(task([a, b]), none, { nonceStore });
    expect(again.problems.map((p) => [p.code, p.at])).toEqual([
      ['REPLAY', 'artifact 0 (a-1)'],
      ['REPLAY', 'artifact 1 (a-2)'],
    ]);
  });

  it('checks the construction the parent asked for on every artifact', async () => {
    const a = await released('t-1', 'c-1', { artifactId: 'a-1', parts: [text('x')] });
    const result = await check(task([a]), { ...none, construction: 'dag' });
    expect(result.problems.map((p) => p.code)).toContain('CONSTRUCTION_MISMATCH');
  });

  it('verifies an artifact exactly for the task, context, id and parts it was released for', async () => {
    const partArb = fc.oneof(
      fc.record({ text: fc.string() }),
      fc.record({ data: fc.jsonValue() }),
      fc.record({ text: fc.string(), metadata: fc.dictionary(fc.string(), fc.jsonValue()) }),
    );
    const signedArb = fc.record({
      id: fc.string({ minLength: 1, maxLength: 8 }),
      contextId: fc.string({ maxLength: 8 }),
      // A2A v1.0 JSON leaves an empty id out, and an artifact holds at least one part.
      artifactId: fc.string({ minLength: 1, maxLength: 8 }),
      parts: fc.array(partArb, { minLength: 1, maxLength: 3 }),
    });
    const edits = ['none', 'task', 'context', 'artifact', 'add part', 'drop part', 'edit part'] as const;
    await fc.assert(
      fc.asyncProperty(signedArb, fc.constantFrom(...edits), partArb, async (drawn, edit, extra) => {
        // What a client reads is JSON: no -0, no undefined members.
        const s = JSON.parse(JSON.stringify(drawn)) as typeof drawn;
        const a = await released(s.id, s.contextId, { artifactId: s.artifactId, parts: s.parts });
        const v = { ...s, parts: [...s.parts] as unknown[] };
        if (edit === 'task') v.id += '~';
        if (edit === 'context') v.contextId += '~';
        if (edit === 'artifact') v.artifactId += '~';
        if (edit === 'add part') v.parts.push(JSON.parse(JSON.stringify(extra)));
        if (edit === 'drop part') v.parts.pop();
        if (edit === 'edit part') v.parts = [{ text: '~' }, ...v.parts];
        const delivered = { artifactId: v.artifactId, parts: v.parts, metadata: a.metadata };
        const result = await check(task([delivered], COMPLETED_STATE, v.id, v.contextId));
        expect(result.ok).toBe(edit === 'none');
        // Dropping the only part leaves an artifact that is no A2A artifact at all.
        const expected = v.parts.length === 0 ? ['MALFORMED'] : ['OUTPUT_MISMATCH', 'LENGTH_MISMATCH'];
        for (const p of result.problems) expect(expected).toContain(p.code);
      }),
      { numRuns: 80 },
    );
  });
});
