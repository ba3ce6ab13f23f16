/**
 * The E12 page's trial graphs (src/view/e12-model.ts) carry the verdict of the one check
 * of an answer, as `witness verify` gives it, not only the receipts' own: a file recorded
 * by a real run before results were artifacts (test/fixtures/e12/message-era.json), and
 * one with the dag+stream condition, whose trial graph carries its recorded stream's
 * verdict too (stream-era.json).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { e12Answers } from '../../src/view/e12-model.js';
import { apiKey } from '../../src/view/page.js';

const fixture = join(import.meta.dirname, '..', 'fixtures', 'e12', 'message-era.json');
const read = () => JSON.parse(readFileSync(fixture, 'utf8')) as { card: { provider: { organization: string } } };
type Graph = { ok: boolean; path_reasons: Array<{ code: string }> };
const trialGraph = async (file: unknown, i: number) =>
  (await e12Answers(file, 'e12.json'))[apiKey('graph', { of: `trial:${i}` })] as Graph;

describe('the E12 page of a trial', () => {
  it('draws a verified trial as ok, with nothing on the whole path', async () => {
    const graph = await trialGraph(read(), 0);
    expect([graph.ok, graph.path_reasons]).toEqual([true, []]);
  });

  it("puts CHILD_MISMATCH on the whole path when the file's card names another child than the one that released it", async () => {
    const file = read();
    file.card.provider.organization = 'org-other'; // the card no longer verifies; it names another child
    const graph = await trialGraph(file, 0);
    expect(graph.ok).toBe(false);
    expect(graph.path_reasons.map((r) => r.code)).toEqual(['CHILD_MISMATCH']);
  });
});

describe('the E12 page of a dag+stream trial', () => {
  const streamed = join(import.meta.dirname, '..', 'fixtures', 'e12', 'stream-era.json');
  const file = () =>
    JSON.parse(readFileSync(streamed, 'utf8')) as {
      trials: Array<{ condition: string; stream?: Array<{ type: string; bytes?: string }> }>;
    };
  const at = file().trials.findIndex((t) => t.condition === 'dag+stream');

  it('draws the trial as ok when its recorded stream verifies with its answer', async () => {
    const graph = await trialGraph(file(), at);
    expect([graph.ok, graph.path_reasons]).toEqual([true, []]);
  });

  it('puts CHUNK_MISMATCH on the whole path when a chunk of its recorded stream was edited', async () => {
    const edited = file();
    const chunk = edited.trials[at]?.stream?.find((l) => l.type === 'chunk') as { bytes: string };
    chunk.bytes = Buffer.from('[{"text":"edited"}]\n').toString('base64');
    const graph = await trialGraph(edited, at);
    expect(graph.ok).toBe(false);
    expect(graph.path_reasons.map((r) => r.code)).toEqual(['CHUNK_MISMATCH']);
  });
});
