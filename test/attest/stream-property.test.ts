/**
 * Property (fast-check; the seed is printed on failure): over random streams — chunk
 * count, chunk bytes, checkpoint interval — and random edits of their recordings, the
 * verifier accepts exactly the unedited stream: any edit of what the client was shown
 * (a chunk dropped, moved, repeated, replaced, its bytes or receipt changed, a foreign
 * chunk or checkpoint added, a checkpoint or the final receipt changed or removed)
 * makes it invalid, and the honest recording is always valid with its exact bytes. Where
 * a checkpoint line sits is not part of what was shown: it signs a prefix of the stream.
 */
import fc from 'fast-check';
import { expect, it } from 'vitest';
import { newSigningKey, verifyStream } from '../../src/attest/index.js';
import { NOW, trust } from './helpers.js';
import { recordedStream, STREAM } from './stream-helpers.js';

const key = newSigningKey('org-child');
const { directory } = trust([key]);

type Line = { type: string; bytes?: string; receipt?: Record<string, unknown>; note?: string; statement?: object };
type Edit =
  | { kind: 'drop' | 'duplicate' | 'flip' | 'receipt'; at: number; bit: number }
  | { kind: 'move'; at: number; to: number }
  | { kind: 'foreign-chunk' | 'foreign-checkpoint' | 'checkpoint-note'; at: number }
  | { kind: 'final-statement' | 'cut' };

const edit: fc.Arbitrary<Edit> = fc.oneof(
  fc.record({
    kind: fc.constantFrom('drop', 'duplicate', 'flip', 'receipt'),
    at: fc.nat(),
    bit: fc.integer({ min: 0, max: 7 }),
  }),
  fc.record({ kind: fc.constant('move'), at: fc.nat(), to: fc.nat() }),
  fc.record({ kind: fc.constantFrom('foreign-chunk', 'foreign-checkpoint', 'checkpoint-note'), at: fc.nat() }),
  fc.record({ kind: fc.constantFrom('final-statement', 'cut') }),
);

/** Applies one edit (nothing when this recording gives it nothing to edit). */
function apply(lines: Line[], e: Edit, foreign: Line[]): void {
  const chunks = lines.flatMap((l, i) => (l.type === 'chunk' ? [i] : []));
  const checkpoints = lines.flatMap((l, i) => (l.type === 'checkpoint' ? [i] : []));
  const final = lines.findIndex((l) => l.type === 'final');
  const pick = (of: number[], n: number) => of[n % of.length] as number;
  if (chunks.length === 0 && !['checkpoint-note', 'final-statement', 'cut'].includes(e.kind)) return;
  switch (e.kind) {
    case 'drop':
      lines.splice(pick(chunks, e.at), 1);
      return;
    case 'duplicate':
      lines.splice(pick(chunks, e.at + 1) + 1, 0, structuredClone(lines[pick(chunks, e.at)] as Line));
      return;
    case 'flip': {
      const line = lines[pick(chunks, e.at)] as Line;
      const bytes = Buffer.from(line.bytes as string, 'base64');
      if (bytes.length === 0) return;
      bytes[e.at % bytes.length] = (bytes[e.at % bytes.length] as number) ^ (1 << e.bit);
      line.bytes = bytes.toString('base64');
      return;
    }
    case 'receipt': {
      const receipt = (lines[pick(chunks, e.at)] as Line).receipt as Record<string, unknown>;
      const field = ['seq', 'chunk_len', 'task', 'policy'][e.bit % 4] as string;
      receipt[field] =
        typeof receipt[field] === 'number' ? (receipt[field] as number) + 1 : `${receipt[field] as string}9`;
      return;
    }
    case 'move': {
      const from = pick(chunks, e.at);
      const to = pick(chunks, e.to);
      if (from === to) return;
      lines.splice(to, 0, ...lines.splice(from, 1));
      return;
    }
    case 'foreign-chunk':
      lines.splice(pick(chunks, e.at), 0, foreign.find((l) => l.type === 'chunk') as Line);
      return;
    case 'foreign-checkpoint':
      lines.splice(pick(chunks, e.at), 0, foreign.find((l) => l.type === 'checkpoint') as Line);
      return;
    case 'checkpoint-note': {
      if (checkpoints.length === 0) return;
      const cp = lines[pick(checkpoints, e.at)] as Line;
      cp.note = (cp.note as string).replace('\n\n', '\nextension\n\n');
      return;
    }
    case 'final-statement':
      if (final < 0) return;
      (lines[final] as Line).statement = { ...(lines[final] as Line).statement, len: 1e6 };
      return;
    case 'cut':
      if (final < 0) return;
      lines.splice(final, 1);
      return;
  }
}

/**
 * What a recording shows: its chunks and final receipt in arrival order, and its checkpoints
 * (a checkpoint signs a prefix of the stream; where it arrived changes nothing it proves).
 */
function shown(lines: Line[]): string {
  const checkpoints = lines.filter((l) => l.type === 'checkpoint').map((l) => JSON.stringify(l));
  return JSON.stringify([lines.filter((l) => l.type !== 'checkpoint'), checkpoints.sort()]);
}

const foreign = (await recordedStream(key, 3, {
  stream: { ...STREAM, task: 'task-other' },
  checkpointEvery: 1,
})) as Line[];

it('accepts exactly the unedited stream, whatever the stream and the edit', async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.array(fc.uint8Array({ minLength: 0, maxLength: 24 }), { minLength: 1, maxLength: 40 }),
      fc.integer({ min: 1, max: 9 }),
      fc.array(edit, { minLength: 0, maxLength: 3 }),
      async (pieces, every, edits) => {
        const honest = (await recordedStream(key, pieces.length, {
          checkpointEvery: every,
          chunk: (i) => Buffer.from(pieces[i] as Uint8Array),
        })) as Line[];
        const lines = structuredClone(honest);
        for (const e of edits) apply(lines, e, foreign);
        // Two edits can undo each other (a foreign chunk added, then dropped): what counts is the result.
        const edited = shown(lines) !== shown(honest);
        const r = await verifyStream(lines, { directory, now: NOW });
        if (!edited) {
          expect(r.problems).toEqual([]);
          expect(r.bytes).toEqual(Buffer.concat(pieces));
        }
        expect(r.ok).toBe(!edited);
        expect(r.verdict === 'valid').toBe(!edited);
      },
    ),
    { numRuns: 300 },
  );
});
