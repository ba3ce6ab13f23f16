/**
 * @module
 * The parent's side of a streamed answer (docs/a2a.md §4, §5). `receiveStream` sends
 * SendStreamingMessage and builds the task from its events as they arrive (status
 * updates, artifacts replaced or appended), passing each text part on unverified and
 * recording every artifact update (stream.ts, `recordArtifactUpdate`): one recording
 * per artifact, in arrival order. `checkStreams` then checks what the parent was shown:
 * each recording with attest's `verifyStream` under the construction the parent asked
 * for (every chunk, once, in order, from this stream; the checkpoints; the final
 * receipt), that final receipt rooted at this delegation's task receipt and released by
 * this child, and the stream bound to the answer — the same task, context and artifact,
 * and exactly the parts the completed task's artifact holds. The answer itself is
 * checked by the one check of an answer (answer.ts); a streamed answer is accepted only
 * when both pass.
 */
import {
  type Artifact,
  type Message,
  type SendMessageRequest,
  type StreamResponse,
  type Task,
  TaskArtifactUpdateEvent,
} from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';
import type { StreamRef, StreamVerifyResult } from '../attest/stream/index.js';
import { StreamRecorder, verifyStream } from '../attest/stream/index.js';
import type { VerifyOptions } from '../attest/verify.js';
import { canonicalize } from '../core/canonical-json.js';
import { WitnessError } from '../core/errors.js';
import { problemWithin } from '../core/problem.js';
import {
  type AnswerCheck,
  type AnswerExpectation,
  type AnswerProblem,
  pathOriginProblems,
  verifyAnswer,
  type WireAnswer,
} from './answer.js';
import { type ArtifactUpdateJson as WireUpdate, recordArtifactUpdate, streamOfEvent, streamedParts } from './stream.js';

export interface ReceiveStreamOptions {
  signal?: AbortSignal;
  /** Each text part as it arrives, unverified. */
  onText?: (text: string) => void;
  /** Another recorder for a stream as it begins (a file written as events arrive, `recordStreamToFile`), if any. */
  alsoRecord?: (stream: StreamRef) => StreamRecorder | undefined;
}

export interface ReceivedStream {
  /** The task as its events built it (or the message the stream carried). */
  answer: Message | Task;
  /** Each streamed artifact's recording, its lines as values (`verifyStream` reads them), in the order the streams began. */
  recordings: Array<Array<Record<string, unknown>>>;
}

/** SendStreamingMessage: the answer as its events build it, every artifact update recorded. */
export async function receiveStream(
  client: Client,
  request: SendMessageRequest,
  options: ReceiveStreamOptions,
): Promise<ReceivedStream> {
  let task: Task | undefined;
  let message: Message | undefined;
  const recorders = new Map<string, StreamRecorder[]>();
  const shown = new Set<string>(); // artifacts whose text was passed on
  const show = (parts: Artifact['parts']) => {
    for (const part of parts) if (part.content?.$case === 'text') options.onText?.(part.content.value);
  };
  for await (const event of client.sendMessageStream(request, {
    signal: options.signal,
  }) as AsyncIterable<StreamResponse>) {
    const payload = event.payload;
    if (payload?.$case === 'message') {
      message = payload.value;
      show(message.parts);
    } else if (payload?.$case === 'task') {
      task = payload.value;
      for (const a of task.artifacts.filter((x) => !shown.has(x.artifactId))) {
        shown.add(a.artifactId);
        show(a.parts);
      }
    } else if (payload?.$case === 'statusUpdate') {
      const { taskId, contextId, status, metadata } = payload.value;
      // As the SDK keeps a task: an update's metadata merges into the task's (the child's timings ride there).
      const base = task ?? _emptyTask(taskId, contextId, undefined);
      task = { ...base, status, metadata: { ...base.metadata, ...metadata } };
    } else if (payload?.$case === 'artifactUpdate') {
      const update = payload.value;
      task = _withArtifact(task ?? _emptyTask(update.taskId, update.contextId, undefined), update);
      if (update.artifact) {
        shown.add(update.artifact.artifactId);
        _record(recorders, _wireUpdate(update), options.alsoRecord);
        show(update.artifact.parts);
      }
    }
  }
  const recordings = [...recorders.values()].map(([kept]) =>
    (kept as StreamRecorder).lines.map((l) => JSON.parse(l) as Record<string, unknown>),
  );
  if (task) return { answer: task, recordings };
  if (message) return { answer: message, recordings };
  throw new WitnessError('UNAVAILABLE', 'The stream ended without a message or a task.');
}

/**
 * The one check of an answer (answer.ts) and, when it was streamed, of its recordings
 * (`checkStreams`): valid only when both pass. The answer's nonces are consumed only
 * then — a stream that fails leaves them for the genuine answer.
 */
export async function verifyStreamedAnswer(
  answer: WireAnswer,
  recordings: readonly (string | readonly unknown[])[],
  expected: AnswerExpectation,
  options: Omit<VerifyOptions, 'construction'>,
): Promise<{ check: AnswerCheck; streams: StreamVerifyResult[] }> {
  if (recordings.length === 0) return { check: await verifyAnswer(answer, expected, options), streams: [] };
  const { nonceStore: _later, ...withoutNonces } = options;
  const streams = await checkStreams(recordings, answer, expected, withoutNonces);
  const check = await verifyAnswer(answer, expected, streams.ok ? options : withoutNonces);
  return {
    check: {
      ...check,
      ok: check.ok && streams.ok,
      problems: [...streams.problems, ...check.problems],
      signaturesChecked: check.signaturesChecked + streams.results.reduce((n, r) => n + r.signaturesChecked, 0),
    },
    streams: streams.results,
  };
}

export interface StreamsCheck {
  ok: boolean;
  /** Each problem with where: "stream of artifact a1, chunk 3". */
  problems: AnswerProblem[];
  /** Each recording's verdict, in order. */
  results: StreamVerifyResult[];
}

/**
 * Checks the recordings of a streamed answer against the answer (A2A v1.0 JSON) and
 * what the parent asked for. No nonce is consumed: the answer's own check consumes the
 * artifact receipt's, which stands for the same task and artifact.
 */
export async function checkStreams(
  recordings: readonly (string | readonly unknown[])[],
  answer: WireAnswer,
  expected: AnswerExpectation,
  options: Omit<VerifyOptions, 'construction' | 'nonceStore'>,
): Promise<StreamsCheck> {
  const problems: AnswerProblem[] = [];
  const results: StreamVerifyResult[] = [];
  for (const [i, recording] of recordings.entries()) {
    const result = await verifyStream(recording, { ...options, construction: expected.construction });
    results.push(result);
    const where = result.stream ? `stream of artifact ${result.stream.artifact}` : `stream ${i}`;
    problems.push(...result.problems.map((p) => problemWithin(where, p)));
    problems.push(...pathOriginProblems(result.path ?? [], expected, `${where}, final receipt`));
    problems.push(..._bindingProblems(result, answer, where));
  }
  return { ok: problems.length === 0, problems, results };
}

/** The stream is of the answer's task, context and artifact, and showed exactly that artifact's parts. */
function _bindingProblems(result: StreamVerifyResult, answer: WireAnswer, where: string): AnswerProblem[] {
  const stream = result.stream;
  if (!stream) return [];
  const mismatch = (message: string): AnswerProblem[] => [{ code: 'STREAM_MISMATCH', message, at: where }];
  if (!('task' in answer)) return mismatch('The answer is a message: the streamed artifact belongs to no task of it.');
  const task = answer.task as {
    id?: unknown;
    contextId?: unknown;
    artifacts?: Array<{ artifactId?: unknown; parts?: unknown }>;
  };
  if (task.id !== stream.task || (task.contextId ?? '') !== stream.session)
    return mismatch(
      `The stream is of task ${stream.task} in context ${stream.session}; the answer is task ${String(task.id)} in context ${String(task.contextId ?? '')}.`,
    );
  const artifact = task.artifacts?.find((a) => a.artifactId === stream.artifact);
  if (!artifact) return mismatch(`The task holds no artifact ${stream.artifact}, which was streamed.`);
  if (result.ok && !_sameParts(streamedParts(result.bytes).flat(), artifact.parts))
    return mismatch(`The task's artifact ${stream.artifact} holds other parts than the stream showed.`);
  return [];
}

function _sameParts(streamed: unknown[], stored: unknown): boolean {
  try {
    return canonicalize(streamed) === canonicalize(stored ?? []);
  } catch {
    return false;
  }
}

/** Records one artifact update in its stream's recording (and the extra recorder, if one was given for it). */
function _record(
  recorders: Map<string, StreamRecorder[]>,
  update: WireUpdate,
  alsoRecord: ReceiveStreamOptions['alsoRecord'],
): void {
  const id = update.artifact?.artifactId as string;
  let mine = recorders.get(id);
  if (!mine) {
    const stream = streamOfEvent(update);
    const extra = alsoRecord?.(stream);
    mine = [new StreamRecorder(stream), ...(extra ? [extra] : [])];
    recorders.set(id, mine);
  }
  for (const recorder of mine) recordArtifactUpdate(recorder, update);
}

/** The update as A2A v1.0 JSON, with its parts even when there are none (the JSON form leaves an empty list out). */
function _wireUpdate(update: TaskArtifactUpdateEvent): WireUpdate {
  const json = TaskArtifactUpdateEvent.toJSON(update) as WireUpdate;
  const artifact = json.artifact as NonNullable<WireUpdate['artifact']>;
  return { ...json, artifact: { ...artifact, artifactId: artifact.artifactId ?? '', parts: artifact.parts ?? [] } };
}

function _emptyTask(id: string, contextId: string, status: Task['status']): Task {
  return { id, contextId, status, artifacts: [], history: [], metadata: undefined };
}

/** The task with one artifact update applied: appended to the artifact of the same id, or replacing it. */
function _withArtifact(task: Task, update: TaskArtifactUpdateEvent): Task {
  const artifact = update.artifact;
  if (!artifact) return task;
  const i = task.artifacts.findIndex((a) => a.artifactId === artifact.artifactId);
  const before = task.artifacts[i];
  const merged: Artifact =
    update.append && before
      ? {
          ...before,
          parts: [...before.parts, ...artifact.parts],
          metadata: { ...before.metadata, ...artifact.metadata },
        }
      : artifact;
  const artifacts = [...task.artifacts];
  if (i >= 0) artifacts[i] = merged;
  else artifacts.push(merged);
  return { ...task, artifacts };
}
