/**
 * Paired comparisons in the reports: cells that played the same games (the remedy
 * preset's decision layers) are compared run by run — the difference of valid rates
 * with Newcombe's paired interval and McNemar's discordant counts — in `witness
 * report` (table, --json and --html) and in the table `witness sim` prints.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { RunRecord } from '../../src/sim/experiment/record.js';
import { newcombePairedInterval } from '../../src/sim/paired-interval.js';
import { runCli as cli } from '../support/cli.js';

interface Paired {
  base: string;
  other: string;
  pairs: number;
  both_valid: number;
  base_only: number;
  other_only: number;
  neither: number;
  difference: number;
  ci: { low: number; high: number };
}

let dir: string;
let sim: { code: number; out: string };
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'witness-paired-'));
  sim = await cli(['sim', '--preset', 'remedy', '--runs', '4', '--quiet', '--out', 'remedy.jsonl'], dir);
  expect(sim.code).toBe(0);
});

describe('paired comparisons', () => {
  it('compare every decision layer with the vote cell of the same games, run by run, in witness report --json', async () => {
    const report = JSON.parse((await cli(['report', 'remedy.jsonl', '--json'], dir)).out) as { paired: Paired[] };
    // 19 settings of b and strategy, 5 layers each against vote.
    expect(report.paired).toHaveLength(19 * 5);
    const records = readFileSync(join(dir, 'remedy.jsonl'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as RunRecord);
    for (const p of report.paired) {
      expect(p.base).not.toMatch(/ (rule|hybrid):/);
      const runs = (cell: string) => new Map(records.filter((r) => r.cell === cell).map((r) => [r.index, r]));
      const base = runs(p.base);
      const other = runs(p.other);
      let baseOnly = 0;
      let otherOnly = 0;
      let both = 0;
      for (const [index, b] of base) {
        const o = other.get(index)!;
        expect(o.seed).toBe(b.seed);
        if (b.outcome === 'valid' && o.outcome === 'valid') both++;
        else if (b.outcome === 'valid') baseOnly++;
        else if (o.outcome === 'valid') otherOnly++;
      }
      expect({ pairs: p.pairs, base_only: p.base_only, other_only: p.other_only, both_valid: p.both_valid }).toEqual({
        pairs: 4,
        base_only: baseOnly,
        other_only: otherOnly,
        both_valid: both,
      });
      const ci = newcombePairedInterval({
        both,
        firstOnly: baseOnly,
        secondOnly: otherOnly,
        neither: 4 - both - baseOnly - otherOnly,
      });
      expect(p.difference).toBe(ci.difference);
      expect(p.ci).toEqual({ low: ci.low, high: ci.high });
    }
    // The rules differ from vote somewhere in the preset, in both directions or one.
    expect(report.paired.some((p) => p.base_only + p.other_only > 0)).toBe(true);
  });
  it('print a paired section after the table of witness report and of witness sim', async () => {
    const report = await cli(['report', 'remedy.jsonl'], dir);
    for (const out of [report.out, sim.out]) {
      expect(out).toContain('Paired: each cell against the base that played the same games');
      expect(out).toMatch(/\n\S.*\s+rule:median@1 vs vote\s+4\s+[+−]?\d/);
      expect(out).toContain('Newcombe (1998) method 10');
    }
  });
  it('get a section of the HTML report, with a row per comparison', async () => {
    expect((await cli(['report', 'remedy.jsonl', '--html', 'remedy.html'], dir)).code).toBe(0);
    const html = readFileSync(join(dir, 'remedy.html'), 'utf8');
    const section = html.slice(
      html.indexOf('<section id="paired">'),
      html.indexOf('</section>', html.indexOf('<section id="paired">')),
    );
    expect(section).toContain('<h2>Paired comparisons</h2>');
    expect(section.match(/<tr><td>/g)).toHaveLength(19 * 5);
    expect(section).toMatch(/<td>rule:median@1 vs vote<\/td><td>4<\/td>/);
  });
  it('leave the section out when no two cells played the same games', async () => {
    const r = await cli(['sim', '--preset', 'smoke', '--runs', '2', '--quiet', '--out', 'smoke.jsonl'], dir);
    expect(r.out).not.toContain('Paired');
    const json = JSON.parse((await cli(['report', 'smoke.jsonl', '--json'], dir)).out) as { paired: unknown[] };
    expect(json.paired).toEqual([]);
    expect((await cli(['report', 'smoke.jsonl', '--html', 'smoke.html'], dir)).code).toBe(0);
    expect(readFileSync(join(dir, 'smoke.html'), 'utf8')).not.toContain('id="paired"');
  });
});
