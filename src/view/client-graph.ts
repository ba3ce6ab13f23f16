/**
 * @module
 * The delegation graph page (embedded by toString(), like client.ts): a path's
 * receipts as nodes and its delegations as edges in plain inline SVG, each coloured by
 * the verdict attest's verifier gave it and labelled with its reason codes; a Merkle
 * path also draws each receipt's commitment to its earlier ancestors. Under the
 * picture, the same nodes and edges as tables, every reason in words. Each node and
 * edge is focusable (Tab) and names its verdict to a screen reader.
 */
import type { PageHelpers } from './client.js';

// biome-ignore lint/suspicious/noExplicitAny: the browser's DOM; the project compiles without DOM types.
type Any = any;

export function graphPages(h: PageHelpers): Record<string, (parts: string[], q: Any) => Promise<Any>> {
  const { el, link, table, svg } = h;
  const colour = (ok: boolean) => (ok ? '#2a9d8f' : '#b00020');
  const codes = (reasons: Any[]) => [...new Set(reasons.map((r: Any) => r.code))].join(', ');

  const picture = (g: Any) => {
    const [W, BOX_W, BOX_H, STEP, X] = [760, 340, 64, 118, 200];
    const top = g.edges.some((e: Any) => e.from < 0) ? 100 : 20;
    const y = (i: number) => top + i * STEP;
    const root = svg('svg', {
      viewBox: `0 0 ${W} ${top + g.nodes.length * STEP}`,
      width: W,
      role: 'img',
      'aria-label': `delegation ${g.construction ?? ''} path of ${g.nodes.length} receipts`,
      class: 'graph',
    });
    if (g.merkle) {
      // Each Merkle receipt's ancestry root commits to every receipt before it; the link from its parent is drawn as an edge.
      for (const n of g.nodes)
        for (let j = 0; j < n.index - 1; j++)
          root.append(
            svg(
              'path',
              {
                d: `M ${X} ${y(n.index) + BOX_H / 2} C ${X - 120 - 30 * (n.index - j)} ${y(n.index)}, ${X - 120 - 30 * (n.index - j)} ${y(j) + BOX_H}, ${X} ${y(j) + BOX_H / 2}`,
                fill: 'none',
                stroke: '#999',
                'stroke-dasharray': '4 3',
                class: 'commitment',
              },
              svg('title', {}, `receipt ${n.index}'s ancestry root commits to receipt ${j}`),
            ),
          );
    }
    for (const e of g.edges) {
      const from = e.from < 0 ? 20 + BOX_H : y(e.from) + BOX_H;
      const to = y(e.to);
      const ok = e.verdict === 'ok';
      const label = ok
        ? `${e.kind === 'cosigned' ? `co-signed by ${e.cosigned_by.join(', ') || 'nobody'}` : "the child's own link"}: ok`
        : `${e.verdict}: ${codes(e.reasons)}`;
      root.append(
        svg(
          'g',
          {
            class: 'edge',
            'data-verdict': e.verdict,
            'data-from': e.from,
            'data-to': e.to,
            tabindex: 0,
            'aria-label': `edge ${e.from < 0 ? 'missing parent' : e.from} to ${e.to}: ${label}`,
          },
          svg(
            'title',
            {},
            e.reasons.map((r: Any) => `${r.code}: ${r.message}`).join('\n') ||
              'the verifier found nothing wrong with this delegation',
          ),
          svg('line', {
            x1: X + BOX_W / 2,
            y1: from,
            x2: X + BOX_W / 2,
            y2: to - 4,
            stroke: colour(ok),
            'stroke-width': ok ? 2 : 4,
            'stroke-dasharray': e.verdict === 'forged' ? '8 5' : 'none',
          }),
          svg('path', {
            d: `M ${X + BOX_W / 2 - 6} ${to - 12} L ${X + BOX_W / 2} ${to - 2} L ${X + BOX_W / 2 + 6} ${to - 12}`,
            fill: 'none',
            stroke: colour(ok),
            'stroke-width': 2,
          }),
          svg(
            'text',
            {
              x: X + BOX_W / 2 + 12,
              y: (from + to) / 2 + 4,
              fill: colour(ok),
              'font-size': 12,
              'font-weight': ok ? 400 : 700,
            },
            label,
          ),
        ),
      );
    }
    if (g.edges.some((e: Any) => e.from < 0))
      root.append(
        svg('rect', {
          x: X,
          y: 20,
          width: BOX_W,
          height: BOX_H,
          fill: '#fff',
          stroke: '#b00020',
          'stroke-dasharray': '6 4',
          rx: 6,
        }),
        svg('text', { x: X + 12, y: 56, 'font-size': 13 }, 'parent not supplied'),
      );
    for (const n of g.nodes) {
      const title = `${n.index}: ${n.deployer} / ${n.instance}`;
      root.append(
        svg(
          'g',
          {
            class: 'node',
            'data-index': n.index,
            'data-ok': n.ok,
            tabindex: 0,
            'aria-label': `receipt ${title}: ${n.ok ? 'ok' : codes(n.reasons)}`,
          },
          svg('title', {}, n.reasons.map((r: Any) => `${r.code}: ${r.message}`).join('\n') || `digest ${n.digest}`),
          svg('rect', {
            x: X,
            y: y(n.index),
            width: BOX_W,
            height: BOX_H,
            rx: 6,
            fill: n.ok ? '#eef8f6' : '#fde8e4',
            stroke: colour(n.ok),
            'stroke-width': n.ok ? 1.5 : 3,
          }),
          svg('text', { x: X + 12, y: y(n.index) + 22, 'font-size': 13, 'font-weight': 600 }, title),
          svg(
            'text',
            { x: X + 12, y: y(n.index) + 42, 'font-size': 11, fill: '#444' },
            `${n.type}, ${n.construction}, depth ${n.depth}, key ${n.key_id}`,
          ),
          svg(
            'text',
            { x: X + 12, y: y(n.index) + 57, 'font-size': 11, fill: colour(n.ok) },
            n.ok ? 'receipt ok' : codes(n.reasons),
          ),
        ),
      );
    }
    return root;
  };

  const graph = async (parts: string[]) => {
    const of = decodeURIComponent(parts[1] ?? 'artifact');
    const g = await h.api('graph', { of });
    const box = el('div');
    if (g.back) box.append(el('p', {}, link(g.back, '← the E12 results')));
    box.append(el('h2', {}, g.title));
    box.append(
      el(
        'p',
        { class: g.ok ? 'ok' : 'error', id: 'verdict' },
        g.ok
          ? `valid: ${g.nodes.length} receipt${g.nodes.length > 1 ? 's' : ''}, ${g.construction} construction, ${g.signatures_checked} signatures checked.`
          : `invalid: ${codes([...g.path_reasons, ...g.nodes.flatMap((n: Any) => n.reasons), ...g.edges.flatMap((e: Any) => e.reasons)])}.`,
      ),
    );
    if (g.path_reasons.length)
      box.append(
        table(
          ['code', 'the whole path'],
          g.path_reasons.map((r: Any) => [r.code, r.message]),
          { class: 'path-reasons' },
        ),
      );
    if (g.nodes.length) box.append(el('div', { class: 'graph' }, picture(g)));
    box.append(
      el(
        'p',
        { class: 'caption' },
        "Root at the top, the receipt that released the output at the bottom. Green: the verifier found nothing wrong; red: its reason codes (hover or focus for the messages). A dashed red edge is forged: the parent did not co-sign it. Grey dashed curves: a Merkle receipt's commitment to its earlier ancestors.",
      ),
    );
    box.append(
      el('h3', {}, 'Receipts'),
      table(
        ['#', 'deployer / instance', 'type', 'key', 'issued', 'valid until', 'verdict'],
        g.nodes.map((n: Any) => [
          n.index,
          `${n.deployer} / ${n.instance}`,
          `${n.type} (${n.construction})`,
          n.key_id,
          n.issued_at,
          n.not_after,
          n.ok ? 'ok' : n.reasons.map((r: Any) => `${r.code}: ${r.message}`).join('\n'),
        ]),
        { class: 'nodes' },
      ),
    );
    box.append(
      el('h3', {}, 'Delegations'),
      table(
        ['from → to', 'kind', 'co-signed by', 'verdict', 'codes', 'reasons'],
        g.edges.map((e: Any) => [
          `${e.from < 0 ? '(missing)' : e.from} → ${e.to}`,
          e.kind,
          e.cosigned_by.join(', '),
          e.verdict,
          codes(e.reasons),
          e.reasons.map((r: Any) => r.message).join('\n'),
        ]),
        { class: 'edges' },
      ),
    );
    return box;
  };

  return { attest: graph, graph };
}
