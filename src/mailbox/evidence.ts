/**
 * @module
 * What `witness mailbox verify` reads, streamed: the call log's lines, every inbox
 * line grouped by recipient, and each agent's read cursor, for either store. Files
 * are read in 1 MiB chunks and never held whole, so a log or inbox of any size is
 * checked in bounded memory (a line longer than `MAX_LINE_BYTES` is reported as
 * such, never built); SQLite rows are iterated, PostgreSQL rows fetched a page at a
 * time through a cursor, never loaded all at once. Nothing
 * here follows a symbolic link: the server never writes one, so one is reported.
 */
import { closeSync, constants, existsSync, lstatSync, openSync, readdirSync, readSync } from 'node:fs';
import { join } from 'node:path';
import { MAX_LINE_BYTES } from './store/lines.js';
import { openMailboxDatabase, sqlitePath } from './store/sqlite/file.js';
import { WitnessError } from '../core/errors.js';
import { parseStrictJson } from '../core/strict-json.js';
import { type AgentEntry, type MailboxConfig, readAgents, type StoreKind } from './config.js';
import { storeKind } from './store-kinds.js';

export { MAX_LINE_BYTES } from './store/lines.js';
const CHUNK_BYTES = 1024 * 1024;

/** One line of evidence and where it is. */
export interface EvidenceLine {
  /** 1-based line number (a JSONL file) or row position (SQLite). */
  line: number;
  /** The text; absent when the line is longer than MAX_LINE_BYTES. */
  text?: string;
  /** Byte offset just past the line's newline (JSONL files). */
  end: number;
  /** An unterminated last line (an interrupted write). */
  torn?: boolean;
}

/** An inbox line, with the inbox it belongs to; lines of one inbox come together, in order. */
export interface InboxLine extends EvidenceLine {
  agent: string;
  file: string;
  /** SQL stores: the row's own id column, which lookups by id use; it must be the id its text (and receipt) names. */
  rowId?: string;
}

/** Where an agent's read cursor points: messages before it have been delivered. */
export interface Cursor {
  file: string;
  /** JSONL: byte offset in the inbox; SQLite: position of the last delivered row. */
  at: number;
  unit: 'byte' | 'row';
}

/** A file verify could not read as evidence (not a regular file, unparseable cursor). */
export interface Unreadable {
  file: string;
  why: string;
}

/** Read positions and the cursor records that are not readable. */
export interface Cursors {
  cursors: Map<string, Cursor>;
  unreadable: Unreadable[];
}

/** A SQL store's idempotency row: a pointer from (sender, key) to the keyed send it answers retries with. */
export interface IdempotencyRow {
  file: string;
  sender: string;
  key: string;
  id: string;
  recipient: string;
  sent_at: string;
}

/** What verify reads; a networked store's lines come asynchronously, a file's synchronously. */
export interface Evidence {
  kind: StoreKind;
  callsFile: string;
  calls(): Iterable<EvidenceLine> | AsyncIterable<EvidenceLine>;
  inboxLines(): Iterable<InboxLine> | AsyncIterable<InboxLine>;
  /** Every cursor, by agent, and the cursor records that are not readable. */
  cursors(): Cursors | Promise<Cursors>;
  /** SQL stores: the idempotency table (JSONL learns it from the log, and keeps nothing beside it). */
  idempotency?(): Iterable<IdempotencyRow> | AsyncIterable<IdempotencyRow>;
  /** Evidence files found unreadable while listing (a symlink, a folder). */
  unreadable: Unreadable[];
  /** The registered agents, from the same snapshot (for export). */
  agents(): AgentEntry[] | Promise<AgentEntry[]>;
  close(): void | Promise<void>;
}

/** The evidence of a mailbox, whichever store `config` names (PostgreSQL: one consistent snapshot of the database). */
export async function openEvidence(dir: string, config: MailboxConfig): Promise<Evidence> {
  return storeKind(config.store).evidence(dir, config);
}

/** The lines of a file, read in chunks; the last item is marked `torn` when it has no newline. */
export function* fileLines(path: string, maxLineBytes = MAX_LINE_BYTES): Generator<EvidenceLine> {
  const fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW);
  try {
    const chunk = Buffer.allocUnsafe(CHUNK_BYTES);
    const pending = new _Pending(maxLineBytes);
    let line = 0;
    let offset = 0;
    for (let n = readSync(fd, chunk, 0, CHUNK_BYTES, offset); n > 0; n = readSync(fd, chunk, 0, CHUNK_BYTES, offset)) {
      const view = chunk.subarray(0, n);
      let from = 0;
      for (let newline = view.indexOf(0x0a); newline >= 0; newline = view.indexOf(0x0a, from)) {
        pending.add(view.subarray(from, newline));
        line++;
        yield { line, end: offset + newline + 1, ...pending.take() };
        from = newline + 1;
      }
      pending.add(view.subarray(from));
      offset += n;
    }
    if (!pending.empty) yield { line: line + 1, end: offset, torn: true, ...pending.take() };
  } finally {
    closeSync(fd);
  }
}

/** The bytes of the line being read, dropped (but remembered as too long) past the limit. */
class _Pending {
  private parts: Buffer[] = [];
  private size = 0;
  private tooLong = false;

  constructor(private readonly limit: number) {}

  get empty(): boolean {
    return this.size === 0 && !this.tooLong;
  }

  add(bytes: Buffer): void {
    if (bytes.length === 0 || this.tooLong) return;
    if (this.size + bytes.length > this.limit) {
      [this.parts, this.size, this.tooLong] = [[], 0, true];
      return;
    }
    this.parts.push(Buffer.from(bytes)); // a copy: the chunk is reused
    this.size += bytes.length;
  }

  take(): { text?: string } {
    const out = this.tooLong ? {} : { text: Buffer.concat(this.parts, this.size).toString('utf8') };
    [this.parts, this.size, this.tooLong] = [[], 0, false];
    return out;
  }
}

export function jsonlEvidence(dir: string): Evidence {
  const callsFile = join(dir, 'calls.jsonl');
  const unreadable: Unreadable[] = [];
  const regular = (file: string, problems = unreadable) => {
    const stat = lstatSync(file, { throwIfNoEntry: false });
    if (stat === undefined) return false;
    if (stat.isFile()) return true;
    problems.push({
      file,
      why: `not a regular file (${stat.isSymbolicLink() ? 'a symbolic link' : 'a folder or device'}); the server writes only plain files`,
    });
    return false;
  };
  const listed = (sub: string, ext: string) =>
    existsSync(join(dir, sub))
      ? readdirSync(join(dir, sub))
          .filter((f) => f.endsWith(ext))
          .sort()
      : [];
  const inboxes = listed('inbox', '.jsonl').filter((f) => regular(join(dir, 'inbox', f)));
  const callsReadable = regular(callsFile);
  return {
    kind: 'jsonl',
    callsFile,
    unreadable,
    agents: () => readAgents(dir),
    calls: () => (callsReadable ? fileLines(callsFile) : []),
    *inboxLines() {
      for (const f of inboxes) {
        const file = join(dir, 'inbox', f);
        for (const l of fileLines(file)) yield { ...l, agent: f.slice(0, -'.jsonl'.length), file };
      }
    },
    cursors() {
      const cursors = new Map<string, Cursor>();
      const bad: Unreadable[] = [];
      for (const f of listed('cursors', '.json')) {
        const file = join(dir, 'cursors', f);
        if (!regular(file, bad)) continue;
        try {
          const text = [...fileLines(file)].map((l) => l.text ?? '').join('\n');
          cursors.set(f.slice(0, -'.json'.length), { file, at: _cursorOffset(text, file), unit: 'byte' });
        } catch (error) {
          bad.push({ file, why: (error as Error).message });
        }
      }
      return { cursors, unreadable: bad };
    },
    close() {},
  };
}

export function sqliteEvidence(dir: string): Evidence {
  const path = sqlitePath(dir);
  const db = openMailboxDatabase(dir, { readonly: true }); // never through a planted link
  return {
    kind: 'sqlite',
    callsFile: `${path}#calls`,
    unreadable: [],
    agents: () => readAgents(dir),
    *calls() {
      let line = 0;
      for (const row of db.prepare('SELECT text FROM calls ORDER BY rowid').iterate() as Iterable<{ text: unknown }>) {
        line++;
        yield { line, end: 0, text: String(row.text) };
      }
    },
    *inboxLines() {
      const rows = db
        .prepare('SELECT pos, id, recipient, text FROM messages ORDER BY recipient, pos')
        .iterate() as Iterable<{ pos: number; id: unknown; recipient: string; text: unknown }>;
      for (const row of rows)
        yield {
          agent: row.recipient,
          file: `${path}#messages[${row.recipient}]`,
          line: row.pos,
          end: 0,
          text: String(row.text),
          rowId: String(row.id),
        };
    },
    *idempotency() {
      for (const row of db
        .prepare('SELECT sender, key, id, recipient, sent_at FROM idempotency ORDER BY sender, key')
        .iterate() as Iterable<Omit<IdempotencyRow, 'file'>>) {
        yield { ...row, file: `${path}#idempotency` };
      }
    },
    cursors() {
      const cursors = new Map<string, Cursor>();
      for (const row of db.prepare('SELECT agent, pos FROM cursors').all() as Array<{ agent: string; pos: number }>) {
        cursors.set(row.agent, { file: `${path}#cursors[${row.agent}]`, at: row.pos, unit: 'row' });
      }
      return { cursors, unreadable: [] };
    },
    close: () => {
      db.close();
    },
  };
}

/** The byte offset a JSONL cursor file records; throws when the file is not a cursor. */
function _cursorOffset(text: string, file: string): number {
  const c = parseStrictJson(text, { what: file }) as { offset?: unknown } | null;
  if (typeof c !== 'object' || c === null || !Number.isSafeInteger(c.offset) || (c.offset as number) < 0)
    throw new WitnessError('CORRUPT', 'no whole, non-negative offset');
  return c.offset as number;
}
