/**
 * @module
 * The child agent's task store: the SDK's `InMemoryTaskStore` behind two changes.
 * A stored task never keeps a grant's credential: `cosign_token` is dropped from the
 * delegation metadata of every message it holds (history and status), so `GetTask`
 * and `ListTasks` — open to whoever reaches the agent — cannot hand it out; a failed
 * delegation's grant stays usable for the child only. And a `ListTasks` page says as
 * its `pageSize` how many tasks it holds (the A2A TCK's reading of "the page size used
 * for this response"; the SDK gives the size asked for, 50 even for an empty page).
 */
import type { Message, Task } from '@a2a-js/sdk';
import { InMemoryTaskStore, type ServerCallContext, type TaskStore } from '@a2a-js/sdk/server';
import { DELEGATION_KEY } from './metadata.js';

export class ChildTaskStore implements TaskStore {
  readonly #inner = new InMemoryTaskStore();

  save(task: Task, context: ServerCallContext): Promise<void> {
    return this.#inner.save(_withoutCredentials(task), context);
  }

  load(taskId: string, context: ServerCallContext): Promise<Task | undefined> {
    return this.#inner.load(taskId, context);
  }

  async list(params: Parameters<TaskStore['list']>[0], context: ServerCallContext): ReturnType<TaskStore['list']> {
    const page = await this.#inner.list(params, context);
    return { ...page, pageSize: page.tasks.length };
  }
}

function _withoutCredentials(task: Task): Task {
  const status = task.status?.message ? { ...task.status, message: _redact(task.status.message) } : task.status;
  return { ...task, history: task.history.map(_redact), status };
}

function _redact(message: Message): Message {
  const delegation = message.metadata?.[DELEGATION_KEY] as Record<string, unknown> | undefined;
  if (typeof delegation !== 'object' || delegation === null || !('cosign_token' in delegation)) return message;
  const { cosign_token: _dropped, ...kept } = delegation;
  return { ...message, metadata: { ...message.metadata, [DELEGATION_KEY]: kept } };
}
