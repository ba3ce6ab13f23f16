/**
 * @module
 * The child agent's task store: the SDK's `TaskStore` on a durable store
 * (task-store/engine.ts) — a SQLite file by default, PostgreSQL for agent processes
 * on several machines, or SQLite in memory. Three changes to what the SDK stores:
 * a stored task never keeps a grant's credential (`cosign_token` is dropped from the
 * delegation metadata of every message it holds, so `GetTask` and `ListTasks` — open
 * to whoever reaches the agent — cannot hand it out; a failed delegation's grant stays
 * usable for the child only); a stored artifact keeps only its own evidence, not the
 * chunk receipts, checkpoint and final receipt a streamed answer's events carried (the
 * SDK merges each appended chunk's metadata into the artifact, which would leave the last
 * chunk's receipt and the last checkpoint there: evidence of one event that nothing in
 * the stored task can be checked against — the stream lives in the recording of whoever
 * watched it); and a `ListTasks` page says as its `pageSize` how many
 * tasks it holds (the A2A TCK's reading of "the page size used for this response";
 * the SDK gives the size asked for, 50 even for an empty page).
 */
import type { Artifact, ListTasksRequest, ListTasksResponse, Message, Task } from '@a2a-js/sdk';
import { resolveUserScope, type ServerCallContext, type TaskStore } from '@a2a-js/sdk/server';
import { isPostgresUrl } from '../attest/postgres.js';
import { DELEGATION_KEY } from './metadata.js';
import { CHUNK_KEY, STREAM_CHECKPOINT_KEY, STREAM_FINAL_KEY } from './stream.js';
import { type Scope, TaskStoreEngine } from './task-store/engine.js';
import { openSqliteTaskStore } from './task-store/sqlite.js';

/** The `--task-store` value that keeps tasks in memory only, for as long as the agent runs. */
export const IN_MEMORY = ':memory:';

export class ChildTaskStore implements TaskStore {
  readonly #engine: TaskStoreEngine;

  private constructor(engine: TaskStoreEngine) {
    this.#engine = engine;
  }

  /**
   * Opens the store at `location` (a SQLite file path, `:memory:`, or a `postgres://`
   * URL), creating its table, and fails the tasks of agent processes that are gone.
   */
  static async open(location: string = IN_MEMORY): Promise<ChildTaskStore> {
    const driver = isPostgresUrl(location)
      ? await (await import('./task-store/postgres.js')).openPostgresTaskStore(location)
      : openSqliteTaskStore(location);
    const engine = new TaskStoreEngine(driver);
    try {
      await engine.sweep();
    } catch (error) {
      await engine.close();
      throw error;
    }
    return new ChildTaskStore(engine);
  }

  save(task: Task, context: ServerCallContext): Promise<void> {
    return this.#engine.save(_scope(context), _asStored(task));
  }

  load(taskId: string, context: ServerCallContext): Promise<Task | undefined> {
    return this.#engine.load(_scope(context), taskId);
  }

  async list(params: ListTasksRequest, context: ServerCallContext): Promise<ListTasksResponse> {
    const page = await this.#engine.list(_scope(context), params);
    return { ...page, pageSize: page.tasks.length };
  }

  close(): Promise<void> {
    return this.#engine.close();
  }
}

/** The SDK's own scoping (InMemoryTaskStore's): the tenant, and the user the call is made as. */
function _scope(context: ServerCallContext): Scope {
  return { tenant: context.tenant ?? '', owner: resolveUserScope(context) };
}

function _asStored(task: Task): Task {
  const status = task.status?.message ? { ...task.status, message: _redact(task.status.message) } : task.status;
  return { ...task, history: task.history.map(_redact), status, artifacts: task.artifacts.map(_withoutStreamKeys) };
}

const _STREAM_KEYS: readonly string[] = [CHUNK_KEY, STREAM_CHECKPOINT_KEY, STREAM_FINAL_KEY];

function _withoutStreamKeys(artifact: Artifact): Artifact {
  const metadata = artifact.metadata;
  if (!metadata || !_STREAM_KEYS.some((key) => key in metadata)) return artifact;
  return {
    ...artifact,
    metadata: Object.fromEntries(Object.entries(metadata).filter(([k]) => !_STREAM_KEYS.includes(k))),
  };
}

function _redact(message: Message): Message {
  const delegation = message.metadata?.[DELEGATION_KEY] as Record<string, unknown> | undefined;
  if (typeof delegation !== 'object' || delegation === null || !('cosign_token' in delegation)) return message;
  const { cosign_token: _dropped, ...kept } = delegation;
  return { ...message, metadata: { ...message.metadata, [DELEGATION_KEY]: kept } };
}
