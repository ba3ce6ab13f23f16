/**
 * @module
 * Cell labels for tables and charts: the words every label shares are shown once (above
 * a table, in a report's header) and each row keeps only what differs. A label is
 * `cellKey`'s text (`policy:plurality h=8 b=2:split may_exist [0,50] R=50 rule:median@3
 * budget(30 rounds)`); a plain vote cell has no decide word, so when the labels mix
 * modes it gets `vote`, and every row says its mode.
 */

/** The words of a label: split at spaces, but `budget(30 rounds, 100 tokens)` stays one word. */
export function labelWords(label: string): string[] {
  const words: string[] = [];
  let depth = 0;
  let word = '';
  for (const ch of label) {
    if (ch === '(') depth++;
    else if (ch === ')') depth = Math.max(0, depth - 1);
    if (ch === ' ' && depth === 0) {
      if (word) words.push(word);
      word = '';
    } else word += ch;
  }
  if (word) words.push(word);
  return words;
}

const _isDecide = (word: string) => /^(rule|hybrid):[^@\s]+@\d+$/.test(word);

/** Adds `vote` where the decide word would be (after `R=…`) to labels without one, if any label has one. */
function _withModes(split: readonly string[][]): string[][] {
  if (!split.some((words) => words.some(_isDecide))) return split.map((w) => [...w]);
  return split.map((words) => {
    if (words.some(_isDecide)) return [...words];
    const at = words.findIndex((w) => /^R=\d+$/.test(w));
    const copy = [...words];
    copy.splice(at < 0 ? copy.length : at + 1, 0, 'vote');
    return copy;
  });
}

export interface ShortLabels {
  /** Each label without the shared words (the whole label when nothing differs). */
  short: Map<string, string>;
  /** The words every label shares, in label order; empty for one label. */
  common: string;
}

/**
 * Words that repeat what every label says in another way: `h=…` when h + b is the same N
 * in every label (then `N=…` is shared), and `@K` when every rule decides from round K.
 */
function _factorOut(split: string[][]): { split: string[][]; extra: string[] } {
  const extra: string[] = [];
  if (split.length < 2) return { split, extra };
  const num = (words: readonly string[], re: RegExp) =>
    Number(words.map((w) => re.exec(w)?.[1]).find((x) => x !== undefined) ?? Number.NaN);
  const totals = split.map((w) => num(w, /^h=(\d+)$/) + num(w, /^b=(\d+)/));
  const hs = new Set(split.map((w) => num(w, /^h=(\d+)$/)));
  if (hs.size > 1 && totals.every((t) => !Number.isNaN(t) && t === totals[0])) {
    split = split.map((w) => w.filter((x) => !/^h=\d+$/.test(x)));
    extra.push(`N=${totals[0]}`);
  }
  const afters = new Set(split.flatMap((w) => w.filter(_isDecide).map((x) => x.slice(x.lastIndexOf('@') + 1))));
  if (afters.size === 1) {
    split = split.map((w) => w.map((x) => (_isDecide(x) ? x.slice(0, x.lastIndexOf('@')) : x)));
    extra.push(`rules from round ${[...afters][0]}`);
  }
  return { split, extra };
}

/**
 * Cell labels without the words all of them share (e.g. `may_exist [0,50] R=50`), so
 * rows and charts show what differs; the shared words are returned to be shown once.
 */
export function shortLabels(labels: readonly string[]): ShortLabels {
  const { split, extra } = _factorOut(_withModes(labels.map(labelWords)));
  const shared =
    labels.length > 1 ? (split[0] ?? []).filter((word) => split.every((words) => words.includes(word))) : [];
  const short = new Map(
    labels.map((l, i) => [l, split[i]!.filter((w) => !shared.includes(w)).join(' ') || split[i]!.join(' ')]),
  );
  return { short, common: [...shared, ...extra].join(' ') };
}
