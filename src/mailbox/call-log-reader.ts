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
import { closeSync, constants, existsSync, fstatSync, openSync, readSync } from 'node:fs';
import { join } from 'node:path';
import type { Pool } from 'pg';
import { openPool } from '../attest/postgres.js';
import { callLeaf } from './checkpoint.js';
import type { MailboxConfig } from './config.js';
import { mailboxDatabaseUrl } from './store/postgres/db.js';
import { openMailboxDatabase, sqlitePath } from './store/sqlite/file.js';
import { LOG } from './store/jsonl/files.js';

export interface CallLogRead {
  /** Leaf hashes of the lines stored since the last read (from the first line when `rewound`). */
  leaves: Buffer[];
  /** The log no longer holds the last line read before: it was cut or rolled back; `leaves` start at its first line. */
  rewound: boolean;
}

export interface CallLogReader {
  read(): Promise<CallLogRead>;
  close(): Promise<void>;
}

/** Rows a SQL read takes at a time. */
const PAGE = 5000;

/** The call log's reader for each store kind (store-kinds.ts picks one). */
export const jsonlCallLogReader = (dir: string): CallLogReader => _jsonlReader(join(dir, LOG));
export const sqliteCallLogReader = (dir: string): CallLogReader => _sqlReader(_sqlite(dir));
export const postgresCallLogReader = async (config: MailboxConfig): Promise<CallLogReader> =>
  _sqlReader(await _postgres(config));

interface _Rows {
  /** Rows with seq ≥ `from`, in order, at most PAGE. */
  page(from: number): Promise<Array<{ seq: number; text: string }>>;
  close(): Promise<void>;
}

function _sqlReader(rows: _Rows): CallLogReader {
  let last: { seq: number; leaf: Buffer } | undefined;
  return {
    async read() {
      const leaves: Buffer[] = [];
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
            leaves.length = 0;
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
      return { leaves, rewound };
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

/** JSONL: by byte offset; the last line read is re-read to see it is still there. */
function _jsonlReader(path: string): CallLogReader {
  let last: { start: number; end: number; leaf: Buffer } | undefined;
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
        return { leaves: [], rewound };
      }
      try {
        let rewound = false;
        if (last && !_sameLine(fd, last)) {
          rewound = true;
          last = undefined;
        }
        const leaves: Buffer[] = [];
        const size = fstatSync(fd).size;
        let offset = last?.end ?? 0;
        let pending = Buffer.alloc(0);
        const chunk = Buffer.allocUnsafe(1024 * 1024);
        while (offset + pending.length < size) {
          const n = readSync(
            fd,
            chunk,
            0,
            Math.min(chunk.length, size - offset - pending.length),
            offset + pending.length,
          );
          if (n === 0) break;
          let data = Buffer.concat([pending, chunk.subarray(0, n)]);
          for (let nl = data.indexOf(10); nl >= 0; nl = data.indexOf(10)) {
            const line = data.subarray(0, nl);
            if (line.length > 0) {
              const leaf = callLeaf(line.toString('utf8'));
              leaves.push(leaf);
              last = { start: offset, end: offset + nl + 1, leaf };
            }
            offset += nl + 1;
            data = data.subarray(nl + 1);
          }
          pending = Buffer.from(data); // a torn or still-being-written last line: read again next time
        }
        return { leaves, rewound };
      } finally {
        closeSync(fd);
      }
    },
    close: async () => {},
  };
}

function _sameLine(fd: number, line: { start: number; end: number; leaf: Buffer }): boolean {
  const bytes = Buffer.alloc(line.end - line.start);
  if (readSync(fd, bytes, 0, bytes.length, line.start) !== bytes.length || bytes[bytes.length - 1] !== 10) return false;
  return callLeaf(bytes.subarray(0, -1).toString('utf8')).equals(line.leaf);
}
