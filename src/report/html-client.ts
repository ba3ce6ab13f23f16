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
  // Whole-number ticks for axes of counts and rounds: a step of 1, 2, 5, 10, 20, … giving
  // at most 10 ticks, so no axis reads 0.5 votes or labels one round three times.
  const wholeTicks = (lo: number, hi: number) => {
    const span = Math.max(1, hi - lo);
    let step = 1;
    for (let k = 0; span / step > 10; k++) step = [1, 2, 5][(k + 1) % 3]! * 10 ** Math.floor((k + 1) / 3);
    const ticks: number[] = [];
    for (let t = Math.ceil(lo / step) * step; t <= hi; t += step) ticks.push(t);
    return ticks;
  };
  const whole = (values: readonly number[]) => values.every((v) => Number.isInteger(v));
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
        const key = (row: _Element) =>
          numeric ? Number(row.children[column]!.getAttribute('data-v')) : (row.children[column]!.textContent ?? '');
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
        // Whole rounds only, at most 10 ticks.
        // Axes above and below: the rows are read from either end.
        x: {
          label: 'first round at which all honest agents held the same honest initial value',
          domain: [0, last],
          ticks: wholeTicks(0, last),
          tickFormat: 'd',
          grid: true,
          axis: 'both',
        },
        y: { label: null, domain: data.convergence.map((c) => c.cell) },
        r: { range: [2, 10] },
        marks: [
          Plot.dot(
            data.firstRounds,
            Plot.group({ r: 'count' }, { x: 'round', y: 'cell', fill: '#2a9d8f', fillOpacity: 0.7, tip: true }),
          ),
          Plot.tickX(converged, { x: 'mean', y: 'cell', stroke: '#222', strokeWidth: 2 }),
        ],
      }),
      distinct(data.firstRounds as never, 'cell'),
    );
  }

  if (data.trajectories.length) {
    const lastRound = Math.max(1, ...data.trajectories.map((t) => t.round));
    const values = data.trajectories.map((t) => t.value);
    const valueTicks = whole(values) ? wholeTicks(Math.min(...values), Math.max(...values)) : undefined;
    const stops = Math.max(1, ...data.votes.map((v) => Math.max(v.stop, v.threshold)));
    mount(
      'trajectories',
      Plot.plot({
        width: 1100,
        height: 220 * Math.ceil(distinct(data.trajectories as never, 'run') / 2) + 40,
        marginRight: 20,
        x: { label: 'round', ticks: wholeTicks(1, lastRound), tickFormat: 'd' },
        y: { label: 'value', grid: true, ...(valueTicks ? { ticks: valueTicks, tickFormat: 'd' } : {}) },
        fy: { label: null },
        facet: { data: data.trajectories, y: 'run', marginRight: 360 },
        marks: [
          Plot.lineY(data.trajectories, { x: 'round', y: 'value', stroke: 'agent', marker: 'dot', tip: true }),
          Plot.frame({ stroke: '#ddd' }),
        ],
      }),
      distinct(data.trajectories as never, 'agent'),
    );
    mount(
      'votes',
      Plot.plot({
        width: 1100,
        height: 260,
        x: { label: 'round', ticks: wholeTicks(1, lastRound), tickFormat: 'd' },
        y: { label: 'stop votes', grid: true, domain: [0, stops], ticks: wholeTicks(0, stops), tickFormat: 'd' },
        color: { legend: true },
        marks: [
          Plot.lineY(data.votes, { x: 'round', y: 'stop', stroke: 'run', marker: 'dot', tip: true }),
          Plot.lineY(data.votes, {
            x: 'round',
            y: 'threshold',
            stroke: 'run',
            strokeDasharray: '4 3',
            strokeOpacity: 0.5,
          }),
        ],
      }),
      distinct(data.votes as never, 'run'),
    );
  }

  // One bar per whole number of rounds (a bin 2.0–2.5 is no number of rounds), stacked by outcome.
  const roundCounts = new Map<string, { rounds: number; outcome: string; count: number }>();
  for (const r of data.rounds) {
    const key = `${r.rounds} ${r.outcome}`;
    const seen = roundCounts.get(key);
    if (seen) seen.count++;
    else roundCounts.set(key, { rounds: r.rounds, outcome: r.outcome, count: 1 });
  }
  const bars = [...roundCounts.values()].sort(
    (a, b) => a.rounds - b.rounds || allOutcomes.indexOf(a.outcome) - allOutcomes.indexOf(b.outcome),
  );
  const perRounds = new Map<number, number>();
  for (const b of bars) perRounds.set(b.rounds, (perRounds.get(b.rounds) ?? 0) + b.count);
  const [fewest, most] = [Math.min(...perRounds.keys()), Math.max(...perRounds.keys())];
  const tallest = Math.max(1, ...perRounds.values());
  mount(
    'rounds',
    Plot.plot({
      width: 1100,
      height: 260,
      // From round 1: one bar alone is a bar, not the whole width.
      x: {
        label: 'rounds played',
        domain: [0.5, Math.max(most, fewest + 9) + 0.5],
        ticks: wholeTicks(1, Math.max(most, fewest + 9)),
        tickFormat: 'd',
      },
      y: { label: 'runs', grid: true, domain: [0, tallest], ticks: wholeTicks(0, tallest), tickFormat: 'd' },
      color: outcomeColours(data.rounds.map((r) => r.outcome)),
      marks: [
        Plot.rectY(bars, {
          x1: (b: { rounds: number }) => b.rounds - 0.4,
          x2: (b: { rounds: number }) => b.rounds + 0.4,
          y: 'count',
          fill: 'outcome',
          title: (b: { rounds: number; outcome: string; count: number }) =>
            `${b.count} runs ${b.outcome} after ${b.rounds} rounds`,
          tip: true,
        }),
        Plot.ruleY([0]),
      ],
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
        fy: {
          label: null,
          domain: ['valid', 'in range', 'timeout', 'escalated'].filter((m) => data.modes.some((r) => r.measure === m)),
        },
        color: { legend: true },
        marks: [
          Plot.lineY(data.modes, {
            x: 'byzantine',
            y: 'rate',
            stroke: 'mode',
            fx: 'strategy',
            fy: 'measure',
            marker: 'dot',
            tip: true,
          }),
          Plot.ruleX(data.modes, {
            x: 'byzantine',
            y1: 'low',
            y2: 'high',
            stroke: 'mode',
            fx: 'strategy',
            fy: 'measure',
            strokeOpacity: 0.5,
          }),
          Plot.frame({ stroke: '#ddd' }),
        ],
      }),
      distinct(data.modes as never, 'mode'),
    );
  }
  doc.body.setAttribute('data-rendered', 'true');
}
