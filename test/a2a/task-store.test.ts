// The child agent's durable task store (task-store.ts over task-store/engine.ts), one
// suite run against each driver: a SQLite file and a fresh PostgreSQL database. Tasks
// are the SDK's own Task objects, the scope is the SDK's (tenant, user).
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { type ListTasksRequest, type Task, TaskState } from '@a2a-js/sdk';
import { ServerCallContext } from '@a2a-js/sdk/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DELEGATION_KEY, ERROR_KEY } from '../../src/a2a/metadata.js';
import { ChildTaskStore } from '../../src/a2a/task-store.js';
import { TaskStoreEngine } from '../../src/a2a/task-store/engine.js';
import { openSqliteTaskStore } from '../../src/a2a/task-store/sqlite.js';
import { bootId, processStartTime } from '../../src/core/process-liveness.js';
import { agentMessage } from '../../src/a2a/task-state.js';
import { freshDatabase } from '../attest/postgres.js';

const dir = mkdtempSync(join(tmpdir(), 'witness-task-store-'));
let database: Awaited<ReturnType<typeof freshDatabase>>;
beforeAll(async () => {
  database = await freshDatabase('a2a_tasks');
});
afterAll(async () => {
  await database?.drop();
  rmSync(dir, { recursive: true, force: true });
});

const context = new ServerCallContext();
let n = 0;

const listing = (asked: Partial<ListTasksRequest> = {}): ListTasksRequest => ({
  tenant: '',
  contextId: '',
  status: TaskState.TASK_STATE_UNSPECIFIED,
  pageToken: '',
  statusTimestampAfter: undefined,
  ...asked,
});

function task(state: TaskState, extra: Partial<Task> = {}): Task {
  n++;
  const ids = { taskId: `task-${String(n).padStart(4, '0')}`, contextId: extra.contextId ?? 'ctx-a' };
  return {
    id: ids.taskId,
    contextId: ids.contextId,
    status: { state, message: undefined, timestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, n)).toISOString() },
    artifacts: [],
    history: [agentMessage(ids, 'hello')],
    metadata: {},
    ...extra,
  };
}

/** A runner identity of a process that ran on this machine and is gone now. */
async function goneProcess(): Promise<string> {
  const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
  await once(child, 'spawn');
  const identity = { pid: child.pid, host: hostname(), boot: bootId(), start: processStartTime(child.pid!) ?? '' };
  child.kill('SIGKILL');
  await once(child, 'exit');
  return JSON.stringify(identity);
}

const kinds: Array<[string, () => string]> = [
  ['a SQLite file', () => join(dir, `tasks-${n++}.sqlite`)],
  ['PostgreSQL', () => database.url],
];

describe.each(kinds)('the task store on %s', (_kind, location) => {
  let where: string;
  let store: ChildTaskStore;
  beforeAll(async () => {
    where = location();
    store = await ChildTaskStore.open(where);
  });
  afterAll(() => store?.close());

  it('keeps a task across a close and a reopen, as it was saved', async () => {
    const t = task(TaskState.TASK_STATE_COMPLETED, {
      artifacts: [
        {
          artifactId: 'a-1',
          name: 'answer',
          description: '',
          parts: [{ content: { $case: 'text', value: 'ok' }, metadata: undefined, filename: '', mediaType: '' }],
          metadata: { k: [1, 2] },
          extensions: [],
        },
      ],
    });
    await store.save(t, context);
    const again = await ChildTaskStore.open(where);
    try {
      expect(await again.load(t.id, context)).toEqual(t);
    } finally {
      await again.close();
    }
  });

  it('never keeps the cosign_token of a delegation, and keeps the rest of it', async () => {
    const t = task(TaskState.TASK_STATE_WORKING);
    t.history[0]!.metadata = { [DELEGATION_KEY]: { task_id: 'd-1', construction: 'dag', cosign_token: 'secret' } };
    await store.save(t, context);
    expect((await store.load(t.id, context))?.history[0]?.metadata).toEqual({
      [DELEGATION_KEY]: { task_id: 'd-1', construction: 'dag' },
    });
  });

  it('keeps a task in a terminal state as it is: a later write of it is not kept', async () => {
    const t = task(TaskState.TASK_STATE_CANCELED);
    await store.save(t, context);
    await store.save({ ...t, status: { ...t.status!, state: TaskState.TASK_STATE_COMPLETED } }, context);
    expect((await store.load(t.id, context))?.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
  });

  it("shows a task only in its caller's scope", async () => {
    const t = task(TaskState.TASK_STATE_COMPLETED);
    await store.save(t, context);
    expect(await store.load(t.id, new ServerCallContext({ tenant: 'other' }))).toBeUndefined();
  });

  it('lists newest status first, page by page, with the total, filters and without artifacts unless asked', async () => {
    const scope = new ServerCallContext({ tenant: `list-${n}` });
    const saved = [
      task(TaskState.TASK_STATE_COMPLETED, { contextId: 'ctx-x' }),
      task(TaskState.TASK_STATE_FAILED, { contextId: 'ctx-x' }),
      task(TaskState.TASK_STATE_COMPLETED, { contextId: 'ctx-y' }),
      task(TaskState.TASK_STATE_COMPLETED, { contextId: 'ctx-y' }),
      task(TaskState.TASK_STATE_CANCELED, { contextId: 'ctx-y' }),
    ];
    saved[0]!.artifacts = [{ artifactId: 'a', name: '', description: '', parts: [], metadata: {}, extensions: [] }];
    for (const t of saved) await store.save(t, scope);
    const ids: string[] = [];
    let pageToken = '';
    do {
      const page = await store.list(listing({ pageSize: 2, pageToken }), scope);
      expect([page.totalSize, page.pageSize]).toEqual([5, page.tasks.length]);
      ids.push(...page.tasks.map((t) => t.id));
      pageToken = page.nextPageToken;
    } while (pageToken);
    expect(ids).toEqual(saved.map((t) => t.id).reverse());
    const y = await store.list(listing({ contextId: 'ctx-y', status: TaskState.TASK_STATE_COMPLETED }), scope);
    expect(y.tasks.map((t) => t.id)).toEqual([saved[3]!.id, saved[2]!.id]);
    const after = await store.list(listing({ statusTimestampAfter: saved[2]!.status!.timestamp }), scope);
    expect(after.tasks.map((t) => t.id)).toEqual([saved[4]!.id, saved[3]!.id]);
    const x = await store.list(listing({ contextId: 'ctx-x' }), scope);
    expect(x.tasks.map((t) => t.artifacts.length)).toEqual([0, 0]);
    const withArtifacts = await store.list(listing({ contextId: 'ctx-x', includeArtifacts: true }), scope);
    expect(withArtifacts.tasks.map((t) => t.artifacts.length)).toEqual([0, 1]);
    await expect(store.list(listing({ pageToken: 'not-a-token' }), scope)).rejects.toThrow(/Invalid page token/);
  });

  it('reports a task whose process is gone as FAILED with ERROR_KEY code INTERRUPTED, in GetTask and ListTasks', async () => {
    const t = task(TaskState.TASK_STATE_WORKING);
    if (where === database.url) {
      // Another agent process: its own connection and runner lock, gone when it closes.
      const other = await ChildTaskStore.open(where);
      await other.save(t, context);
      await other.close();
    } else {
      const driver = openSqliteTaskStore(where);
      const gone = await goneProcess();
      await new TaskStoreEngine({ ...driver, runner: gone }).save({ tenant: '', owner: 'unknown' }, t);
      await driver.close();
    }
    const loaded = await store.load(t.id, context);
    expect(loaded?.status?.state).toBe(TaskState.TASK_STATE_FAILED);
    expect(loaded?.metadata?.[ERROR_KEY]).toMatchObject({ code: 'INTERRUPTED' });
    expect(loaded?.status?.message?.metadata?.[ERROR_KEY]).toMatchObject({ code: 'INTERRUPTED' });
    const listed = await store.list(listing({ status: TaskState.TASK_STATE_FAILED }), context);
    expect(listed.tasks.map((x) => x.id)).toContain(t.id);
  });

  it('leaves the running task of a live process alone (on SQLite: this one; on PostgreSQL: another connection)', async () => {
    const t = task(TaskState.TASK_STATE_WORKING);
    const other = await ChildTaskStore.open(where);
    try {
      await other.save(t, context);
      expect((await store.load(t.id, context))?.status?.state).toBe(TaskState.TASK_STATE_WORKING);
      await store.list(listing(), context);
      expect((await other.load(t.id, context))?.status?.state).toBe(TaskState.TASK_STATE_WORKING);
    } finally {
      await other.close();
    }
  });
});
