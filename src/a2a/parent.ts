/**
 * @module
 * The parent's side of one delegation (attest.md §5–§6): discover the child's Agent
 * Card and verify it against the parent's own key directory; sign the task as the
 * root receipt; under `dag` record a grant with the parent's co-signing service and pass
 * its credential to the child with the delegation; send the task with the `@a2a-js/sdk`
 * client; follow the Task it answers until it is settled (follow.ts); accept the result
 * only when the one check of an answer (answer.ts) passes — every artifact's evidence
 * over its bytes, rooted at this task receipt and released by this child (a child
 * answering with a Message is checked the same way). Every step is timed. The steps
 * (`discoverChild`, `signTask`, `delegationOf`, `delegationRequest`) are shared with
 * `witness a2a send` (send.ts).
 */
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { AgentCard, Artifact, Role, type SendMessageRequest } from '@a2a-js/sdk';
import { type Client, ClientFactory } from '@a2a-js/sdk/client';
import type { KeyDirectory } from '../attest/key-directory.js';
import type { SigningKey } from '../attest/keys.js';
import type { NonceStore } from '../attest/nonce-store.js';
import { type Receipt, receiptDigest } from '../attest/receipt.js';
import { createReleaseSigner } from '../attest/signer.js';
import { WitnessError } from '../core/errors.js';
import type { AnswerProblem } from './answer.js';
import type { ArtifactRecord } from './artifact.js';
import { type CardJson, fetchAgentCard, verifyAgentCard } from './card.js';
import { type CosignService, STREAMED_GRANT_EDGES } from './cosigner.js';
import { followAnswer, wireAnswer } from './follow.js';
import {
  type ChildTimings,
  ChildTimingsSchema,
  type Condition,
  DELEGATION_KEY,
  type Delegation,
  TIMINGS_KEY,
} from './metadata.js';
import { receiveStream, verifyStreamedAnswer } from './stream-answer.js';
import { textMessage } from './task-state.js';

export interface ParentOptions {
  key: SigningKey;
  /** The parent's own directory: trusts the child's key (card and receipts) and its own. */
  directory: KeyDirectory;
  nonceStore?: NonceStore;
  /** The parent's co-signing service, needed for `dag`. */
  cosigner?: CosignService;
  /** How long a grant and a task receipt stay valid, ms (default 10 min). */
  ttlMs?: number;
}

/** Latency split of one delegation, ms. `a2a_ms` is the call's round trip minus the child's own parts. */
export interface Latency {
  discovery_ms: number;
  a2a_ms: number;
  tool_ms: number;
  model_ms: number;
  sign_ms: number;
  cosign_ms: number;
  verify_ms: number;
  total_ms: number;
  /** CPU time of the parent process (its co-signer included) plus the child's, ms: the cost without the machine's queueing. */
  cpu_ms: number;
}

export interface DelegationResult {
  task_id: string;
  condition: Condition;
  /** What the user reads: the text parts of the task's artifacts in order, or the answer message's text. */
  output_text: string;
  /** The receipt path of the first result (the first artifact's, or the message's), as the check parsed it. */
  evidence: { path: Receipt[] };
  /** Every artifact of a Task answer, as its receipt covers it; empty for a Message answer. */
  artifacts: ArtifactRecord[];
  /** A streamed answer (`delegate(…, {stream: true})`): the recording of its artifact's stream, its lines as values. */
  stream?: Array<Record<string, unknown>>;
  /** The one check's verdict (with the stream's, when streamed); each problem says where (`at`: "artifact 0 (a1), receipt 1"). */
  verdict: { ok: boolean; reasons: AnswerProblem[] };
  verified_at: string;
  child_deployer: string;
  latency: Latency;
}

/**
 * Delegates `task` to the agent at `childUrl` under `condition`; throws when the child
 * returns no result (its task failed, or its answer is no A2A message or task). With
 * `stream`, the task goes as SendStreamingMessage: every chunk of the answer is recorded
 * and checked with it (stream-answer.ts); under dag the grant then covers two edges.
 */
export async function delegate(
  childUrl: string,
  task: string,
  condition: Condition,
  options: ParentOptions,
  how: { stream?: boolean } = {},
): Promise<DelegationResult> {
  const taskId = randomUUID();
  const cpu0 = process.cpuUsage();
  const start = performance.now();
  const child = await discoverChild(childUrl, options.directory);
  const tDiscovered = performance.now();

  const ttl = options.ttlMs ?? 600_000;
  const parentPath = await signTask(options.key, task, condition, ttl);
  const taskReceipt = parentPath[0];
  const tSigned = performance.now();
  let cosignToken: string | undefined;
  if (condition === 'dag') {
    if (!options.cosigner) throw new WitnessError('USAGE', 'The dag condition needs the parent co-signing service.');
    cosignToken = options.cosigner.grant({
      taskId,
      childDeployer: child.deployer,
      parentDigest: receiptDigest(taskReceipt as Receipt),
      expiresAt: Date.now() + ttl,
      ...(how.stream ? { edges: STREAMED_GRANT_EDGES } : {}),
    });
  }
  const tGranted = performance.now();

  const request = delegationRequest(task, delegationOf(taskId, condition, parentPath, cosignToken));
  const received = how.stream ? await receiveStream(child.client, request, {}) : undefined;
  const answer = await followAnswer(child, received?.answer ?? (await child.client.sendMessage(request)));
  const tCalled = performance.now();
  const verifiedAt = Date.now();
  const recording = received?.recordings[0];
  const { check } = await verifyStreamedAnswer(
    wireAnswer(answer),
    received?.recordings ?? [],
    { construction: condition, childDeployer: child.deployer, ...(taskReceipt ? { taskReceipt } : {}) },
    {
      directory: options.directory,
      now: verifiedAt,
      ...(options.nonceStore ? { nonceStore: options.nonceStore } : {}),
    },
  );
  const noResult = check.problems.find((p) => p.code === 'TASK_FAILED' || (p.code === 'MALFORMED' && !p.at));
  if (noResult)
    throw new WitnessError('UNAVAILABLE', `The child at ${childUrl} returned no result: ${noResult.message}`);
  const tVerified = performance.now();
  const cpu = process.cpuUsage(cpu0);
  const timings = _timings(answer.metadata);
  const childInside = timings.tool_ms + timings.model_ms + timings.sign_ms + timings.cosign_ms;
  return {
    task_id: taskId,
    condition,
    output_text: check.output,
    evidence: { path: check.paths[0] ?? [] },
    artifacts: 'artifacts' in answer ? answer.artifacts.map((a) => _record(answer, a)) : [],
    ...(recording ? { stream: recording } : {}),
    verdict: { ok: check.ok, reasons: check.problems },
    verified_at: new Date(verifiedAt).toISOString(),
    child_deployer: child.deployer,
    latency: {
      discovery_ms: tDiscovered - start,
      a2a_ms: Math.max(0, tCalled - tGranted - childInside),
      tool_ms: timings.tool_ms,
      model_ms: timings.model_ms,
      sign_ms: tSigned - tDiscovered + timings.sign_ms,
      cosign_ms: tGranted - tSigned + timings.cosign_ms,
      verify_ms: tVerified - tCalled,
      total_ms: tVerified - start,
      cpu_ms: (cpu.user + cpu.system) / 1000 + timings.cpu_ms,
    },
  };
}

/** The child as discovered: its signed card, the deployer your directory trusts it for, an SDK client built from that card. */
export interface DiscoveredChild {
  card: CardJson;
  deployer: string;
  kid: string;
  client: Client;
}

/**
 * Fetches the Agent Card at `url`, verifies it against `directory` (throws `REFUSED`
 * with the card's reason codes when it does not verify) and builds the SDK client from
 * that card, so the task goes to the endpoint the verified card names.
 */
export async function discoverChild(
  url: string,
  directory: KeyDirectory,
  options: { timeoutMs?: number } = {},
): Promise<DiscoveredChild> {
  const card = await fetchAgentCard(url, options);
  const check = verifyAgentCard(card, directory);
  if (!check.ok || !check.deployer || !check.kid)
    throw new WitnessError(
      'REFUSED',
      `The child's Agent Card at ${url} did not verify: ${check.reasons.map((r) => `${r.code} ${r.message}`).join('; ')}`,
    );
  const client = await new ClientFactory().createFromAgentCard(AgentCard.fromJSON(card));
  return { card, deployer: check.deployer, kid: check.kid, client };
}

/**
 * The parent's task receipt, the root of the delegation path: under chain and dag the
 * parent signs the task's UTF-8 bytes; under none it signs nothing (an empty path).
 */
export async function signTask(key: SigningKey, task: string, condition: Condition, ttlMs: number): Promise<Receipt[]> {
  if (condition === 'none') return [];
  const signer = createReleaseSigner({ key, instance: 'parent', ttlMs });
  return [await signer.releaseOutput(Buffer.from(task, 'utf8'), { construction: condition })];
}

/** The delegation metadata: the grant's credential goes to this child only, with the delegation it authorises. */
export function delegationOf(
  taskId: string,
  condition: Condition,
  parentPath: Receipt[],
  cosignToken: string | undefined,
): Delegation {
  return {
    task_id: taskId,
    construction: condition,
    evidence: condition === 'none' ? null : { path: parentPath },
    ...(cosignToken ? { cosign_token: cosignToken } : {}),
  };
}

/**
 * The A2A request of a delegation: the task as one text part, the delegation in the
 * message metadata, in the blocking form, with no task history asked back (a task's
 * history repeats the request, the grant's credential included).
 */
export function delegationRequest(task: string, delegation: Delegation): SendMessageRequest {
  return {
    tenant: '',
    message: textMessage(Role.ROLE_USER, { taskId: '', contextId: '' }, task, { [DELEGATION_KEY]: delegation }),
    configuration: {
      acceptedOutputModes: [],
      taskPushNotificationConfig: undefined,
      historyLength: 0,
      returnImmediately: false,
    },
    metadata: undefined,
  };
}

/** One artifact of the task as its receipt covers it (artifact.ts), in the files' names. */
function _record(task: { id: string; contextId: string }, artifact: Artifact): ArtifactRecord {
  return {
    task_id: task.id,
    context_id: task.contextId,
    artifact_id: artifact.artifactId,
    parts: (Artifact.toJSON(artifact) as { parts?: unknown[] }).parts ?? [],
  };
}

/** The child's own latency split, from the answer's metadata (zeros when it sent none). */
function _timings(metadata: Record<string, unknown> | undefined): ChildTimings {
  const timings = ChildTimingsSchema.safeParse(metadata?.[TIMINGS_KEY]);
  return timings.success ? timings.data : { tool_ms: 0, model_ms: 0, sign_ms: 0, cosign_ms: 0, cpu_ms: 0 };
}
