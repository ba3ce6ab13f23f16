/**
 * @module
 * The SDK's `DefaultRequestHandler` with one rule of this agent added: one message per
 * task. A task answers the message that started it and takes no other (it never asks
 * for input), so a SendMessage naming a task that is still running is refused with
 * UnsupportedOperationError instead of starting a second execution on the running
 * task's event bus — which the SDK would close when that second execution returned,
 * cutting the first off from its caller. An unknown or finished task is the SDK's to
 * answer (TaskNotFoundError; UnsupportedOperationError, A2A v1.0 §3.1.1).
 *
 * It also tells the executor which requests asked for a stream (`isStreamed`): a
 * SendStreamingMessage's answer goes out chunk by chunk with chunk receipts
 * (stream-release.ts). A stream's context id names its checkpoints' origin, so such a
 * request must give one of 1–128 of `A-Za-z0-9._:-` (a UUID; the agent's own are), or
 * none; anything else is refused before a task starts.
 */
import type { AgentCard, Message, SendMessageRequest, StreamResponse, Task } from '@a2a-js/sdk';
import { RequestMalformedError, UnsupportedOperationError } from '@a2a-js/sdk/errors';
import {
  type AgentExecutor,
  DefaultRequestHandler,
  type RequestContext,
  type ServerCallContext,
  type TaskStore,
} from '@a2a-js/sdk/server';
import { StreamRefSchema } from '../attest/stream/index.js';
import { isTerminal } from './task-state.js';

/** The calls that asked for a stream, by their call context (one per request), shared by the handler and the executor. */
export class StreamedRequests {
  readonly #calls = new WeakSet<ServerCallContext>();

  add(context: ServerCallContext): void {
    this.#calls.add(context);
  }

  /** Did the request that started this execution ask for a stream? */
  isStreamed(ctx: RequestContext): boolean {
    return this.#calls.has(ctx.context);
  }
}

export class ChildRequestHandler extends DefaultRequestHandler {
  readonly #store: TaskStore;

  readonly #streamed: StreamedRequests;

  constructor(card: AgentCard, store: TaskStore, executor: AgentExecutor, streamed = new StreamedRequests()) {
    super(card, store, executor);
    this.#store = store;
    this.#streamed = streamed;
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
    const contextId = params.message?.contextId;
    if (contextId && !StreamRefSchema.shape.session.safeParse(contextId).success)
      throw new RequestMalformedError(
        `A streamed answer's chunk receipts name its context: contextId ${JSON.stringify(contextId.slice(0, 140))} must be 1–128 letters, digits or ._:- (a UUID), or left out for the agent to choose.`,
      );
    this.#streamed.add(context);
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
