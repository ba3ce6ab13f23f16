/**
 * @module
 * The mailbox pages (embedded by toString(), like client.ts, so it uses only its
 * argument): the verdict of `witness mailbox verify`, the newest witnessed checkpoint,
 * the agents, the threads, and every message with its delivery states and the receipt
 * behind each. Over the server the page opens ONE event stream (`/api/events`) and
 * merges each update into what it shows — new messages at the top, changed states in
 * place — so the page never reloads; in a bundle it is the snapshot it was written with.
 */
import type { PageHelpers } from './client.js';

// biome-ignore lint/suspicious/noExplicitAny: the browser's DOM; the project compiles without DOM types.
type Any = any;

export function mailboxPages(h: PageHelpers): Record<string, (parts: string[], q: Any) => Promise<Any>> {
  const { el, link, table } = h;
  let snap: Any = null;
  let stream: Any = null;
  /** Redraws what the current page shows after an update (undefined: no mailbox page is shown). */
  let redraw: ((changed: Any[]) => void) | undefined;

  const load = async () => {
    snap ??= await h.api('mailbox', {});
    const url = h.live('/api/events');
    if (!stream && url && snap.live) {
      stream = new h.win.EventSource(url);
      stream.onmessage = (e: Any) => merge(JSON.parse(e.data));
      stream.onopen = () => setLive('live: new messages and states appear as they are stored');
      stream.onerror = () => setLive('reconnecting to witness view…');
    }
    return snap;
  };
  const setLive = (text: string) => {
    const node = h.doc.getElementById('live');
    if (node) node.textContent = text;
  };
  const merge = (u: Any) => {
    const byId = new Map(snap.messages.map((m: Any, i: number) => [m.id, i]));
    for (const m of u.messages) {
      const i = byId.get(m.id) as number | undefined;
      if (i === undefined) snap.messages.push(m);
      else snap.messages[i] = m;
    }
    snap.older = u.older;
    if (u.verify) snap.verify = u.verify;
    if (u.witnessed) snap.witnessed = u.witnessed;
    redraw?.(u.messages);
  };

  const receipt = (r: Any, extra = '') =>
    r
      ? el(
          'span',
          { class: 'receipt', title: `call-log line sha256 ${r.line_sha256}` },
          `seq ${r.seq} · ${r.at}${extra}`,
        )
      : '–';
  const row = (m: Any) => {
    const s = m.status;
    const state = s ? s.state : 'no genuine send receipt';
    return el(
      'tr',
      { 'data-id': m.id, class: `state-${s ? s.state : 'none'}` },
      el('td', {}, link(`#/message/${encodeURIComponent(m.id)}`, m.sent_at, { class: 'message' })),
      el('td', {}, `${m.from} → ${m.to}`),
      el('td', {}, link(`#/thread/${encodeURIComponent(m.thread ?? m.id)}`, `…${String(m.thread ?? m.id).slice(-8)}`)),
      el('td', { class: 'body' }, m.body.length > 300 ? `${m.body.slice(0, 300)}…` : m.body),
      el('td', { class: 'state' }, state),
      el('td', {}, s ? receipt(s.stored) : '–'),
      el('td', {}, s ? receipt(s.read) : '–'),
      el(
        'td',
        {},
        s
          ? receipt(s.acknowledged, s.acknowledged?.reply !== undefined ? ` · reply: ${s.acknowledged.reply}` : '')
          : '–',
      ),
    );
  };
  /** The messages table, newest first; kept current by `redraw`. */
  const messages = (keep: (m: Any) => boolean) => {
    const head = ['sent at', 'from → to', 'thread', 'message', 'state', 'stored (sent)', 'read', 'acknowledged'];
    const body = el('tbody', {}, ...snap.messages.filter(keep).reverse().map(row));
    const update = (changed: Any[]) => {
      for (const m of changed) {
        if (!keep(m)) continue;
        const old = [...body.children].find((tr: Any) => tr.getAttribute('data-id') === m.id);
        if (old) old.replaceWith(row(m));
        else body.prepend(row(m));
      }
    };
    return {
      node: el(
        'div',
        { class: 'scroll' },
        el('table', { class: 'messages' }, el('thead', {}, el('tr', {}, ...head.map((x) => el('th', {}, x)))), body),
      ),
      update,
    };
  };

  const verdict = () => {
    const v = snap.verify;
    const box = el('div', { id: 'verify' });
    const witnesses = v.witnesses.length ? `, requiring a checkpoint cosigned by ${v.witnesses.join(', ')}` : '';
    box.append(
      el(
        'p',
        { class: v.ok ? 'ok' : 'error', id: 'verdict' },
        `${v.ok ? 'valid' : 'invalid'}: ${v.calls} call receipts, ${v.messages} messages, key ${v.key.kid} (${v.key.source})${witnesses}${v.ok ? '' : `, ${v.problems.length} problem(s)`}.`,
      ),
    );
    if (v.problems.length)
      box.append(
        table(
          ['code', 'where', 'what'],
          v.problems.map((p: Any) => [p.code, `${p.file}:${p.line}`, p.message]),
          { class: 'problems' },
        ),
      );
    for (const w of v.warnings) box.append(el('p', { class: 'warn' }, `warning: ${w}`));
    box.append(
      el(
        'p',
        { class: 'caption' },
        `witness mailbox verify's own checks (hash chain, every receipt's signature, inboxes and cursors against the log), taken at ${v.at}.`,
      ),
    );
    return box;
  };
  const witnessed = () => {
    const box = el('div', { id: 'witnessed' });
    if (!snap.witnessed.length) {
      box.append(
        el(
          'p',
          { class: 'caption' },
          'No witness has answered: the servers were not started with --witness URL --witness-key VKEY.',
        ),
      );
      return box;
    }
    const rows = snap.witnessed.map((w: Any) => [
      w.witness,
      w.checkpoint ? String(w.checkpoint.size) : '–',
      w.checkpoint ? w.checkpoint.witnessed_at : w.problem,
      w.checkpoint ? w.checkpoint.from : '',
      w.last
        ? w.last.ok
          ? `cosigned size ${w.last.size} at ${w.last.at}`
          : `${w.last.status === undefined ? 'unreachable' : `refused (${w.last.status})`} at ${w.last.at}: ${w.last.message}`
        : '–',
    ]);
    box.append(
      table(['witness', 'cosigned size', 'witnessed at', 'from', 'last answer'], rows, { class: 'witnessed' }),
    );
    return box;
  };
  const threads = () => {
    const by = new Map<string, Any[]>();
    for (const m of snap.messages) by.set(m.thread ?? m.id, [...(by.get(m.thread ?? m.id) ?? []), m]);
    const items = [...by].map(([id, ms]) =>
      el(
        'li',
        {},
        link(`#/thread/${encodeURIComponent(id)}`, `…${id.slice(-8)}`),
        ` ${[...new Set(ms.flatMap((m: Any) => [m.from, m.to]))].join(', ')}: ${ms.length} message${ms.length > 1 ? 's' : ''}, last ${ms[ms.length - 1].sent_at}`,
      ),
    );
    return el('ul', { class: 'threads', id: 'threads' }, ...items);
  };
  const header = () =>
    el(
      'div',
      {},
      el('h2', {}, `Mailbox ${snap.id} (${snap.store})`),
      el(
        'p',
        { class: 'caption', id: 'live' },
        snap.live
          ? h.live('/api/events')
            ? 'connecting…'
            : ''
          : 'a snapshot (witness view bundle): not followed; open the folder with witness view to watch it live',
      ),
    );

  const mailbox = async () => {
    await load();
    const table_ = messages(() => true);
    const parts = { verify: verdict(), witnessed: witnessed(), threads: threads() };
    const older = el(
      'p',
      { class: 'caption', id: 'older' },
      snap.older ? `${snap.older} older messages are not shown.` : '',
    );
    const box = el(
      'div',
      {},
      header(),
      el('h3', {}, 'Verification'),
      parts.verify,
      el('h3', {}, 'Newest witnessed checkpoint'),
      parts.witnessed,
    );
    box.append(
      el('h3', {}, 'Agents'),
      table(
        ['agent', 'description', 'registered', 'sent', 'received'],
        snap.agents.map((a: Any) => [
          a.name,
          a.description ?? '',
          a.created,
          snap.messages.filter((m: Any) => m.from === a.name).length,
          snap.messages.filter((m: Any) => m.to === a.name).length,
        ]),
        { class: 'agents' },
      ),
    );
    box.append(el('h3', {}, 'Threads'), parts.threads, el('h3', {}, 'Messages, newest first'), table_.node, older);
    box.append(
      el(
        'p',
        { class: 'caption' },
        "Each state with the signed call-log receipt that proves it (its seq and time; hover for the SHA-256 of its line): stored when the send receipt was written, read when its recipient fetched it (a read receipt is its delivery), acknowledged with the recipient's ack_message and reply. Derived as message_status derives them.",
      ),
    );
    redraw = (changed) => {
      table_.update(changed);
      const next = { verify: verdict(), witnessed: witnessed(), threads: threads() };
      for (const k of ['verify', 'witnessed', 'threads'] as const) parts[k].replaceWith(next[k]);
      Object.assign(parts, next);
      older.textContent = snap.older ? `${snap.older} older messages are not shown.` : '';
    };
    return box;
  };

  const thread = async (parts: string[]) => {
    await load();
    const id = decodeURIComponent(parts[1] ?? '');
    const t = messages((m) => (m.thread ?? m.id) === id);
    redraw = t.update;
    return el(
      'div',
      {},
      el('p', {}, link('#/', '← the mailbox')),
      header(),
      el('h3', {}, `Thread …${id.slice(-8)}`),
      t.node,
    );
  };

  const message = async (parts: string[]) => {
    await load();
    const id = decodeURIComponent(parts[1] ?? '');
    const draw = () => {
      const m = snap.messages.find((x: Any) => x.id === id);
      if (!m)
        return el('p', { class: 'error', role: 'alert' }, `No message ${id} among the ${snap.messages.length} shown.`);
      const s = m.status;
      const box = el(
        'div',
        { class: 'message' },
        el('h3', {}, `${m.id}: ${m.from} → ${m.to}`),
        el('pre', { class: 'body' }, m.body),
      );
      if (!s)
        box.append(
          el(
            'p',
            { class: 'error' },
            'No genuine send receipt stores this message: witness mailbox verify reports it (orphan or forged).',
          ),
        );
      else
        for (const name of ['stored', 'read', 'acknowledged']) {
          const r = s[name];
          box.append(el('h4', {}, `${name}${r ? '' : ': not yet'}`));
          if (r)
            box.append(
              table(
                ['', ''],
                [
                  ['at', r.at],
                  ['receipt seq', r.seq],
                  ['line sha256', r.line_sha256],
                  ...(r.reply !== undefined ? [['reply', r.reply]] : []),
                  ['line', r.line ?? '(not shown: the receipt names other messages too)'],
                ],
                { class: `receipt ${name}` },
              ),
            );
        }
      return box;
    };
    const holder = el('div', {}, draw());
    redraw = () => holder.replaceChildren(draw());
    return el('div', {}, el('p', {}, link('#/', '← the mailbox')), holder);
  };

  return { mailbox, thread, message };
}
