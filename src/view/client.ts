/**
 * @module
 * The viewer's page script: plain DOM, hash routes, no framework. It runs in the
 * browser — the page embeds `viewerApp.toString()` — so it uses nothing but its
 * arguments. Data comes from `api`: the local server's JSON, or in a bundle the same
 * answers written into data.js. Every link is an <a href>, so Tab reaches a run and
 * Enter opens it; the page never computes a statistic, it shows the model's.
 */

// biome-ignore lint/suspicious/noExplicitAny: the browser's window and DOM; the project compiles without DOM types.
type Any = any;

/** What a page module (client-mailbox.ts, client-graph.ts, client-e12.ts) gets: the DOM helpers and the data source. */
export interface PageHelpers {
  win: Any;
  doc: Any;
  el: (tag: string, attrs?: Record<string, string>, ...children: unknown[]) => Any;
  link: (href: string, text: string, attrs?: Record<string, string>) => Any;
  table: (head: string[], rows: unknown[][], attrs?: Record<string, string>) => Any;
  /** An SVG element (attributes, then children: nodes or text). */
  svg: (tag: string, attrs?: Record<string, string | number>, ...children: unknown[]) => Any;
  api: (path: string, params: Record<string, string | number>) => Promise<Any>;
  /** The server's address for a path with the token (`/api/events?t=…`); null in a bundle. */
  live: (path: string) => string | null;
}

/** A page module: its routes (the first part of the hash) and the page each draws. */
export type PageModule = (h: PageHelpers) => Record<string, (parts: string[], q: Any) => Promise<Any>>;

export function viewerApp(win: Any, bundle: Record<string, unknown> | null, modules: PageModule[] = []): void {
  const doc = win.document;
  const token = new URLSearchParams(win.location.search).get('t') ?? '';
  const main = doc.getElementById('main');
  const el = (tag: string, attrs: Record<string, string> = {}, ...children: unknown[]) => {
    const node = doc.createElement(tag);
    for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
    for (const c of children) node.append(c instanceof win.Node ? c : doc.createTextNode(String(c ?? '')));
    return node;
  };
  const link = (href: string, text: string, attrs: Record<string, string> = {}) => el('a', { href, ...attrs }, text);
  const table = (head: string[], rows: unknown[][], attrs: Record<string, string> = {}) =>
    el(
      'table',
      attrs,
      el('thead', {}, el('tr', {}, ...head.map((h) => el('th', {}, h)))),
      el('tbody', {}, ...rows.map((r) => el('tr', {}, ...r.map((c) => el('td', {}, c))))),
    );
  const api = async (path: string, params: Record<string, string | number>) => {
    const query = Object.keys(params)
      .sort()
      .map((k) => `${k}=${encodeURIComponent(String(params[k]))}`)
      .join('&');
    const key = `${path}?${query}`;
    if (bundle) {
      if (!(key in bundle))
        throw new Error(
          `This bundle does not hold ${key}: bundles hold every page of their runs; open the results with witness view for the rest.`,
        );
      return bundle[key] as Any;
    }
    const res = await win.fetch(`/api/${key}&t=${encodeURIComponent(token)}`);
    const body = await res.json();
    if (!res.ok) throw new Error(body.error ?? `HTTP ${res.status}`);
    return body;
  };
  const svg = (tag: string, attrs: Record<string, string | number> = {}, ...children: unknown[]) => {
    const node = doc.createElementNS('http://www.w3.org/2000/svg', tag);
    for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
    for (const c of children) node.append(c instanceof win.Node ? c : doc.createTextNode(String(c ?? '')));
    return node;
  };
  const live = (path: string) => (bundle ? null : `${path}?t=${encodeURIComponent(token)}`);
  const pages: Record<string, (parts: string[], q: Any) => Promise<Any>> = {};
  for (const m of modules) Object.assign(pages, m({ win, doc, el, link, table, svg, api, live }));
  let about: Any = null;
  let overview: Any = null;
  const cellOf = (f: number, c: number) => overview.files[f].cells[c];

  const sweep = (filter: string) => {
    const box = el('div');
    const input = el('input', {
      type: 'search',
      id: 'filter',
      placeholder: 'filter cells, e.g. b=2 or rule:median',
      'aria-label': 'filter cells',
      value: filter,
    });
    box.append(el('p', {}, el('label', {}, 'Filter: ', input)));
    const tables = el('div');
    box.append(tables);
    const draw = () => {
      const words = String(input.value).toLowerCase().split(/\s+/).filter(Boolean);
      tables.replaceChildren();
      overview.files.forEach((file: Any, f: number) => {
        tables.append(el('h2', {}, `${file.name}: ${file.runs} runs in ${file.cells.length} cells`));
        if (file.common) tables.append(el('p', { class: 'caption' }, `Every cell: ${file.common}`));
        if (file.problem_count || file.torn_tail)
          tables.append(
            el(
              'p',
              { class: 'warn' },
              `${file.problem_count} damaged lines skipped${file.torn_tail ? '; the last line is incomplete' : ''}.`,
            ),
          );
        const d = file.dropped;
        if (d.repeated + d.other_experiment + d.seq_taken > 0)
          tables.append(
            el(
              'p',
              { class: 'warn' },
              `Counted each run once: dropped ${d.repeated} repeated, ${d.other_experiment} of another experiment, ${d.seq_taken} of a second plan.`,
            ),
          );
        const cells = file.cells.filter((c: Any) => words.every((w) => c.cell.toLowerCase().includes(w)));
        const measures = file.measures as string[];
        const llm = file.cells.some(
          (c: Any) => c.llm.model_runs > 0 || c.llm.invalid_answers > 0 || c.llm.fallbacks > 0,
        );
        const head = [
          'cell',
          'runs',
          ...measures,
          'rounds',
          ...(llm
            ? [
                'invalid answers',
                'fallbacks',
                'calls',
                'retries',
                'tokens in',
                'tokens out',
                'latency p50',
                'p90',
                'p99',
              ]
            : []),
        ];
        const ms = (x: number | undefined) => (x === undefined ? '–' : `${x} ms`);
        const rows = cells.map((c: Any) => {
          const l = c.llm;
          const lat = l.latency_ms ?? {};
          return [
            link(`#/cell/${f}/${c.id}`, c.short, { class: 'cell' }),
            c.runs,
            ...measures.map((m) => c.rates[m]),
            c.rounds.mean.toFixed(1),
            ...(llm
              ? [
                  l.invalid_answers,
                  l.fallbacks,
                  l.calls,
                  l.retries,
                  l.tokens_in,
                  l.tokens_out,
                  ms(lat.p50),
                  ms(lat.p90),
                  ms(lat.p99),
                ]
              : []),
          ];
        });
        tables.append(el('div', { class: 'scroll' }, table(head, rows, { class: 'cells', 'data-file': String(f) })));
        tables.append(
          el(
            'p',
            { class: 'caption' },
            `${cells.length} of ${file.cells.length} cells shown. Rates in % with 95% Wilson intervals; ${file.caption}`,
          ),
        );
      });
      if (overview.pairs.length) {
        tables.append(el('h2', {}, 'Side by side: cells that played the same games'));
        tables.append(
          el(
            'ul',
            { class: 'pairs' },
            ...overview.pairs.map((p: Any) =>
              el('li', {}, link(`#/compare/${p.a.file}:${p.a.cell}/${p.b.file}:${p.b.cell}`, p.label)),
            ),
          ),
        );
      }
    };
    input.addEventListener('input', () => {
      draw();
      win.history.replaceState(null, '', `#/?filter=${encodeURIComponent(input.value)}`);
    });
    draw();
    return box;
  };

  const runsPage = async (f: number, c: number, outcome: string, page: number) => {
    const cell = cellOf(f, c);
    const data = await api('runs', { file: f, cell: c, outcome, page });
    const box = el('div');
    box.append(el('p', {}, link('#/', '← all cells')));
    box.append(el('h2', {}, `${overview.files[f].name}: ${cell.cell}`));
    const select = el(
      'select',
      { id: 'outcome', 'aria-label': 'outcome' },
      ...['', ...overview.outcomes].map((o: string) =>
        el('option', o === outcome ? { value: o, selected: '' } : { value: o }, o || 'every outcome'),
      ),
    );
    select.addEventListener('change', () => {
      win.location.hash = `#/cell/${f}/${c}?outcome=${select.value}&page=0`;
    });
    box.append(
      el('p', {}, el('label', {}, 'Outcome: ', select), ` ${data.total} runs; page ${data.page + 1} of ${data.pages}`),
    );
    const rows = data.rows.map((r: Any) => [
      link(`#/run/${f}/${r.pos}`, `run ${r.index}`, { class: 'run' }),
      r.seed,
      r.outcome,
      r.rounds,
    ]);
    box.append(table(['run', 'seed', 'outcome', 'rounds'], rows, { class: 'runs' }));
    const nav = el('p');
    if (data.page > 0) nav.append(link(`#/cell/${f}/${c}?outcome=${outcome}&page=${data.page - 1}`, '← previous'), ' ');
    if (data.page + 1 < data.pages)
      nav.append(link(`#/cell/${f}/${c}?outcome=${outcome}&page=${data.page + 1}`, 'next →', { id: 'next' }));
    box.append(nav);
    return box;
  };

  const game = (data: Any) => {
    const r = data.record;
    const box = el('div', { class: 'game' });
    box.append(el('h3', {}, `${overview.files[data.file].name} · ${r.cell} · run ${r.index}`));
    const ended = {
      vote: 'the agents voted to stop',
      rule: 'a decision rule decided',
      budget: 'the circuit breaker stopped it over its budget',
      deadline: `no decision by the last round (R = ${r.config.rounds})`,
    } as Record<string, string>;
    const decided = r.trajectory.find((t: Any) => t.decided !== undefined)?.decided;
    box.append(
      table(
        ['', ''],
        [
          [
            'outcome',
            `${r.outcome}${r.strict_valid === null ? '' : r.strict_valid ? ' (honest agents agree on an honest initial value)' : ''}`,
          ],
          [
            'ended',
            `after ${r.rounds} rounds: ${ended[r.ended_by] ?? r.ended_by}${decided !== undefined ? `, value ${decided}` : ''}`,
          ],
          [
            'honest agents converged',
            data.convergence_round === null
              ? 'never (no round in which every honest agent held the same honest initial value)'
              : `in round ${data.convergence_round}`,
          ],
          ['id, seed', `${r.id}, ${r.seed}`],
          [
            'agents',
            `${r.honest} honest, ${r.byzantine} Byzantine${r.config.byzantineStrategy ? ` (${r.config.byzantineStrategy})` : ''}`,
          ],
          ['invalid answers, fallbacks', `${r.invalid_answers}, ${r.fallbacks}`],
        ],
        { class: 'facts' },
      ),
    );
    const head = [
      'round',
      ...r.agents.map((a: string, i: number) =>
        r.roles[i] === 'byzantine'
          ? `${a} (Byzantine)`
          : `${a}${r.initial[a] !== undefined ? ` (start ${r.initial[a]})` : ''}`,
      ),
    ];
    const rows = el('tbody');
    for (const t of r.trajectory) {
      const tr = el(
        'tr',
        t.round === data.convergence_round
          ? { class: 'converged', title: 'honest agents converged in this round' }
          : {},
        el('th', {}, `${t.round}${t.round === data.convergence_round ? ' ✓' : ''}`),
      );
      r.agents.forEach((_a: string, i: number) => {
        const abstained = t.abstained?.[i] || t.values[i] === 'abstain';
        const td = el(
          'td',
          r.roles[i] === 'byzantine' ? { class: 'byz' } : {},
          el('span', { class: 'value' }, abstained ? 'abstained' : t.values[i]),
          ' ',
          el('span', { class: `vote ${t.votes[i]}` }, t.votes[i] ?? ''),
        );
        const why = t.reasoning?.[i];
        if (why) td.append(el('div', { class: 'why' }, why));
        tr.append(td);
      });
      rows.append(tr);
    }
    box.append(
      el(
        'div',
        { class: 'scroll' },
        el(
          'table',
          { class: 'rounds' },
          el('thead', {}, el('tr', {}, ...head.map((h: string) => el('th', {}, h)))),
          rows,
        ),
      ),
    );
    box.append(
      el(
        'p',
        { class: 'caption' },
        'Each agent per round: its proposal (or abstained) and its vote; public reasoning under it where it gave one. Byzantine seats are shaded; the row where the honest agents converged is marked ✓.',
      ),
    );
    if (r.llm) {
      box.append(el('h4', {}, `Model calls (${r.llm.calls}, model ${r.llm.model ?? '?'})`));
      box.append(
        table(
          ['round', 'agent', 'stage', 'attempt', 'tokens in', 'tokens out', 'latency', 'valid'],
          r.llm.call_log.map((c: Any) => [
            c.round,
            c.agent,
            c.kind,
            c.attempt,
            c.prompt_tokens,
            c.completion_tokens,
            `${c.latency_ms} ms`,
            c.valid ? 'yes' : 'no',
          ]),
        ),
      );
      box.append(
        el(
          'p',
          { class: 'caption' },
          'A results line keeps each call’s tokens, latency and validity, not its prompt and reply: those are in the cassette of a recorded sweep (witness sim --record).',
        ),
      );
    }
    return box;
  };

  const runPage = async (f: number, pos: number) => {
    const data = await api('run', { file: f, pos });
    return el(
      'div',
      {},
      el('p', {}, link(`#/cell/${f}/${data.cell}?outcome=&page=0`, '← the cell’s runs')),
      game(data),
    );
  };

  const comparePage = async (a: number[], b: number[]) => {
    const data = await api('compare', { a: `${a[0]}:${a[1]}`, b: `${b[0]}:${b[1]}` });
    const box = el('div');
    box.append(el('p', {}, link('#/', '← all cells')));
    box.append(el('h2', {}, `${cellOf(b[0]!, b[1]!).short} vs ${cellOf(a[0]!, a[1]!).short}`));
    const c = data.comparison;
    if (!c)
      box.append(
        el(
          'p',
          { class: 'warn' },
          'These cells played no game in common (no run index with the same seed): there is no paired difference.',
        ),
      );
    else {
      const pt = (x: number) => `${x > 0 ? '+' : ''}${(x * 100).toFixed(1)}`;
      box.append(
        table(
          ['pairs', 'Δ valid (points)', '95% CI', 'valid in both', 'base only', 'other only', 'neither'],
          [
            [
              c.pairs,
              pt(c.difference),
              `${pt(c.ci.low)} to ${pt(c.ci.high)}`,
              c.both_valid,
              c.base_only,
              c.other_only,
              c.neither,
            ],
          ],
          { class: 'paired' },
        ),
      );
      box.append(
        el(
          'p',
          { class: 'caption' },
          `Base: ${data.a.label} (file ${overview.files[a[0]!].name}); other: ${data.b.label} (file ${overview.files[b[0]!].name}). Δ valid: other's valid rate − base's over the same games, 95% CI by Newcombe's method for paired proportions (as witness report).`,
        ),
      );
    }
    box.append(
      el(
        'h3',
        {},
        `Runs whose outcome changed: ${data.changed_total}${data.changed_total > data.changed.length ? ` (first ${data.changed.length} listed)` : ''}`,
      ),
    );
    box.append(
      table(
        ['run', 'base', 'other', ''],
        data.changed.map((x: Any) => [
          x.index,
          x.a.outcome,
          x.b.outcome,
          link(`#/pair/${a[0]}:${x.a.pos}/${b[0]}:${x.b.pos}`, 'both games', { class: 'run' }),
        ]),
        { class: 'changed' },
      ),
    );
    return box;
  };

  const pairPage = async (a: number[], b: number[]) => {
    const [ga, gb] = await Promise.all([
      api('run', { file: a[0]!, pos: a[1]! }),
      api('run', { file: b[0]!, pos: b[1]! }),
    ]);
    return el(
      'div',
      {},
      el('p', {}, link(`#/compare/${a[0]}:${ga.cell}/${b[0]}:${gb.cell}`, '← the comparison')),
      el('div', { class: 'side' }, game(ga), game(gb)),
    );
  };

  const route = async () => {
    const [path, query] = String(win.location.hash.replace(/^#/, '') || '/').split('?');
    const q = new URLSearchParams(query ?? '');
    const parts = path!.split('/').filter(Boolean);
    const pair = (s: string | undefined) => String(s).split(':').map(Number);
    main.setAttribute('aria-busy', 'true');
    try {
      about ??= await api('about', {});
      let view: Any;
      // A mailbox, a delegation path or an E12 file: the pages of its module, its own page at #/.
      if (about.kind !== 'results') {
        const page = pages[parts[0] ?? about.kind] ?? pages[about.kind];
        if (!page) throw new Error(`This viewer has no page for ${about.kind}.`);
        main.replaceChildren(await page(parts, q));
        main.setAttribute('data-page', parts[0] ?? about.kind);
        main.removeAttribute('aria-busy');
        return;
      }
      overview ??= await api('overview', {});
      if (parts[0] === 'cell')
        view = await runsPage(Number(parts[1]), Number(parts[2]), q.get('outcome') ?? '', Number(q.get('page') ?? 0));
      else if (parts[0] === 'run') view = await runPage(Number(parts[1]), Number(parts[2]));
      else if (parts[0] === 'compare') view = await comparePage(pair(parts[1]), pair(parts[2]));
      else if (parts[0] === 'pair') view = await pairPage(pair(parts[1]), pair(parts[2]));
      else view = sweep(q.get('filter') ?? '');
      main.replaceChildren(view);
      main.setAttribute('data-page', parts[0] ?? 'sweep');
    } catch (error) {
      main.replaceChildren(el('p', { class: 'error', role: 'alert' }, (error as Error).message));
      main.setAttribute('data-page', 'error');
    }
    main.removeAttribute('aria-busy');
  };
  win.addEventListener('hashchange', route);
  route();
}
