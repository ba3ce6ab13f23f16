/**
 * @module
 * What a parent does with a child's answer to SendMessage (docs/a2a.md, "Wire format"):
 * a Task is followed to a terminal state (SubscribeToTask while it runs, then GetTask
 * for the whole of it); a task that did not complete is refused with the reason it
 * carries under ERROR_KEY; a completed task is accepted only when every artifact's
 * evidence verifies against that artifact's bytes (artifact.ts). The older answer, a
 * Message whose one text part carries the evidence in the message's metadata, is
 * verified as before, so children that answer that way still work.
 */
import { type Message, Task, TaskState, taskStateToJSON } from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';
import type { Receipt } from '../attest/receipt.js';
import { type VerifyOptions, verifyEvidence } from '../attest/verify.js';
import { WitnessError } from '../core/errors.js';
import { type TaskProblem, verifyTaskArtifacts, type WireArtifact } from './artifact.js';
import { type ChildTimings, ChildTimingsSchema, ERROR_KEY, EVIDENCE_KEY, TIMINGS_KEY } from './metadata.js';
import { isTerminal } from './task-state.js';

/** One artifact as released: what its receipt covers (artifact.ts) and the path that covers it. */
export interface ArtifactRecord {
  task_id: string;
  context_id: string;
  artifact_id: string;
  /** Every part as A2A v1.0 JSON. */
  parts: unknown[];
  evidence: { path: Receipt[] };
}

export interface VerifiedAnswer {
  /** What the user reads: the text of every artifact, in order (or the message's text). */
  text: string;
  /** The first artifact's path (or the message's), as parsed by the verifier. */
  evidence: { path: Receipt[] };
  /** Every artifact of a Task answer; empty for a Message answer. */
  artifacts: ArtifactRecord[];
  verdict: { ok: boolean; reasons: TaskProblem[] };
  timings: ChildTimings;
}

const NO_TIMINGS: ChildTimings = { tool_ms: 0, model_ms: 0, sign_ms: 0, cosign_ms: 0, cpu_ms: 0 };

/** Follows a Task answer until it is terminal; a Message is already final. */
export async function followAnswer(client: Client, answer: Message | Task): Promise<Message | Task> {
  if (!_isTask(answer) || isTerminal(answer.status?.state)) return answer;
  const now = await client.getTask({ tenant: '', id: answer.id, historyLength: 0 });
  if (isTerminal(now.status?.state)) return now;
  try {
    for await (const event of client.resubscribeTask({ tenant: '', id: answer.id })) {
      const p = event.payload;
      const state = p?.$case === 'statusUpdate' ? p.value.status?.state : undefined;
      if (isTerminal(state)) break;
    }
  } catch {
    // The task ended between the answer and the subscription (a finished task refuses one): GetTask says how.
  }
  return client.getTask({ tenant: '', id: answer.id, historyLength: 0 });
}

/** Verifies a final answer; throws when it is no result at all (a task that failed, or no evidence). */
export async function verifyAnswer(
  answer: Message | Task,
  childUrl: string,
  options: VerifyOptions,
): Promise<VerifiedAnswer> {
  if (_isTask(answer)) return _verifyTask(answer, childUrl, options);
  const parts = answer.parts;
  const first = parts[0]?.content;
  if (parts.length !== 1 || first?.$case !== 'text')
    throw new WitnessError('UNAVAILABLE', `The child at ${childUrl} answered without exactly one text part.`);
  const evidence = answer.metadata?.[EVIDENCE_KEY];
  if (evidence === undefined)
    throw new WitnessError(
      'REFUSED',
      `The child at ${childUrl} answered without ${EVIDENCE_KEY}: an unattested result is not accepted.`,
    );
  const result = await verifyEvidence(evidence, Buffer.from(first.value, 'utf8'), options);
  return {
    text: first.value,
    evidence: { path: result.path ?? [] },
    artifacts: [],
    verdict: { ok: result.ok, reasons: result.reasons },
    timings: _timings(answer.metadata),
  };
}

async function _verifyTask(task: Task, childUrl: string, options: VerifyOptions): Promise<VerifiedAnswer> {
  const state = task.status?.state;
  if (state !== TaskState.TASK_STATE_COMPLETED) {
    const error = (task.metadata?.[ERROR_KEY] ?? task.status?.message?.metadata?.[ERROR_KEY]) as
      | { message?: unknown }
      | undefined;
    const status = task.status?.message?.parts[0]?.content;
    const why =
      typeof error?.message === 'string'
        ? error.message
        : status?.$case === 'text'
          ? status.value
          : `the task ended in ${taskStateToJSON(state ?? TaskState.TASK_STATE_UNSPECIFIED)}`;
    throw new WitnessError(
      'UNAVAILABLE',
      `The child at ${childUrl} returned no result (task ${task.id} ${_ended(state)}): ${why}`,
    );
  }
  const wire = Task.toJSON(task) as { artifacts?: WireArtifact[] };
  const result = await verifyTaskArtifacts(wire, options);
  const artifacts = (wire.artifacts ?? []).map((a, i) => ({
    task_id: task.id,
    context_id: task.contextId,
    artifact_id: a.artifactId,
    parts: a.parts,
    evidence: { path: result.artifacts[i]?.path ?? [] },
  }));
  return {
    text: result.text,
    evidence: artifacts[0]?.evidence ?? { path: [] },
    artifacts,
    verdict: { ok: result.ok, reasons: result.problems },
    timings: _timings(task.metadata),
  };
}

function _ended(state: TaskState | undefined): string {
  if (state === TaskState.TASK_STATE_FAILED) return 'failed';
  if (state === TaskState.TASK_STATE_CANCELED) return 'was cancelled';
  if (state === TaskState.TASK_STATE_REJECTED) return 'was rejected';
  return `is in ${taskStateToJSON(state ?? TaskState.TASK_STATE_UNSPECIFIED)}`;
}

function _timings(metadata: Record<string, unknown> | undefined): ChildTimings {
  const timings = ChildTimingsSchema.safeParse(metadata?.[TIMINGS_KEY]);
  return timings.success ? timings.data : NO_TIMINGS;
}

function _isTask(answer: Message | Task): answer is Task {
  return 'status' in answer && 'id' in answer;
}
