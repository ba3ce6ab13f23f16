/**
 * @module
 * The parent's side of one delegation as a user runs it (`witness a2a send`, docs/a2a.md
 * §4): discover the child's Agent Card and verify it against the parent's own key
 * directory; sign the task as the root receipt (chain, dag); under dag record the grant
 * with the parent's co-signing service; send the task with the `@a2a-js/sdk` client and
 * follow the answer — a Message, or a Task followed until it is settled (follow.ts), sent
 * in the blocking form or as SendStreamingMessage, its text passed on as it arrives and
 * every chunk recorded (stream-answer.ts); then check every result (answer.ts) and, when
 * streamed, every recording with it, and return the verdict with the record
 * `witness verify` re-checks (delegation-record.ts).
 */
import { randomUUID } from 'node:crypto';
import type { Message, SendMessageRequest, Task } from '@a2a-js/sdk';
import type { KeyDirectory } from '../attest/key-directory.js';
import type { SigningKey } from '../attest/keys.js';
import type { NonceStore } from '../attest/nonce-store.js';
import { isoTime, type Receipt, receiptDigest } from '../attest/receipt.js';
import type { StreamVerifyResult } from '../attest/stream/index.js';
import { WitnessError } from '../core/errors.js';
import type { AnswerCheck, WireAnswer } from './answer.js';
import { declaresStreaming } from './card.js';
import { type Grant, STREAMED_GRANT_EDGES } from './cosigner.js';
import { DELEGATION_RECORD_TYPE, type DelegationRecord } from './delegation-record.js';
import { followAnswer, wireAnswer } from './follow.js';
import { type ReceiveStreamOptions, receiveStream, verifyStreamedAnswer } from './stream-answer.js';
import type { Condition } from './metadata.js';
import { type DiscoveredChild, delegationOf, delegationRequest, discoverChild, signTask } from './parent.js';

export interface SendTaskOptions {
  /** Your own key directory: it must trust the child's key (card and receipts) and, under chain and dag, yours. */
  directory: KeyDirectory;
  construction: Condition;
  /** The parent's key: signs the task receipt under chain and dag. */
  key?: SigningKey;
  /** dag: records the grant with the parent's co-signing service and returns its credential (`httpGrant`, or `CosignService.grant`). */
  grant?: (grant: Grant) => string | Promise<string>;
  nonceStore?: NonceStore;
  /** SendStreamingMessage instead of SendMessage (an agent without streaming answers as SendMessage would). */
  stream?: boolean;
  /** Each text part as it arrives, unverified: a streamed artifact's parts, or the answer message's text. */
  onText?: (text: string) => void;
  /** With `stream`: another recorder for a stream as it begins (`witness a2a send --stream-out`: a file written as events arrive). */
  alsoRecord?: ReceiveStreamOptions['alsoRecord'];
  /** The longest the whole delegation may take, ms (default 120000): also the task receipt's and the grant's lifetime. */
  timeoutMs?: number;
  /** Aborts the delegation (Ctrl-C): `CANCELLED`. */
  signal?: AbortSignal;
}

export interface SendTaskResult {
  ok: boolean;
  /** The one check of the answer, with the streams' problems first when it was streamed (`ok` says both passed). */
  check: AnswerCheck;
  /** Each streamed artifact's verdict, when the answer was streamed. */
  streams: StreamVerifyResult[];
  record: DelegationRecord;
  childDeployer: string;
}

export const DEFAULT_SEND_TIMEOUT_MS = 120_000;

/** Delegates `text` to the agent at `url` and verifies the answer; throws only when there is no answer to verify. */
export async function sendTask(url: string, text: string, options: SendTaskOptions): Promise<SendTaskResult> {
  const { construction } = options;
  if (text === '') throw new WitnessError('USAGE', 'The task is empty: give the text to delegate.');
  if (construction !== 'none' && !options.key)
    throw new WitnessError('USAGE', `Construction ${construction} signs the task: give the parent's key.`);
  if (construction === 'dag' && !options.grant)
    throw new WitnessError('USAGE', "Construction dag needs the parent's co-signing service to record the grant.");
  const timeoutMs = options.timeoutMs ?? DEFAULT_SEND_TIMEOUT_MS;
  const deadline = AbortSignal.timeout(timeoutMs);
  const signal = options.signal ? AbortSignal.any([options.signal, deadline]) : deadline;
  const stopped = () => _stopped(url, timeoutMs, options.signal);
  const createdAt = Date.now();
  const { child, taskId, taskReceipt, request } = await _prepare(url, text, options, {
    createdAt,
    timeoutMs,
    signal,
    stopped,
  });
  let recordings: Array<Array<Record<string, unknown>>> = [];
  const answer = await _follow(url, stopped, async () => {
    let first: Message | Task;
    if (options.stream) {
      const received = await receiveStream(child.client, request, {
        signal,
        ...(options.onText ? { onText: options.onText } : {}),
        ...(options.alsoRecord ? { alsoRecord: options.alsoRecord } : {}),
      });
      recordings = received.recordings;
      first = received.answer;
    } else first = await child.client.sendMessage(request, { signal });
    return followAnswer(child, first, signal);
  });
  const verifiedAt = Date.now();
  const { check, streams } = await verifyStreamedAnswer(
    answer,
    recordings,
    { construction, childDeployer: child.deployer, ...(taskReceipt ? { taskReceipt } : {}) },
    {
      directory: options.directory,
      now: verifiedAt,
      ...(options.nonceStore ? { nonceStore: options.nonceStore } : {}),
    },
  );
  const record: DelegationRecord = {
    type: DELEGATION_RECORD_TYPE,
    v: 1,
    created_at: isoTime(createdAt),
    url,
    card: child.card,
    request: { task_id: taskId, construction, text, evidence: taskReceipt ? { path: [{ ...taskReceipt }] } : null },
    answer: answer as DelegationRecord['answer'],
    verified_at: isoTime(verifiedAt),
    verdict: { ok: check.ok, problems: check.problems },
    ...(recordings.length > 0 ? { streams: recordings } : {}),
  };
  return { ok: check.ok, check, streams, record, childDeployer: child.deployer };
}

/**
 * Everything before the task is sent: the child discovered and its card verified, the
 * task signed, the dag grant recorded. After a stop nothing more is signed, granted or sent.
 */
async function _prepare(
  url: string,
  text: string,
  options: SendTaskOptions,
  at: { createdAt: number; timeoutMs: number; signal: AbortSignal; stopped: () => WitnessError },
): Promise<{ child: DiscoveredChild; taskId: string; taskReceipt: Receipt | undefined; request: SendMessageRequest }> {
  const { construction } = options;
  const taskId = randomUUID();
  const child = await discoverChild(url, options.directory, { timeoutMs: at.timeoutMs });
  if (at.signal.aborted) throw at.stopped();
  const parentPath = options.key ? await signTask(options.key, text, construction, at.timeoutMs) : [];
  const taskReceipt = parentPath[0];
  const cosignToken =
    construction === 'dag' && options.grant && taskReceipt
      ? await options.grant({
          taskId,
          childDeployer: child.deployer,
          parentDigest: receiptDigest(taskReceipt),
          expiresAt: at.createdAt + at.timeoutMs,
          // A streamed answer is two edges: the stream's final receipt and the artifact's.
          ...(options.stream && declaresStreaming(child.card) ? { edges: STREAMED_GRANT_EDGES } : {}),
        })
      : undefined;
  if (at.signal.aborted) throw at.stopped();
  const request = delegationRequest(text, delegationOf(taskId, construction, parentPath, cosignToken));
  return { child, taskId, taskReceipt, request };
}

/** Runs the exchange and returns the answer as A2A v1.0 JSON; what went wrong on the way is one `WitnessError`. */
async function _follow(
  url: string,
  stopped: () => WitnessError,
  exchange: () => Promise<Message | Task>,
): Promise<WireAnswer> {
  let answer: Message | Task;
  try {
    answer = await exchange();
  } catch (error) {
    if (error instanceof WitnessError) throw error;
    const name = (error as Error).name;
    if (name === 'TimeoutError' || name === 'AbortError') throw stopped();
    throw new WitnessError('UNAVAILABLE', `The child at ${url} did not answer the task: ${(error as Error).message}`, {
      cause: error,
    });
  }
  return wireAnswer(answer);
}

/** Why the delegation stopped before an answer: interrupted (CANCELLED), or out of time (TIMEOUT). */
function _stopped(url: string, timeoutMs: number, interrupt: AbortSignal | undefined): WitnessError {
  return interrupt?.aborted
    ? new WitnessError(
        'CANCELLED',
        `The delegation to ${url} was interrupted before the child answered; nothing was verified.`,
      )
    : new WitnessError(
        'TIMEOUT',
        `The child at ${url} gave no final answer within ${timeoutMs} ms (--timeout); nothing was verified.`,
      );
}
