/**
 * @module
 * The viewer's files: one HTML shell, its script (the page code of client.ts) and, in a
 * bundle, data.js. Nothing is fetched from elsewhere: the shell loads only its own
 * script (and data.js), and the server's Content-Security-Policy allows nothing else.
 */
import { escapeHtml } from '../report/html-table.js';
import { viewerApp } from './client.js';
import { e12Pages } from './client-e12.js';
import { graphPages } from './client-graph.js';
import { mailboxPages } from './client-mailbox.js';

const STYLE = `body{font:14px/1.45 system-ui,sans-serif;margin:1.5rem auto;max-width:1400px;color:#222;padding:0 1rem}
h1{font-size:1.4rem}h2{font-size:1.1rem;margin-top:1.6rem}table{border-collapse:collapse;margin:.5rem 0 1rem;font-size:12px}
td,th{border-bottom:1px solid #e4e4e4;padding:2px 8px;text-align:right;vertical-align:top}td:first-child,th:first-child{text-align:left}
.scroll{max-height:720px;overflow:auto;border:1px solid #e4e4e4}thead th{position:sticky;top:0;background:#fafafa}
.caption{color:#444;font-size:13px}.warn{color:#8a4b00}.error{color:#b00020;font-weight:600}
a:focus{outline:2px solid #1d4ed8;outline-offset:1px}table.rounds td{text-align:left;min-width:7em}td.byz{background:#fde8e4}
tr.converged th,tr.converged td{box-shadow:inset 0 2px 0 #2a9d8f}.vote.stop{color:#2a9d8f}.vote.continue{color:#888}
.why{color:#555;font-size:11px;max-width:22em;white-space:pre-wrap}.side{display:grid;grid-template-columns:1fr 1fr;gap:1rem}
.side .game{min-width:0}input[type=search]{width:28em}.ok{color:#1f7a6e;font-weight:600}
td.body,pre.body{white-space:pre-wrap;text-align:left;max-width:36em}.receipt{font-size:11px;color:#444}tr.state-none td{background:#fde8e4}
td.state{text-align:left}table.messages td{text-align:left}g.node:focus rect,g.edge:focus line{stroke:#1d4ed8;stroke-width:4}svg{max-width:100%;height:auto}`;

/** The page: `script` is where its script is (a path on the server, `app.js` in a bundle), `data` the bundle's data file. */
export function viewerHtml(title: string, script: string, data?: string): string {
  const scripts = [data, script]
    .filter(Boolean)
    .map((src) => `<script src="${escapeHtml(src!)}"></script>`)
    .join('');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title>
<meta name="viewport" content="width=device-width, initial-scale=1"><link rel="icon" href="data:,"><style>${STYLE}</style></head>
<body><header><h1>${escapeHtml(title)}</h1><p class="caption">Every number and verdict comes from Witness's own code: the simulator's game state summarised as <code>witness report</code> does, and the verifiers of <code>witness verify</code>.</p></header>
<main id="main" aria-live="polite"></main>${scripts}</body></html>
`;
}

/** The page script: the viewer, started with the bundle's data when data.js set it. */
export function viewerScript(): string {
  const modules = [mailboxPages, graphPages, e12Pages].map((m) => m.toString()).join(',\n');
  return `"use strict";var __name=function(f){return f;};(${viewerApp.toString()})(window, typeof WITNESS_BUNDLE === 'undefined' ? null : WITNESS_BUNDLE, [${modules}]);\n`;
}

/** The key a page asks the data for (`runs?cell=0&file=0&…`, parameters sorted), as client.ts builds it. */
export function apiKey(path: string, params: Record<string, string | number>): string {
  const query = Object.keys(params)
    .sort()
    .map((k) => `${k}=${encodeURIComponent(String(params[k]))}`)
    .join('&');
  return `${path}?${query}`;
}
