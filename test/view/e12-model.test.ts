/**
 * The E12 page's trial graphs (src/view/e12-model.ts) carry the verdict of the one check
 * of an answer, as `witness verify` gives it, not only the receipts' own: a file recorded
 * by a real run before results were artifacts (test/fixtures/e12/message-era.json).
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
