/**
 * @module
 * The E12 page (embedded by toString(), like client.ts): the verdict of `witness
 * verify` on the file, the summary per condition (as `witness a2a bench` prints it), a
 * stacked bar chart of the mean latency parts in inline SVG, the overheads, the
 * forgery, and every trial, each linked to its delegation path drawn as a graph.
 * Every number is the file's or its verifier's; the page computes none.
 */
import type { PageHelpers } from './client.js';

// biome-ignore lint/suspicious/noExplicitAny: the browser's DOM; the project compiles without DOM types.
type Any = any;

export function e12Pages(h: PageHelpers): Record<string, (parts: string[], q: Any) => Promise<Any>> {
  const { el, link, table } = h;
  const ms = (x: number) => (typeof x === 'number' && Number.isFinite(x) ? x.toFixed(x < 10 ? 3 : 1) : '–');
  const signed = (x: number) =>
    typeof x === 'number' && Number.isFinite(x) ? `${x >= 0 ? '+' : ''}${x.toFixed(3)} ms` : '–';
  const PARTS = ['discovery_ms', 'a2a_ms', 'tool_ms', 'model_ms', 'sign_ms', 'cosign_ms', 'verify_ms'];
  const COLOURS = ['#4e79a7', '#f28e2b', '#76b7b2', '#59a14f', '#edc948', '#e15759', '#b07aa1'];

  /** Mean latency per condition, one bar of its parts each (the parts the file records; total and CPU are in the table). */
  const chart = (summary: Any[]) => {
    const s = h.svg;
    const sum = (row: Any) => PARTS.reduce((a, p) => a + (row.mean[p] ?? 0), 0);
    const max = Math.max(1e-9, ...summary.map(sum));
    const [W, LEFT, BAR, GAP] = [760, 70, 28, 18];
    const H = summary.length * (BAR + GAP) + 60;
    const svg = s('svg', {
      viewBox: `0 0 ${W} ${H}`,
      width: W,
      role: 'img',
      'aria-label': 'mean latency per condition, split into its parts',
      class: 'chart',
    });
    summary.forEach((row: Any, i: number) => {
      const yy = 10 + i * (BAR + GAP);
      svg.append(s('text', { x: 0, y: yy + BAR / 2 + 4, 'font-size': 13 }, row.condition));
      let x = LEFT;
      PARTS.forEach((p, k) => {
        const w = ((row.mean[p] ?? 0) / max) * (W - LEFT - 120);
        svg.append(
          s(
            'rect',
            { x, y: yy, width: Math.max(0, w), height: BAR, fill: COLOURS[k] as string },
            s('title', {}, `${row.condition} ${p.replace('_ms', '')}: ${ms(row.mean[p])} ms`),
          ),
        );
        x += w;
      });
      svg.append(s('text', { x: x + 6, y: yy + BAR / 2 + 4, 'font-size': 12 }, `${ms(sum(row))} ms`));
    });
    PARTS.forEach((p, k) => {
      const x = LEFT + k * 95;
      svg.append(
        s('rect', { x, y: H - 30, width: 12, height: 12, fill: COLOURS[k] as string }),
        s('text', { x: x + 16, y: H - 20, 'font-size': 11 }, p.replace('_ms', '')),
      );
    });
    return svg;
  };

  const e12 = async () => {
    const d = await h.api('e12', {});
    const v = d.verify;
    const box = el('div');
    box.append(el('h2', {}, `E12 results: ${d.file}`));
    const verdict = v.ok
      ? 'valid'
      : v.interrupted && v.problems.every((p: Any) => p.code === 'INCOMPLETE')
        ? 'partial'
        : 'invalid';
    box.append(
      el(
        'p',
        { class: v.ok ? 'ok' : 'error', id: 'verdict' },
        `${verdict}: ${v.verified}/${v.trials} trials verified (SHA-256 and UTF-8 length recomputed, ${v.signatures} signatures and ${v.edges} dag edges re-verified), trusting ${v.trusting}.`,
      ),
    );
    if (v.problems.length)
      box.append(
        table(
          ['code', 'problem'],
          v.problems.map((p: Any) => [p.code, p.message]),
          { class: 'problems' },
        ),
      );
    const c = d.config;
    box.append(
      el(
        'p',
        { class: 'caption' },
        `Run of ${d.created_at}: ${c.trials} trials per condition after ${c.warmup} warm-ups, agent ${c.agent}, Node ${c.node} on ${c.platform}, ${c.cpus} cores, load average ${c.load_average.map((x: number) => x.toFixed(1)).join(' → ')}.`,
      ),
    );
    box.append(el('h3', {}, 'Latency, ms (means unless marked)'));
    box.append(table(d.summary_table.head, d.summary_table.rows, { class: 'summary' }));
    box.append(el('div', { class: 'graph' }, chart(d.summary)));
    const o = d.overheads;
    box.append(
      table(
        ['overhead', ''],
        [
          ['dag over none (mean total)', signed(o.dag_vs_none_ms)],
          ['dag over none (median of same-round differences)', signed(o.dag_vs_none_paired_median_ms)],
          ['chain over none (mean total)', signed(o.chain_vs_none_ms)],
          ['dag over none, on-CPU (parent + child processes)', signed(o.dag_vs_none_cpu_ms)],
          // Files written before the streamed condition have no dag+stream rows.
          ...(o.dag_stream_vs_none_ms === undefined
            ? []
            : [
                ['dag+stream over none (mean total)', signed(o.dag_stream_vs_none_ms)],
                ['dag+stream over dag (mean total: the streaming)', signed(o.dag_stream_vs_dag_ms)],
                ['dag+stream over none, on-CPU', signed(o.dag_stream_vs_none_cpu_ms)],
              ]),
        ],
        { class: 'overheads' },
      ),
    );
    box.append(el('h3', {}, "The forgery: the child's key alone claims a parent"));
    box.append(
      table(
        ['construction', 'recorded', 'codes', 'path'],
        d.forgery.map((f: Any, i: number) => [
          f.construction,
          f.accepted ? 'accepted' : 'rejected',
          f.reasons.join(', '),
          link(`#/graph/${encodeURIComponent(`forgery:${i}`)}`, 'the graph', { class: 'path' }),
        ]),
        { class: 'forgery' },
      ),
    );
    box.append(el('h3', {}, `Trials (${d.trials.length})`));
    box.append(
      el(
        'div',
        { class: 'scroll' },
        table(
          ['trial', 'round', 'condition', 'task', 'recorded verdict', 'total', 'cpu', 'bytes', 'path'],
          d.trials.map((t: Any) => [
            t.i,
            t.round,
            t.condition,
            t.task_id,
            t.ok ? 'valid' : `invalid: ${t.codes.join(', ')}`,
            ms(t.total_ms),
            ms(t.cpu_ms),
            t.output_len,
            link(`#/graph/${encodeURIComponent(`trial:${t.i}`)}`, 'the graph', { class: 'path' }),
          ]),
          { class: 'trials' },
        ),
      ),
    );
    return box;
  };

  return { e12 };
}
