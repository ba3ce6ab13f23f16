/**
 * @module
 * What the child agent says about a task's state, written once for the executor, the
 * task store and the parent: which states are final (A2A v1.0 §3.1.1: a task in one of them takes no
 * further message and never changes again), which ones a parent stops following at
 * (`isSettled`), and the one shape of a failed task — a
 * status message saying no result was released, with `{code, message}` under ERROR_KEY
 * in the status message's metadata and in the task's (docs/a2a.md, "Wire format").
 */
import { randomUUID } from 'node:crypto';
import { type Message, Role, TaskState, type TaskStatus } from '@a2a-js/sdk';
import type { TaskRef } from './artifact.js';
import { ERROR_KEY } from './metadata.js';

/** COMPLETED, FAILED, CANCELED and REJECTED: the terminal states of A2A v1.0 §3.1.1. */
export const TERMINAL_STATES: ReadonlySet<TaskState> = new Set([
  TaskState.TASK_STATE_COMPLETED,
  TaskState.TASK_STATE_FAILED,
  TaskState.TASK_STATE_CANCELED,
  TaskState.TASK_STATE_REJECTED,
]);

export function isTerminal(state: TaskState | undefined): boolean {
  return state !== undefined && TERMINAL_STATES.has(state);
}

/**
 * Terminal, or waiting for input or authorisation (A2A v1.0 §3.1.1's interrupted
 * states): where a parent stops following a task, since a delegation gives no more input.
 */
export function isSettled(state: TaskState | undefined): boolean {
  return (
    isTerminal(state) || state === TaskState.TASK_STATE_INPUT_REQUIRED || state === TaskState.TASK_STATE_AUTH_REQUIRED
  );
}

/** A message from the agent with one text part. */
export function agentMessage(ids: TaskRef, text: string, metadata: Record<string, unknown> = {}): Message {
  return textMessage(Role.ROLE_AGENT, ids, text, metadata);
}

/** A message with one text part (no media type: A2A v0.3 text parts carry none, so both versions read the same part). */
export function textMessage(role: Role, ids: TaskRef, text: string, metadata: Record<string, unknown> = {}): Message {
  return {
    messageId: randomUUID(),
    contextId: ids.contextId,
    taskId: ids.taskId,
    role,
    parts: [{ content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: '' }],
    metadata,
    extensions: [],
    referenceTaskIds: [],
  };
}

/** The `{code, message}` a failed task carries under ERROR_KEY. */
export interface TaskError {
  code: string;
  message: string;
}

/** A failed status and the task metadata that goes with it: why nothing was released. */
export function failure(ids: TaskRef, error: TaskError): { status: TaskStatus; metadata: Record<string, unknown> } {
  const metadata = { [ERROR_KEY]: { code: error.code, message: error.message } };
  return {
    status: {
      state: TaskState.TASK_STATE_FAILED,
      message: agentMessage(ids, `No result was released: ${error.message}`, metadata),
      timestamp: new Date().toISOString(),
    },
    metadata,
  };
}
