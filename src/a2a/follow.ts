/**
 * @module
 * Following a child's answer to its end, for every parent (`witness a2a send`, send.ts;
 * `delegate()`, parent.ts). A Message is final. A Task is followed until it is settled —
 * terminal (A2A v1.0 §3.1.1), or waiting for input or authorisation that a delegation
 * will not give: with SubscribeToTask while it runs when the child's card declares
 * streaming (§3.1.6), then with GetTask, every 250 ms doubling to 2 s, for a child that
 * cannot stream or a subscription that ended early. The settled answer is handed on as
 * A2A v1.0 JSON (`wireAnswer`), the form the one check (answer.ts) and the delegation
 * record read.
 */
import { setTimeout as delay } from 'node:timers/promises';
import { Message, Task } from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';
import type { WireAnswer } from './answer.js';
import { type CardJson, declaresStreaming } from './card.js';
import { isSettled } from './task-state.js';

/** The child as the parent reaches it: the SDK client built from the card it verified. */
export interface FollowedChild {
  client: Client;
  card: CardJson;
}

/** `answer`, or the task it started once settled; `signal` stops the wait (its reason is thrown). */
export async function followAnswer(
  child: FollowedChild,
  answer: Message | Task,
  signal?: AbortSignal,
): Promise<Message | Task> {
  if ('messageId' in answer || isSettled(answer.status?.state)) return answer;
  // Asked once before subscribing: a task that settled meanwhile refuses a subscription.
  const now = await _get(child.client, answer.id, signal);
  if (isSettled(now.status?.state)) return now;
  if (declaresStreaming(child.card)) await _subscribe(child.client, answer.id, signal);
  return _poll(child.client, answer.id, signal);
}

/** The answer as A2A v1.0 JSON: `{message}`, or `{task}` without its history (it repeats the request, the grant's credential with it). */
export function wireAnswer(answer: Message | Task): WireAnswer {
  if ('messageId' in answer) return { message: Message.toJSON(answer) };
  const { history: _repeat, ...task } = Task.toJSON(answer) as Record<string, unknown>;
  return { task };
}

/** Until the task's stream shows it settled, or ends. */
async function _subscribe(client: Client, id: string, signal: AbortSignal | undefined): Promise<void> {
  try {
    for await (const event of client.resubscribeTask({ tenant: '', id }, { signal })) {
      const p = event.payload;
      const state = p?.$case === 'statusUpdate' || p?.$case === 'task' ? p.value.status?.state : undefined;
      if (isSettled(state)) return;
    }
  } catch (error) {
    if (signal?.aborted) throw error;
    // The task settled between GetTask and the subscription, or the stream broke:
    // GetTask says where the task is.
  }
}

async function _poll(client: Client, id: string, signal: AbortSignal | undefined): Promise<Task> {
  for (let wait = 250; ; wait = Math.min(2 * wait, 2000)) {
    const task = await _get(client, id, signal);
    if (isSettled(task.status?.state)) return task;
    await delay(wait, undefined, { signal });
  }
}

function _get(client: Client, id: string, signal: AbortSignal | undefined): Promise<Task> {
  return client.getTask({ tenant: '', id, historyLength: 0 }, { signal });
}
