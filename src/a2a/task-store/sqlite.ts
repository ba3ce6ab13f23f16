/**
 * @module
 * The task store's SQLite driver: one file shared by the agent processes of one
 * machine (WAL; a writer waits for another's lock up to the busy timeout), or
 * `:memory:` for an agent that keeps its tasks only while it runs. A process marks the
 * tasks it runs with its identity (pid, host, boot, start time: core/process-liveness.ts),
 * so a process that finds a task of a pid that is gone, or another process now, knows
 * the task will never finish. A task run on another host is never judged gone from
 * here: a SQLite store is for one machine (PostgreSQL spans machines).
 *
 * `synchronous = NORMAL`: a committed task survives the agent being killed or crashing
 * (the write is in the WAL file); a power loss can lose the last commits.
 */
import Database from 'better-sqlite3';
import { WitnessError } from '../../core/errors.js';
import { ownerIsGone, type ProcessIdentity, THIS_PROCESS } from '../../core/process-liveness.js';
import { retryWhileBusy } from '../../core/sqlite-busy.js';
import { TASK_TABLE_SQL, type TaskStoreDriver } from './engine.js';

const BUSY_TIMEOUT_MS = 5000;

export function openSqliteTaskStore(path: string): TaskStoreDriver {
  let db: Database.Database;
  try {
    db = new Database(path, { timeout: BUSY_TIMEOUT_MS });
    retryWhileBusy(() => {
      db.pragma('journal_mode = WAL');
      db.pragma('synchronous = NORMAL');
      db.exec(TASK_TABLE_SQL);
    }, BUSY_TIMEOUT_MS);
  } catch (cause) {
    throw new WitnessError(
      'IO',
      `Cannot open the task store ${path}: ${(cause as Error).message}. Give --task-store a writable SQLite file, or a postgres:// URL.`,
      { cause },
    );
  }
  const statements = new Map<string, Database.Statement>();
  const prepared = (sql: string) => {
    const known = statements.get(sql);
    if (known) return known;
    const statement = db.prepare(sql);
    statements.set(sql, statement);
    return statement;
  };
  return {
    runner: JSON.stringify(THIS_PROCESS),
    async run(sql, params) {
      return prepared(sql).run(...params).changes;
    },
    async all<T>(sql: string, params: readonly unknown[]) {
      return prepared(sql).all(...params) as T[];
    },
    async gone(runners) {
      return new Set(
        runners.filter((runner) => {
          const who = _identity(runner);
          return who !== undefined && ownerIsGone(who);
        }),
      );
    },
    async close() {
      db.close();
    },
  };
}

/** A runner as this driver wrote it; undefined for anything else (never judged gone). */
function _identity(runner: string): ProcessIdentity | undefined {
  try {
    const value = JSON.parse(runner) as Partial<ProcessIdentity>;
    return typeof value.pid === 'number' && typeof value.host === 'string' ? (value as ProcessIdentity) : undefined;
  } catch {
    return undefined;
  }
}
