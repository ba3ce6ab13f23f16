/**
 * @module
 * The report page's drawing code. `drawReport` runs in the browser: the page embeds
 * its source (`drawReport.toString()`), so it must use nothing but its arguments.
 * Every chart is drawn by Observable Plot; each figure records how many series it
 * drew (`data-series`) so the browser test can check the picture, not just the page.
 */
import type { ReportData } from './html-data.js';

// biome-ignore lint/suspicious/noExplicitAny: Observable Plot is loaded as a browser global with no types here.
type PlotLib = any;

/** The little of the DOM this code touches (the project compiles without DOM types). */
interface _Element {
  querySelector(selector: string): _Element | null;
  querySelectorAll(selector: string): Iterable<_Element>;
  append(...nodes: unknown[]): void;
  setAttribute(name: string, value: string): void;
  getAttribute(name: string): string | null;
  removeAttribute(name: string): void;
  addEventListener(type: string, listener: () => void): void;
  readonly children: ArrayLike<_Element>;
  readonly textContent: string | null;
}
interface _Document {
  getElementById(id: string): _Element | null;
  querySelectorAll(selector: string): Iterable<_Element>;
  readonly body: _Element;
}

export function drawReport(data: ReportData, Plot: PlotLib, doc: _Document): void {
  const mount = (id: string, chart: unknown, series: number) => {
    const figure = doc.getElementById(id);
    if (!figure) return;
    figure.querySelector('.chart')?.append(chart);
    figure.setAttribute('data-series', String(series));
  };
  const distinct = (rows: Record<string, unknown>[], key: string) => new Set(rows.map((r) => r[key])).size;
  const pct = (x: number) => `${Math.round(x * 100)}%`;
  // One colour per outcome in every chart; a legend lists only what its chart draws.
  const allOutcomes = ['valid', 'invalid', 'none', 'timeout', 'escalated', 'no_consensus'];
  const allColours = ['#2a9d8f', '#e76f51', '#f4a261', '#8d99ae', '#9b5de5', '#3d405b'];
  const outcomeColours = (drawn: readonly string[]) => {
    const domain = allOutcomes.filter((o) => drawn.includes(o));
    return { legend: true, domain, range: domain.map((o) => allColours[allOutcomes.indexOf(o)]) };
  };
  // Click a header to sort its table by that column (again: the other way; a third time: plan order).
  for (const table of doc.querySelectorAll('table[data-sortable]')) {
    const body = table.querySelector('tbody')!;
    const heads = [...table.querySelectorAll('thead th')];
    heads.forEach((th, column) => {
      th.addEventListener('click', () => {
        const state = th.getAttribute('data-sorted');
        const next = state === null ? '▼' : state === '▼' ? '▲' : null;
        for (const h of heads) h.removeAttribute('data-sorted');
        if (next) th.setAttribute('data-sorted', next);
        const numeric = th.getAttribute('data-sort') === 'num';
        const key = (row: _Element) => (numeric ? Number(row.children[column]!.getAttribute('data-v')) : (row.children[column]!.textContent ?? ''));
        const rows = [...body.querySelectorAll('tr')].sort((a, b) => {
          if (!next) return Number(a.getAttribute('data-order')) - Number(b.getAttribute('data-order'));
          const [x, y] = [key(a), key(b)];
          const order = x < y ? -1 : x > y ? 1 : 0;
          return next === '▼' ? -order : order;
        });
        body.append(...rows);
      });
    });
  }

  if (data.firstRounds.length) {
    const converged = data.convergence.filter((c) => c.mean !== null);
    const last = Math.max(2, ...data.firstRounds.map((p) => p.round));
    mount(
      'convergence',
      Plot.plot({
        width: 1100,
        height: Math.max(140, 26 * data.convergence.length + 70),
        marginLeft: 300,
        marginRight: 30,
        // Whole rounds only: as many ticks as rounds, up to 10.
        // Axes above and below: the rows are read from either end.
        x: { label: 'first round at which all honest agents held the same honest initial value', domain: [0, last], ticks: Math.min(last, 10), tickFormat: 'd', grid: true, axis: 'both' },
        y: { label: null, domain: data.convergence.map((c) => c.cell) },
        r: { range: [2, 10] },
        marks: [
          Plot.dot(data.firstRounds, Plot.group({ r: 'count' }, { x: 'round', y: 'cell', fill: '#2a9d8f', fillOpacity: 0.7, tip: true })),
          Plot.tickX(converged, { x: 'mean', y: 'cell', stroke: '#222', strokeWidth: 2 }),
        ],
      }),
      distinct(data.firstRounds as never, 'cell'),
    );
  }

  if (data.trajectories.length) {
    mount(
      'trajectories',
      Plot.plot({
        width: 1100,
        height: 220 * Math.ceil(distinct(data.trajectories as never, 'run') / 2) + 40,
        marginRight: 20,
        x: { label: 'round', tickFormat: 'd' },
        y: { label: 'value', grid: true },
        fy: { label: null },
        facet: { data: data.trajectories, y: 'run', marginRight: 360 },
        marks: [Plot.lineY(data.trajectories, { x: 'round', y: 'value', stroke: 'agent', marker: 'dot', tip: true }), Plot.frame({ stroke: '#ddd' })],
      }),
      distinct(data.trajectories as never, 'agent'),
    );
    mount(
      'votes',
      Plot.plot({
        width: 1100,
        height: 260,
        x: { label: 'round', tickFormat: 'd' },
        y: { label: 'stop votes', grid: true },
        color: { legend: true },
        marks: [
          Plot.lineY(data.votes, { x: 'round', y: 'stop', stroke: 'run', marker: 'dot', tip: true }),
          Plot.lineY(data.votes, { x: 'round', y: 'threshold', stroke: 'run', strokeDasharray: '4 3', strokeOpacity: 0.5 }),
        ],
      }),
      distinct(data.votes as never, 'run'),
    );
  }

  mount(
    'rounds',
    Plot.plot({
      width: 1100,
      height: 260,
      x: { label: 'rounds played' },
      y: { label: 'runs', grid: true },
      color: outcomeColours(data.rounds.map((r) => r.outcome)),
      marks: [Plot.rectY(data.rounds, Plot.binX({ y: 'count' }, { x: 'rounds', fill: 'outcome', tip: true })), Plot.ruleY([0])],
    }),
    distinct(data.rounds as never, 'outcome'),
  );

  if (data.modes.length) {
    mount(
      'modes',
      Plot.plot({
        width: 1100,
        height: 200 * distinct(data.modes as never, 'measure') + 60,
        marginRight: 80,
        // Every b is a tick: each small multiple is read at every count of Byzantine agents.
        x: { label: 'Byzantine agents b', ticks: [...new Set(data.modes.map((m) => m.byzantine))], tickFormat: 'd' },
        y: { domain: [0, 1], tickFormat: pct, grid: true, label: 'rate' },
        fx: { label: 'Byzantine strategy' },
        // valid beside in range: a rule's value can be strictly invalid and still in range.
        fy: { label: null, domain: ['valid', 'in range', 'timeout', 'escalated'].filter((m) => data.modes.some((r) => r.measure === m)) },
        color: { legend: true },
        marks: [
          Plot.lineY(data.modes, { x: 'byzantine', y: 'rate', stroke: 'mode', fx: 'strategy', fy: 'measure', marker: 'dot', tip: true }),
          Plot.ruleX(data.modes, { x: 'byzantine', y1: 'low', y2: 'high', stroke: 'mode', fx: 'strategy', fy: 'measure', strokeOpacity: 0.5 }),
          Plot.frame({ stroke: '#ddd' }),
        ],
      }),
      distinct(data.modes as never, 'mode'),
    );
  }
  doc.body.setAttribute('data-rendered', 'true');
}
