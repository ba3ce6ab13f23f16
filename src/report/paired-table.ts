/**
 * @module
 * The paired section of a report: for cells that played the same games, the other
 * cell's valid rate minus its base's, with Newcombe's paired 95% interval, and
 * McNemar's discordant runs. Rows name the pair by what differs (`rule:median@1 vs
 * vote`) under the settings the two share, shortened like the cell table's rows.
 */
import type { PairedComparison } from '../sim/paired.js';
import { labelWords, shortLabels } from './labels.js';
import { renderTable } from './table.js';

/** A comparison as `--json` prints it (snake_case, like the results lines). */
export function pairedJson(c: PairedComparison) {
  return {
    base: c.base,
    other: c.other,
    pairs: c.pairs,
    both_valid: c.counts.both,
    base_only: c.counts.firstOnly,
    other_only: c.counts.secondOnly,
    neither: c.counts.neither,
    difference: c.difference,
    ci: c.ci,
  };
}

/** The columns of the paired table, terminal and HTML. */
export const PAIRED_HEADER = [
  'same games',
  'cell vs base',
  'pairs',
  'Δ valid (95% CI)',
  'base only',
  'cell only',
] as const;

export const PAIRED_CAPTION =
  "Δ valid: the cell's valid rate − the base's, in points, 95% CI by Newcombe (1998) method 10 for paired proportions; base only / cell only: runs valid under one of the two (McNemar's discordant pairs).";

/** One row per comparison: the settings the two share (shortened), what differs, pairs, Δ valid, discordant counts. */
export function pairedRows(comparisons: readonly PairedComparison[]): string[][] {
  const settings = comparisons.map((c) => _shared(c.base, c.other));
  const { short } = shortLabels(settings);
  return comparisons.map((c, i) => {
    const [other, base] = _differing(c.other, c.base);
    return [
      short.get(settings[i]!) ?? settings[i]!,
      `${other} vs ${base}`,
      String(c.pairs),
      _points(c),
      String(c.counts.firstOnly),
      String(c.counts.secondOnly),
    ];
  });
}

/** The section, or '' when no two cells played the same games. */
export function renderPairedTable(comparisons: readonly PairedComparison[]): string {
  if (comparisons.length === 0) return '';
  const table = renderTable(PAIRED_HEADER, pairedRows(comparisons), 2);
  return `Paired: each cell against the base that played the same games (seeds, initial values, Byzantine seats).\n${table}\n${PAIRED_CAPTION}`;
}

/** `+12 (−3–27)`: the difference and its interval in percentage points. */
function _points(c: PairedComparison): string {
  const p = (x: number) => {
    const v = Math.round(x * 1000) / 10;
    return `${v > 0 ? '+' : v < 0 ? '−' : ''}${Math.abs(v)}`;
  };
  return `${p(c.difference)} (${p(c.ci.low)} to ${p(c.ci.high)})`;
}

/** The words of the two labels both have, as a label. */
function _shared(a: string, b: string): string {
  const other = new Set(labelWords(b));
  return labelWords(a)
    .filter((w) => other.has(w))
    .join(' ');
}

/** What each label has that the other has not; a missing decision word is `vote`. */
function _differing(a: string, b: string): [string, string] {
  const wa = labelWords(a);
  const wb = labelWords(b);
  const only = (x: string[], y: string[]) => x.filter((w) => !y.includes(w));
  const decides = (words: string[]) => words.some((w) => /^(rule|hybrid):/.test(w));
  const side = (mine: string[], theirs: string[]) => {
    const words = only(mine, theirs);
    return words.length > 0 ? words.join(' ') : decides(only(theirs, mine)) ? 'vote' : '(same)';
  };
  return [side(wa, wb), side(wb, wa)];
}
