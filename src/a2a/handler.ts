/**
 * @module
 * The SDK's `DefaultRequestHandler` with one rule of this agent added: one message per
 * task. A task answers the message that started it and takes no other (it never asks
 * for input), so a SendMessage naming a task that is still running is refused with
 * UnsupportedOperationError instead of starting a second execution on the running
 * task's event bus — which the SDK would close when that second execution returned,
 * cutting the first off from its caller. An unknown or finished task is the SDK's to
 * answer (TaskNotFoundError; UnsupportedOperationError, A2A v1.0 §3.1.1).
 */
import type { AgentCard, Message, SendMessageRequest, StreamResponse, Task } from '@a2a-js/sdk';
import { UnsupportedOperationError } from '@a2a-js/sdk/errors';
import { type AgentExecutor, DefaultRequestHandler, type ServerCallContext, type TaskStore } from '@a2a-js/sdk/server';
import { isTerminal } from './task-state.js';

export class ChildRequestHandler extends DefaultRequestHandler {
  readonly #store: TaskStore;

  constructor(card: AgentCard, store: TaskStore, executor: AgentExecutor) {
    super(card, store, executor);
    this.#store = store;
  }

  override async sendMessage(params: SendMessageRequest, context: ServerCallContext): Promise<Message | Task> {
    await this.#oneMessagePerTask(params, context);
    return super.sendMessage(params, context);
  }

  override async *sendMessageStream(
    params: SendMessageRequest,
    context: ServerCallContext,
  ): AsyncGenerator<StreamResponse, void, undefined> {
    await this.#oneMessagePerTask(params, context);
    yield* super.sendMessageStream(params, context);
  }

  async #oneMessagePerTask(params: SendMessageRequest, context: ServerCallContext): Promise<void> {
    const taskId = params.message?.taskId;
    if (!taskId) return;
    const task = await this.#store.load(taskId, context);
    if (task && !isTerminal(task.status?.state))
      throw new UnsupportedOperationError(
        `Task ${taskId} is still working and takes no further message: this agent answers one message per task. Wait for it (GetTask), cancel it (CancelTask), or send a new message without taskId.`,
      );
  }
}
