/**
 * @module
 * The child agent's `AgentExecutor` (`@a2a-js/sdk`): every SendMessage becomes a Task
 * that goes SUBMITTED → WORKING → COMPLETED, FAILED or CANCELED. Never a Message: A2A
 * v1.0 §3.1.1 lets an agent answer with one, but no field of the request asks for it,
 * and §3.7 says results SHOULD be artifacts of a task. What the request does decide is
 * when SendMessage answers (§3.2.2, `configuration.returnImmediately`; the SDK applies
 * it): by default once the task is terminal, with `returnImmediately: true` at once,
 * SUBMITTED, to be followed with GetTask or SubscribeToTask. A completed task holds
 * one artifact, the answer, whose receipt path travels in the artifact's metadata
 * (release.ts, artifact.ts); the child's latency split is in the task's metadata under
 * TIMINGS_KEY. A failure — a malformed delegation, a tool or model error, a co-signer
 * that refuses or times out — is a FAILED task with ERROR_KEY and no artifact.
 *
 * Cancellation (CancelTask) stops a running task: once it is cancelled nothing is
 * signed or released for it, also when the cancel reached another agent process that
 * shares the task store (the store is asked just before signing). A task whose artifact
 * is already out cannot be cancelled any more (TaskNotCancelableError).
 *
 * A client that asked for a stream (SendStreamingMessage; `streamed` says which
 * requests did) gets the answer as chunk events of one artifact, each with its chunk
 * receipt, checkpoints and, on the last, the stream's final receipt and the artifact's
 * evidence (stream-release.ts); a SubscribeToTask of such a task gets the events still
 * to come. Any other request gets the artifact whole, in one event. Either way the
 * stored task holds the same artifact with the same evidence. Once the first chunk is
 * out the task is released: it can no longer be cancelled.
 */
import { type Artifact, TaskState } from '@a2a-js/sdk';
import {
  AgentEvent,
  type AgentExecutor,
  type ExecutionEventBus,
  type RequestContext,
  type TaskStore,
} from '@a2a-js/sdk/server';
import { WitnessError } from '../core/errors.js';
import type { TaskRef } from './artifact.js';
import { type ChildTimings, TIMINGS_KEY } from './metadata.js';
import { answerTask, type ReleaseSetup, releaseAnswer } from './release.js';
import { streamAnswer } from './stream-release.js';
import { failure, isTerminal } from './task-state.js';

interface _Running {
  ids: TaskRef;
  controller: AbortController;
  /** Set once the artifact is published: from then on the task completes, whatever is asked. */
  released: boolean;
}

/**
 * The executor of `witness a2a serve`; `store` is the agent's task store, read for a
 * cancel made elsewhere; `streamed` says whether a request asked for a stream.
 */
export function childExecutor(
  setup: ReleaseSetup,
  store: TaskStore,
  streamed: (ctx: RequestContext) => boolean = () => false,
): AgentExecutor {
  const running = new Map<string, _Running>();
  return {
    async execute(ctx: RequestContext, bus: ExecutionEventBus) {
      const ids: TaskRef = { taskId: ctx.taskId, contextId: ctx.contextId };
      const run: _Running = { ids, controller: new AbortController(), released: false };
      running.set(ctx.taskId, run);
      try {
        bus.publish(
          AgentEvent.task({
            id: ctx.taskId,
            contextId: ctx.contextId,
            status: _status(TaskState.TASK_STATE_SUBMITTED),
            artifacts: [],
            history: [ctx.userMessage],
            metadata: {},
          }),
        );
        bus.publish(AgentEvent.statusUpdate({ ...ids, status: _status(TaskState.TASK_STATE_WORKING), metadata: {} }));
        const mayRelease = async () => {
          if (run.controller.signal.aborted || isTerminal((await store.load(ctx.taskId, ctx.context))?.status?.state))
            throw new WitnessError('CANCELLED', `Task ${ctx.taskId} was cancelled before its answer was released.`);
        };
        const answered = await answerTask(setup, ctx);
        let timings: ChildTimings;
        if (streamed(ctx)) {
          await mayRelease();
          run.released = true;
          timings = await streamAnswer(setup, ids, answered, (artifact, chunk) =>
            _publishArtifact(bus, ids, artifact, chunk),
          );
        } else {
          const released = await releaseAnswer(setup, ids, answered, mayRelease);
          if (run.controller.signal.aborted) return; // signed, never released: cancelTask has said CANCELED
          run.released = true;
          _publishArtifact(bus, ids, released.artifact, { append: false, lastChunk: true });
          timings = released.timings;
        }
        bus.publish(
          AgentEvent.statusUpdate({
            ...ids,
            status: _status(TaskState.TASK_STATE_COMPLETED),
            metadata: { [TIMINGS_KEY]: timings },
          }),
        );
      } catch (error) {
        if (run.controller.signal.aborted) return;
        if (error instanceof WitnessError && error.code === 'CANCELLED') {
          // Cancelled by another process sharing the store: end this bus the same way.
          bus.publish(
            AgentEvent.statusUpdate({ ...ids, status: _status(TaskState.TASK_STATE_CANCELED), metadata: {} }),
          );
          return;
        }
        const code = error instanceof WitnessError ? error.code : 'INTERNAL';
        const { status, metadata } = failure(ids, { code, message: (error as Error).message });
        bus.publish(AgentEvent.statusUpdate({ ...ids, status, metadata }));
      } finally {
        running.delete(ctx.taskId);
      }
    },
    async cancelTask(taskId: string, bus: ExecutionEventBus) {
      const run = running.get(taskId);
      // Released already: the completion is on its way, and the SDK answers TaskNotCancelableError.
      if (run?.released) return;
      run?.controller.abort();
      const ids = run?.ids ?? { taskId, contextId: '' };
      bus.publish(AgentEvent.statusUpdate({ ...ids, status: _status(TaskState.TASK_STATE_CANCELED), metadata: {} }));
    },
  };
}

/** One update of an artifact: the whole of it (`append: false, lastChunk: true`) or, streamed, one chunk. */
function _publishArtifact(
  bus: ExecutionEventBus,
  ids: TaskRef,
  artifact: Artifact,
  chunk: { append: boolean; lastChunk: boolean },
): void {
  bus.publish(AgentEvent.artifactUpdate({ ...ids, artifact, ...chunk, metadata: {} }));
}

function _status(state: TaskState) {
  return { state, message: undefined, timestamp: new Date().toISOString() };
}
