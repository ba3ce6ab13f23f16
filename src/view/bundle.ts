/**
 * @module
 * `witness view bundle`: the viewer as a folder that opens from disk (file://), with no
 * server — index.html, app.js (the same page script) and data.js, which holds every
 * answer the pages can ask for (the overview, every page of every cell's runs under
 * each outcome filter, every run, every comparison offered) keyed as the page asks.
 * A bundle holds all its runs, so it is for sweeps a browser can hold: above
 * MAX_BUNDLE_RUNS it is refused, with `witness view` named for larger files. A
 * mailbox, a delegation path or an E12 file is bundled from its answers the same way;
 * a mailbox's bundle is a snapshot of the moment it was written, not followed.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomic } from '../core/atomic-write.js';
import { WitnessError } from '../core/errors.js';
import type { Outcome } from '../sim/types.js';
import type { ViewModel } from './model.js';
import { apiKey, viewerHtml, viewerScript } from './page.js';

export const MAX_BUNDLE_RUNS = 50_000;

export function writeBundle(model: ViewModel, dir: string, title = 'Witness view'): { files: string[]; bytes: number } {
  const runs = model.indexes.reduce((s, ix) => s + ix.runs, 0);
  if (runs > MAX_BUNDLE_RUNS)
    throw new WitnessError(
      'USAGE',
      `${runs} runs are too many for a bundle (at most ${MAX_BUNDLE_RUNS}: it holds every run for the browser to load at once). Bundle fewer runs, or open the file with \`witness view\`.`,
    );
  const data: Record<string, unknown> = { [apiKey('about', {})]: { kind: 'results' } };
  const overview = model.overview();
  data[apiKey('overview', {})] = overview;
  model.indexes.forEach((ix, file) => {
    ix.cells.forEach((_c, cell) => {
      for (const outcome of ['', ...overview.outcomes] as ('' | Outcome)[]) {
        const pages = model.runs({ file, cell }, outcome ? [outcome] : [], 0).pages;
        for (let page = 0; page < pages; page++)
          data[apiKey('runs', { file, cell, outcome, page })] = model.runs(
            { file, cell },
            outcome ? [outcome] : [],
            page,
          );
      }
    });
    for (let pos = 0; pos < ix.runs; pos++) data[apiKey('run', { file, pos })] = model.run(file, pos);
  });
  for (const p of overview.pairs)
    data[apiKey('compare', { a: `${p.a.file}:${p.a.cell}`, b: `${p.b.file}:${p.b.cell}` })] = model.compare(p.a, p.b);
  return writeAnswersBundle(data, dir, title);
}

/** A bundle of `answers` (keyed as the page asks, `about?` saying what they are): the three files, replaced atomically. */
export function writeAnswersBundle(
  data: Record<string, unknown>,
  dir: string,
  title = 'Witness view',
): { files: string[]; bytes: number } {
  mkdirSync(dir, { recursive: true });
  const files: [string, string][] = [
    ['index.html', viewerHtml(title, 'app.js', 'data.js')],
    ['app.js', viewerScript()],
    ['data.js', `var WITNESS_BUNDLE = ${JSON.stringify(data)};\n`],
  ];
  for (const [name, text] of files) writeFileAtomic(join(dir, name), text);
  return {
    files: files.map(([name]) => join(dir, name)),
    bytes: files.reduce((s, [, t]) => s + Buffer.byteLength(t), 0),
  };
}
