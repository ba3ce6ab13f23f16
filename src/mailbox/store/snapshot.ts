/**
 * @module
 * What `witness mailbox verify` reads: every stored call-log line and message with
 * its position, from either store. Files are read a page at a time; a line too long
 * to hold as a string (store/lines.ts) is kept as a short note, which verify reports
 * as a corrupt line instead of failing on it.
 */
import { closeSync, existsSync, fstatSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { readConfig } from '../config.js';
import { openInside, READ } from './files.js';
import { scanLines } from './lines.js';
import { CAPPED_TEXT, sqlitePath } from './sqlite.js';
import { openMailboxDatabase } from './sqlite-file.js';
import type { StoreSnapshot } from './types.js';

export function readSnapshot(dir: string): StoreSnapshot {
  const config = readConfig(dir);
  return config.store === 'sqlite' ? _sqliteSnapshot(dir) : _jsonlSnapshot(dir);
}

const _tooLong = (bytes: number) => `<a line of ${bytes} bytes, too long to read>`;

function _jsonlSnapshot(dir: string): StoreSnapshot {
  const callsFile = join(dir, 'calls.jsonl');
  const calls = _lines(dir, 'calls.jsonl');
  const inboxDir = join(dir, 'inbox');
  const inboxes = existsSync(inboxDir)
    ? readdirSync(inboxDir)
        .filter((f) => f.endsWith('.jsonl'))
        .sort()
        .map((f) => {
          const read = _lines(dir, `inbox/${f}`);
          return { agent: f.slice(0, -'.jsonl'.length), file: join(inboxDir, f), lines: read.lines, tornTail: read.tornTail };
        })
    : [];
  return { kind: 'jsonl', calls: calls.lines.map((l) => ({ file: callsFile, ...l })), callsTornTail: calls.tornTail, inboxes };
}

/** Every non-empty line with its 1-based number; never through a link (that is an IO error naming the file). */
function _lines(dir: string, rel: string): { lines: Array<{ line: number; text: string }>; tornTail: boolean } {
  const fd = openInside(dir, rel, READ);
  if (fd === undefined) return { lines: [], tornTail: false };
  try {
    const lines: Array<{ line: number; text: string }> = [];
    let n = 0;
    const end = scanLines(fd, 0, ({ text, start, end: after }) => {
      n++;
      if (text !== '') lines.push({ line: n, text: text ?? _tooLong(after - start - 1) });
    });
    return { lines, tornTail: end < fstatSync(fd).size };
  } finally {
    closeSync(fd);
  }
}

function _sqliteSnapshot(dir: string): StoreSnapshot {
  const db = openMailboxDatabase(dir, { readonly: true });
  try {
    const file = sqlitePath(dir);
    const calls = (db.prepare(`SELECT seq, ${CAPPED_TEXT} AS text, octet_length(text) AS bytes FROM calls ORDER BY rowid`).all() as Array<{ text: string | null; bytes: number }>).map((r, i) => ({
      file: `${file}#calls`,
      line: i + 1,
      text: r.text ?? _tooLong(r.bytes),
    }));
    const rows = db.prepare(`SELECT pos, recipient, ${CAPPED_TEXT} AS text, octet_length(text) AS bytes FROM messages ORDER BY pos`).iterate() as Iterable<{ pos: number; recipient: string; text: string | null; bytes: number }>;
    const byAgent = new Map<string, StoreSnapshot['inboxes'][number]>();
    for (const r of rows) {
      let inbox = byAgent.get(r.recipient);
      if (!inbox) {
        inbox = { agent: r.recipient, file: `${file}#messages[${r.recipient}]`, lines: [], tornTail: false };
        byAgent.set(r.recipient, inbox);
      }
      inbox.lines.push({ line: r.pos, text: r.text ?? _tooLong(r.bytes) });
    }
    return { kind: 'sqlite', calls, callsTornTail: false, inboxes: [...byAgent.values()] };
  } finally {
    db.close();
  }
}
