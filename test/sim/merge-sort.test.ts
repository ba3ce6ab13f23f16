/**
 * `witness sim merge` of inputs out of seq order, in bounded memory: the
 * external sort gives every line back in seq order, file order within a seq, through
 * temporary files beside the output that are gone afterwards — whatever the ids and
 * lines hold — and a merge through it writes exactly the sweep's own file and refuses
 * what it refused before. Small sort limits make a few lines spill to disk and take
 * more than one merge pass.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { mergeResults } from '../../src/sim/experiment/merge.js';
import { type Line, linesBySeq, SortFolder } from '../../src/sim/experiment/merge-sort.js';
import { planRuns } from '../../src/sim/experiment/plan.js';
import { runExperiment } from '../../src/sim/experiment/run.js';
import { parseExperiment } from '../../src/sim/experiment/schema.js';

const tempDir = () => mkdtempSync(join(tmpdir(), 'witness-merge-sort-'));
const SMALL = { runChars: 300, fanIn: 2 };

describe('the external sort', () => {
  it('gives back every line in seq order, file order within a seq, and leaves no file', () => {
    const dir = tempDir();
    const line = fc.record({
      seq: fc.nat({ max: 20 }),
      id: fc.string({ unit: 'binary' }),
      raw: fc.string({ unit: 'binary' }).map((s) => s.replace(/[\n\r]/g, ' ')),
    });
    fc.assert(
      fc.property(
        fc.array(line, { maxLength: 60 }),
        fc.integer({ min: 1, max: 400 }),
        fc.integer({ min: 2, max: 4 }),
        (given, runChars, fanIn) => {
          const lines: Line[] = given.map((l, i) => ({ ...l, where: `in.jsonl:${i + 1}` }));
          const sorting = new SortFolder(join(dir, 'out.jsonl'), { runChars, fanIn });
          try {
            const merged = [...linesBySeq(sorting.sorted('in.jsonl', lines))].flat();
            expect(merged).toEqual([...lines].sort((a, b) => a.seq - b.seq));
          } finally {
            sorting.remove();
          }
          expect(readdirSync(dir)).toEqual([]);
        },
      ),
    );
  });
});

describe('witness sim merge of an input out of seq order', () => {
  const experiment = parseExperiment({
    name: 'unit',
    seed: 5,
    runs: 6,
    grid: { honest: [3, 5], byzantine: [0, 1], byzantineStrategy: ['split', 'random'], rounds: 10 },
  });
  async function sweep(dir: string): Promise<string[]> {
    await runExperiment({ experiment, out: join(dir, 'all.jsonl') });
    return readFileSync(join(dir, 'all.jsonl'), 'utf8').split('\n').filter(Boolean);
  }
  it('writes the sweep file from concatenated shards and a reversed copy, and removes its temporary files', async () => {
    const dir = tempDir();
    const all = await sweep(dir);
    const odd = all.filter((_, i) => i % 2 === 1);
    const even = all.filter((_, i) => i % 2 === 0);
    writeFileSync(join(dir, 'cat.jsonl'), `${[...odd, ...even, all[3]].join('\n')}\n`);
    writeFileSync(join(dir, 'rev.jsonl'), `${[...all].reverse().join('\n')}\n`);
    const report = mergeResults(
      [join(dir, 'cat.jsonl'), join(dir, 'rev.jsonl')],
      join(dir, 'm.jsonl'),
      planRuns(experiment),
      { sort: SMALL },
    );
    expect(report).toMatchObject({ lines: all.length, duplicates: all.length + 1, missing: [] });
    expect(readFileSync(join(dir, 'm.jsonl'), 'utf8')).toBe(readFileSync(join(dir, 'all.jsonl'), 'utf8'));
    expect(readdirSync(dir).sort()).toEqual(['all.jsonl', 'cat.jsonl', 'm.jsonl', 'rev.jsonl']);
  });
  it('refuses two different lines for one run, naming both places, and leaves no merged file and no temporary file', async () => {
    const dir = tempDir();
    const all = await sweep(dir);
    const changed = all[7]!.replace('"rounds":', '"rounds":1,"x":');
    writeFileSync(join(dir, 'cat.jsonl'), `${[...all.slice(10), ...all.slice(0, 10), changed].join('\n')}\n`);
    expect(() => mergeResults([join(dir, 'cat.jsonl')], join(dir, 'm.jsonl'), undefined, { sort: SMALL })).toThrow(
      /differs between .*cat\.jsonl:\d+ and .*cat\.jsonl:\d+/,
    );
    expect(existsSync(join(dir, 'm.jsonl'))).toBe(false);
    expect(readdirSync(dir).sort()).toEqual(['all.jsonl', 'cat.jsonl']);
  });
});
