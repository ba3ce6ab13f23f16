/**
 * @module
 * Reads the call log as stored, from where the last read stopped: what the witness
 * submitter (witnessing.ts) hashes into its tree. It reads the store, not the
 * server's own appends, so with several servers on one PostgreSQL mailbox each sees
 * every line, in the log's order. Each read first checks that the last line it read is
 * still there, unchanged: when it is not (the log was cut, or its database restored
 * from an earlier dump), the read starts over from the first line and says so, and
 * the tree is rebuilt from what is stored now — which is what the witnesses will then
 * refuse. Lines are the leaves `mailboxCheckpoint` and verify hash: the exact text,
 * empty lines skipped, nothing from a torn (unterminated) last line.
 */
import { isUtf8 } from 'node:buffer';
import { closeSync, constants, existsSync, fstatSync, openSync, readSync } from 'node:fs';
import { join } from 'node:path';
import type { Pool } from 'pg';
import { openPool } from '../attest/postgres.js';
import { sha256 } from '../core/hash.js';
import { callLeaf } from './checkpoint.js';
import type { MailboxConfig } from './config.js';
import { mailboxDatabaseUrl } from './store/postgres/db.js';
import { openMailboxDatabase, sqlitePath } from './store/sqlite/file.js';
import { LOG } from './store/jsonl/files.js';

export interface CallLogRead {
  /**
   * Leaf hashes of the lines stored since the last read (from the first line when
   * `rewound`), 32 bytes each, back to back: one buffer however long the log, not an
   * object per line (a server reads its whole log when it starts).
   */
  leaves: Buffer;
  /** The log no longer holds the last line read before: it was cut or rolled back; `leaves` start at its first line. */
  rewound: boolean;
}

export interface CallLogReader {
  read(): Promise<CallLogRead>;
  close(): Promise<void>;
}

/** Rows a SQL read takes at a time. */
const PAGE = 5000;
/** Bytes a JSONL read takes at a time (a longer line grows the buffer). */
const READ_CHUNK = 1024 * 1024;

/** The call log's reader for each store kind (store-kinds.ts picks one). */
export const jsonlCallLogReader = (dir: string, options: { chunkBytes?: number } = {}): CallLogReader =>
  _jsonlReader(join(dir, LOG), options.chunkBytes ?? READ_CHUNK);
export const sqliteCallLogReader = (dir: string): CallLogReader => _sqlReader(_sqlite(dir));
export const postgresCallLogReader = async (config: MailboxConfig): Promise<CallLogReader> =>
  _sqlReader(await _postgres(config));

interface _Rows {
  /** Rows with seq ≥ `from`, in order, at most PAGE. */
  page(from: number): Promise<Array<{ seq: number; text: string }>>;
  close(): Promise<void>;
}

/** Leaf hashes packed 32 bytes apiece in one growing buffer. */
class _Leaves {
  #bytes = Buffer.allocUnsafe(32 * 1024);
  #length = 0;
  push(leaf: Uint8Array): void {
    if (this.#length + 32 > this.#bytes.length) {
      const grown = Buffer.allocUnsafe(2 * this.#bytes.length);
      this.#bytes.copy(grown, 0, 0, this.#length);
      this.#bytes = grown;
    }
    this.#bytes.set(leaf, this.#length);
    this.#length += 32;
  }
  clear(): void {
    this.#length = 0;
  }
  packed(): Buffer {
    return this.#bytes.subarray(0, this.#length);
  }
}

function _sqlReader(rows: _Rows): CallLogReader {
  let last: { seq: number; leaf: Buffer } | undefined;
  return {
    async read() {
      const leaves = new _Leaves();
      let rewound = false;
      let from = last?.seq ?? 0;
      for (;;) {
        const page = await rows.page(from);
        let start = 0;
        if (last && from === last.seq) {
          const first = page[0];
          if (!first || first.seq !== last.seq || !callLeaf(first.text).equals(last.leaf)) {
            if (rewound) break; // cannot happen twice in one read; stop rather than loop
            rewound = true;
            last = undefined;
            leaves.clear();
            from = 0;
            continue;
          }
          start = 1;
        }
        for (let i = start; i < page.length; i++) {
          const row = page[i] as { seq: number; text: string };
          if (row.text === '') continue;
          const leaf = callLeaf(row.text);
          leaves.push(leaf);
          last = { seq: row.seq, leaf };
        }
        if (page.length < PAGE) break;
        from = last?.seq ?? from;
      }
      return { leaves: leaves.packed(), rewound };
    },
    close: () => rows.close(),
  };
}

async function _postgres(config: MailboxConfig): Promise<_Rows> {
  const pool: Pool = await openPool(mailboxDatabaseUrl(config), {
    purpose: 'mailbox database (witness submitter)',
    max: 1,
  });
  return {
    async page(from) {
      const { rows } = await pool.query<{ seq: string; text: string }>(
        'SELECT seq, text FROM mailbox_calls WHERE seq >= $1 ORDER BY seq LIMIT $2',
        [from, PAGE],
      );
      return rows.map((r) => ({ seq: Number(r.seq), text: r.text }));
    },
    close: () => pool.end(),
  };
}

/** SQLite: opened at the first read that finds the file (a store creates it when it first opens). */
function _sqlite(dir: string): _Rows {
  let db: ReturnType<typeof openMailboxDatabase> | undefined;
  let select: { all(...params: unknown[]): unknown[] } | undefined;
  return {
    async page(from) {
      if (!select) {
        if (!existsSync(sqlitePath(dir))) return [];
        db = openMailboxDatabase(dir, { readonly: true });
        select = db.prepare('SELECT seq, text FROM calls WHERE seq >= ? ORDER BY seq LIMIT ?');
      }
      return (select.all(from, PAGE) as Array<{ seq: number; text: unknown }>).map((r) => ({
        seq: r.seq,
        text: String(r.text),
      }));
    },
    close: async () => {
      db?.close();
    },
  };
}

/**
 * JSONL: by byte offset; the last line read is re-read to see it is still there. Lines
 * are hashed where they were read: the byte before each (its predecessor's newline,
 * or the buffer's spare first byte) briefly holds RFC 6962's 0x00 leaf prefix, so a
 * line costs one SHA-256 and no copy, string or Buffer of its own.
 */
function _jsonlReader(path: string, chunkBytes: number): CallLogReader {
  let last: { start: number; end: number; leaf: Buffer } | undefined;
  let buf = Buffer.allocUnsafe(1 + chunkBytes);
  return {
    async read() {
      let fd: number;
      try {
        fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
        // No call yet: the log is empty (a log that was read and is now gone was cut).
        const rewound = last !== undefined;
        last = undefined;
        return { leaves: Buffer.alloc(0), rewound };
      }
      try {
        let rewound = false;
        if (last && !_sameLine(fd, last)) {
          rewound = true;
          last = undefined;
        }
        const leaves = new _Leaves();
        const size = fstatSync(fd).size;
        let offset = last?.end ?? 0; // the file offset of buf[1]
        let held = 0; // bytes of an unfinished line at buf[1 .. 1 + held)
        while (offset + held < size) {
          if (1 + held === buf.length) {
            const grown = Buffer.allocUnsafe(2 * buf.length);
            buf.copy(grown, 0, 0, 1 + held);
            buf = grown;
          }
          const n = readSync(fd, buf, 1 + held, Math.min(buf.length - 1 - held, size - offset - held), offset + held);
          if (n === 0) break;
          const end = 1 + held + n;
          let from = 1;
          for (let nl = buf.indexOf(10, from); nl >= 0 && nl < end; nl = buf.indexOf(10, from)) {
            if (nl > from) {
              const leaf = _leafInPlace(buf, from, nl);
              leaves.push(leaf);
              last = { start: offset + from - 1, end: offset + nl, leaf };
            }
            from = nl + 1;
          }
          offset += from - 1;
          held = end - from;
          buf.copyWithin(1, from, end); // a torn or still-being-written last line: read again next time
        }
        return { leaves: leaves.packed(), rewound };
      } finally {
        closeSync(fd);
      }
    },
    close: async () => {},
  };
}

/** `callLeaf` of the line at buf[from .. to), hashed in place (see _jsonlReader); buf[from - 1] is restored. */
function _leafInPlace(buf: Buffer, from: number, to: number): Buffer {
  const line = buf.subarray(from, to);
  // Not UTF-8 (a damaged line): the leaf is of its text, as verify and checkpoints read it.
  if (!isUtf8(line)) return callLeaf(line.toString('utf8'));
  const before = buf[from - 1] as number;
  buf[from - 1] = 0x00;
  const leaf = sha256(buf.subarray(from - 1, to));
  buf[from - 1] = before;
  return leaf;
}

function _sameLine(fd: number, line: { start: number; end: number; leaf: Buffer }): boolean {
  const bytes = Buffer.alloc(line.end - line.start);
  if (readSync(fd, bytes, 0, bytes.length, line.start) !== bytes.length || bytes[bytes.length - 1] !== 10) return false;
  return callLeaf(bytes.subarray(0, -1).toString('utf8')).equals(line.leaf);
}
