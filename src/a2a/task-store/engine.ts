/**
 * @module
 * The child agent's durable task store, written once over two small SQL drivers
 * (sqlite.ts, postgres.ts): one row per task, keyed by the SDK's scope (tenant, owner)
 * and the task id, holding the task as A2A v1.0 JSON, its state, the time of its
 * status and — while it is not finished — the agent process running it.
 *
 * Two rules make the store honest across processes and restarts:
 * - A task in a terminal state is final: a later write of it is not kept (the upsert's
 *   WHERE), so a task cancelled by one process never shows an artifact a slower one
 *   releases afterwards.
 * - A task whose process is gone (killed, crashed: the driver knows how to tell) can
 *   never finish; it is reported FAILED with ERROR_KEY code INTERRUPTED, written back
 *   with a compare-and-set on its runner so a live process's update is never undone.
 *   Stores are swept when opened and before every list; a load checks its one task.
 *
 * SQL is written with `?` placeholders; the PostgreSQL driver numbers them.
 */
import { type ListTasksRequest, type ListTasksResponse, Task, TaskState, taskStateToJSON } from '@a2a-js/sdk';
import { RequestMalformedError } from '@a2a-js/sdk/errors';
import { failure, TERMINAL_STATES } from '../task-state.js';

/** What the engine needs of a database. */
export interface TaskStoreDriver {
  /** This process as it marks the tasks it runs (driver-specific, compared as text). */
  readonly runner: string;
  /** Runs a statement; resolves with the number of rows it changed. */
  run(sql: string, params: readonly unknown[]): Promise<number>;
  all<T>(sql: string, params: readonly unknown[]): Promise<T[]>;
  /** Which of `runners` are known to have stopped. A runner the driver cannot judge is not gone. */
  gone(runners: readonly string[]): Promise<Set<string>>;
  close(): Promise<void>;
}

/** The table, the same in both databases (`text` and `bigint` mean the same in each). */
export const TASK_TABLE_SQL = `CREATE TABLE IF NOT EXISTS witness_a2a_tasks (
  tenant text NOT NULL, owner text NOT NULL, id text NOT NULL, context_id text NOT NULL,
  state text NOT NULL, updated_ms bigint NOT NULL, runner text, task text NOT NULL,
  PRIMARY KEY (tenant, owner, id));
CREATE INDEX IF NOT EXISTS witness_a2a_tasks_recent ON witness_a2a_tasks (tenant, owner, updated_ms DESC, id DESC);
CREATE INDEX IF NOT EXISTS witness_a2a_tasks_running ON witness_a2a_tasks (runner) WHERE runner IS NOT NULL`;

/** Whose tasks a call sees: the SDK's scope of the caller. */
export interface Scope {
  tenant: string;
  owner: string;
}

interface _Row {
  tenant: string;
  owner: string;
  id: string;
  state: string;
  runner: string | null;
  task: string;
  updated_ms: number | string;
}

const TERMINAL_NAMES = [...TERMINAL_STATES].map((s) => `'${taskStateToJSON(s)}'`).join(', ');
const COLUMNS = 'tenant, owner, id, state, runner, task, updated_ms';

export class TaskStoreEngine {
  readonly #db: TaskStoreDriver;

  constructor(driver: TaskStoreDriver) {
    this.#db = driver;
  }

  /** Fails the tasks of every process that is gone; returns how many. */
  async sweep(): Promise<number> {
    const rows = await this.#db.all<_Row>(
      `SELECT ${COLUMNS} FROM witness_a2a_tasks WHERE runner IS NOT NULL AND runner <> ?`,
      [this.#db.runner],
    );
    return (await this.#recover(rows)).size;
  }

  async save(scope: Scope, task: Task): Promise<void> {
    const state = task.status?.state ?? TaskState.TASK_STATE_UNSPECIFIED;
    const runner = TERMINAL_STATES.has(state) ? null : this.#db.runner;
    await this.#db.run(
      `INSERT INTO witness_a2a_tasks (tenant, owner, id, context_id, state, updated_ms, runner, task)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (tenant, owner, id) DO UPDATE SET context_id = excluded.context_id, state = excluded.state,
         updated_ms = excluded.updated_ms, runner = excluded.runner, task = excluded.task
       WHERE witness_a2a_tasks.state NOT IN (${TERMINAL_NAMES})`,
      [
        scope.tenant,
        scope.owner,
        task.id,
        task.contextId,
        taskStateToJSON(state),
        _statusMs(task),
        runner,
        JSON.stringify(Task.toJSON(task)),
      ],
    );
  }

  async load(scope: Scope, id: string): Promise<Task | undefined> {
    const [row] = await this.#db.all<_Row>(
      `SELECT ${COLUMNS} FROM witness_a2a_tasks WHERE tenant = ? AND owner = ? AND id = ?`,
      [scope.tenant, scope.owner, id],
    );
    if (!row) return undefined;
    return (await this.#recover([row])).get(row.id) ?? _task(row);
  }

  async list(scope: Scope, params: ListTasksRequest): Promise<ListTasksResponse> {
    await this.sweep();
    const where = ['tenant = ?', 'owner = ?'];
    const args: unknown[] = [scope.tenant, scope.owner];
    const add = (clause: string, value: unknown) => {
      where.push(clause);
      args.push(value);
    };
    if (params.contextId) add('context_id = ?', params.contextId);
    if (params.status !== undefined && params.status !== TaskState.TASK_STATE_UNSPECIFIED)
      add('state = ?', taskStateToJSON(params.status));
    if (params.statusTimestampAfter) add('updated_ms > ?', Date.parse(params.statusTimestampAfter));
    const filter = where.join(' AND ');
    const [count] = await this.#db.all<{ n: number | string }>(
      `SELECT COUNT(*) AS n FROM witness_a2a_tasks WHERE ${filter}`,
      args,
    );
    const pageSize = params.pageSize ?? 50;
    const page = [...args];
    let after = '';
    if (params.pageToken) {
      const cursor = _decodeToken(params.pageToken);
      after = ' AND (updated_ms < ? OR (updated_ms = ? AND id < ?))';
      page.push(cursor.ms, cursor.ms, cursor.id);
    }
    const rows = await this.#db.all<_Row>(
      `SELECT ${COLUMNS} FROM witness_a2a_tasks WHERE ${filter}${after} ORDER BY updated_ms DESC, id DESC LIMIT ?`,
      [...page, pageSize + 1],
    );
    const shown = rows.slice(0, pageSize);
    const last = shown.at(-1);
    return {
      tasks: shown.map((row) => {
        const task = _task(row);
        return params.includeArtifacts ? task : { ...task, artifacts: [] };
      }),
      nextPageToken: rows.length > pageSize && last ? _encodeToken(Number(last.updated_ms), last.id) : '',
      pageSize,
      totalSize: Number(count?.n ?? 0),
    };
  }

  close(): Promise<void> {
    return this.#db.close();
  }

  /** The rows among `rows` whose runner is gone, failed and written back; keyed by task id. */
  async #recover(rows: readonly _Row[]): Promise<Map<string, Task>> {
    const running = rows.filter((r) => r.runner !== null && r.runner !== this.#db.runner);
    const failed = new Map<string, Task>();
    if (running.length === 0) return failed;
    const gone = await this.#db.gone([...new Set(running.map((r) => r.runner as string))]);
    for (const row of running) {
      if (!gone.has(row.runner as string)) continue;
      const task = _task(row);
      const { status, metadata } = failure(
        { taskId: task.id, contextId: task.contextId },
        {
          code: 'INTERRUPTED',
          message: `the agent process running task ${task.id} stopped before it finished (killed, crashed or restarted); nothing was released for it.`,
        },
      );
      const ended: Task = { ...task, status, metadata: { ...task.metadata, ...metadata } };
      if (status.message) ended.history = [...ended.history, status.message];
      // Compare-and-set: only the row as read, still that runner's and not finished.
      await this.#db.run(
        `UPDATE witness_a2a_tasks SET state = ?, updated_ms = ?, runner = NULL, task = ?
         WHERE tenant = ? AND owner = ? AND id = ? AND runner = ? AND state = ?`,
        [
          taskStateToJSON(TaskState.TASK_STATE_FAILED),
          _statusMs(ended),
          JSON.stringify(Task.toJSON(ended)),
          row.tenant,
          row.owner,
          row.id,
          row.runner,
          row.state,
        ],
      );
      failed.set(row.id, ended);
    }
    return failed;
  }
}

function _task(row: _Row): Task {
  return Task.fromJSON(JSON.parse(row.task));
}

function _statusMs(task: Task): number {
  const ms = Date.parse(task.status?.timestamp ?? '');
  return Number.isNaN(ms) ? 0 : ms;
}

/** A page token: where the last page ended, `MS:ID` in base64url (opaque to clients). */
function _encodeToken(ms: number, id: string): string {
  return Buffer.from(`${ms}:${id}`, 'utf8').toString('base64url');
}

function _decodeToken(token: string): { ms: number; id: string } {
  const text = Buffer.from(token, 'base64url').toString('utf8');
  const m = /^(\d{1,16}):(.+)$/s.exec(text);
  if (!m || _encodeToken(Number(m[1]), m[2] as string) !== token)
    throw new RequestMalformedError(
      'Invalid page token: give back a nextPageToken exactly as a ListTasks page gave it.',
    );
  return { ms: Number(m[1]), id: m[2] as string };
}
