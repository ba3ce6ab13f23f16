/**
 * @module
 * One task's work on the child, from the request to an artifact ready to release
 * (attest.md §5): read the delegation, call the MCP tool, let the agent backend answer,
 * then release the artifact's bytes (artifact.ts: the task, the context, the artifact
 * id and every part) through the one release signer — under `dag` only once the
 * parent's co-signing service has co-signed the edge; refusal, an unreachable service
 * or a timeout throws, so nothing is released (fail closed). The backend never sees
 * the key. Whether the task may still release (not cancelled) is the caller's
 * `mayRelease`, asked once the answer exists and before anything is signed.
 */
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { type Artifact, Artifact as ArtifactJson, type Part } from '@a2a-js/sdk';
import type { RequestContext } from '@a2a-js/sdk/server';
import type { SigningKey } from '../attest/keys.js';
import { parseReceipt, type Receipt } from '../attest/receipt.js';
import { createReleaseSigner, type ReleaseSigner, type ReleaseSignerOptions } from '../attest/signer.js';
import { WitnessError } from '../core/errors.js';
import type { AgentBackend } from './agent.js';
import { artifactBytes, type TaskRef, type WireArtifact } from './artifact.js';
import { httpCosign } from './cosign-client.js';
import {
  type ChildTimings,
  type Condition,
  DELEGATION_KEY,
  type Delegation,
  DelegationSchema,
  EVIDENCE_KEY,
} from './metadata.js';
import type { StreamReleaseOptions } from './stream-release.js';
import type { EvidenceClient } from './tool-server.js';

export interface ReleaseSetup {
  key: SigningKey;
  tool: EvidenceClient;
  backend: AgentBackend;
  /** Co-signing service per parent deployer — configured by the child's operator, never taken from a request. */
  cosigners?: Readonly<Record<string, string>>;
  /** Longest wait for a co-signature, ms (default 5000); then the task fails. */
  cosignTimeoutMs?: number;
  instance?: string;
  /** How an answer a client asked to stream is cut and checkpointed (stream-release.ts; default DEFAULT_STREAM_RELEASE). */
  stream?: StreamReleaseOptions;
}

export interface Released {
  /** The artifact with its evidence path under EVIDENCE_KEY in its metadata. */
  artifact: Artifact;
  timings: ChildTimings;
}

/** A task answered, nothing released yet: the output, the delegation it answers, and how long each step took. */
export interface Answered {
  output: string;
  delegation: Delegation | undefined;
  /** The parent's task path as sent (empty under none): the ancestors of every release. */
  ancestors: Receipt[];
  construction: Condition;
  /** CPU usage and wall clock when the work started, and the tool's and the backend's time. */
  cpu0: NodeJS.CpuUsage;
  toolMs: number;
  modelMs: number;
  answeredAt: number;
}

/** Reads the task of `ctx` and its delegation, calls the tool and lets the backend answer. */
export async function answerTask(setup: ReleaseSetup, ctx: RequestContext): Promise<Answered> {
  const message = ctx.userMessage;
  const task = message.parts.map((p) => (p.content?.$case === 'text' ? p.content.value : '')).join('');
  if (task === '') throw new WitnessError('INVALID_INPUT', 'The message has no text part: send the task as text.');
  const delegation = _delegation(message.metadata?.[DELEGATION_KEY] ?? ctx.request.metadata?.[DELEGATION_KEY]);
  const ancestors = _ancestors(delegation);
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const evidence = await setup.tool.getEvidence(task);
  const t1 = performance.now();
  const output = await setup.backend.answer(task, evidence);
  const t2 = performance.now();
  return {
    output,
    delegation,
    ancestors,
    construction: delegation?.construction ?? 'none',
    cpu0,
    toolMs: t1 - t0,
    modelMs: t2 - t1,
    answeredAt: t2,
  };
}

/**
 * Releases the answer as one artifact holding it as a text part. `mayRelease` throws
 * when the task may no longer release (it was cancelled); it is asked before anything
 * is signed.
 */
export async function releaseAnswer(
  setup: ReleaseSetup,
  ids: TaskRef,
  answered: Answered,
  mayRelease: () => Promise<void>,
): Promise<Released> {
  await mayRelease();
  const artifact = answerArtifact(randomUUID(), [textPart(answered.output)]);
  const release = releaseSigner(setup, answered);
  const receipt = await release.signer.releaseOutput(wireArtifactBytes(ids, artifact), {
    ancestors: answered.ancestors,
    construction: answered.construction,
  });
  artifact.metadata = { [EVIDENCE_KEY]: { path: [...answered.ancestors, receipt] } };
  return { artifact, timings: childTimings(answered, release.cosignMs()) };
}

/**
 * A text part without mediaType: A2A v0.3 text parts cannot carry one, so a v0.3 client
 * reading the artifact through the SDK's compat layer gets the same v1.0 parts, the same bytes.
 */
export function textPart(text: string): Part {
  return { content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: '' };
}

/** The answer's artifact, with `parts` and no metadata yet (the evidence goes there). */
export function answerArtifact(artifactId: string, parts: Part[]): Artifact {
  return { artifactId, name: 'answer', description: '', parts, metadata: {}, extensions: [] };
}

/** What a release receipt for `artifact` of task `ids` covers (artifact.ts), from the SDK's object. */
export function wireArtifactBytes(ids: TaskRef, artifact: Artifact): Buffer {
  return artifactBytes(ids, ArtifactJson.toJSON(artifact) as WireArtifact);
}

/**
 * The options of the runtime's release signer for this answer — the key, the instance
 * and, under dag, the parent's co-signer for this delegation (timed: `cosignMs`) — and
 * a signer made with them. A streamed answer's stream signer takes the same options.
 */
export function releaseSigner(
  setup: ReleaseSetup,
  answered: Answered,
): { options: ReleaseSignerOptions; signer: ReleaseSigner; cosignMs: () => number } {
  const cosign = _cosign(setup, answered.delegation, answered.ancestors.at(-1));
  const options: ReleaseSignerOptions = {
    key: setup.key,
    instance: setup.instance ?? setup.backend.name,
    cosignTimeoutMs: setup.cosignTimeoutMs ?? 5000,
    ...(cosign ? { cosign: cosign.request } : {}),
  };
  return { options, signer: createReleaseSigner(options), cosignMs: () => cosign?.elapsedMs() ?? 0 };
}

/** The child's latency split (TIMINGS_KEY), from the answer's start to now; co-signing is counted apart from signing. */
export function childTimings(answered: Answered, cosignMs: number): ChildTimings {
  const cpu = process.cpuUsage(answered.cpu0);
  return {
    tool_ms: answered.toolMs,
    model_ms: answered.modelMs,
    sign_ms: Math.max(0, performance.now() - answered.answeredAt - cosignMs),
    cosign_ms: cosignMs,
    cpu_ms: (cpu.user + cpu.system) / 1000,
  };
}

/** Under dag, the request to the parent's co-signer for this delegation, timed; undefined otherwise. */
function _cosign(setup: ReleaseSetup, delegation: Delegation | undefined, parent: Receipt | undefined) {
  if (delegation?.construction !== 'dag' || !parent) return undefined;
  const cosignerUrl = setup.cosigners?.[parent.deployer];
  if (!cosignerUrl)
    throw new WitnessError(
      'REFUSED',
      `No co-signing service is configured for the parent deployer ${parent.deployer}; a dag edge cannot be released without it (fail closed). Start the child with --cosigner ${parent.deployer}=URL.`,
    );
  const request = httpCosign(cosignerUrl, delegation.task_id, {
    token: delegation.cosign_token ?? '',
    timeoutMs: setup.cosignTimeoutMs ?? 5000,
  });
  let elapsed = 0;
  return {
    elapsedMs: () => elapsed,
    request: async (...args: Parameters<typeof request>) => {
      const c0 = performance.now();
      try {
        return await request(...args);
      } finally {
        elapsed += performance.now() - c0;
      }
    },
  };
}

function _delegation(value: unknown): Delegation | undefined {
  if (value === undefined) return undefined;
  const checked = DelegationSchema.safeParse(value);
  if (!checked.success) {
    const issue = checked.error.issues[0];
    throw new WitnessError(
      'INVALID_INPUT',
      `metadata ${DELEGATION_KEY} is malformed: ${issue?.path.join('.') || '(root)'}: ${issue?.message}.`,
    );
  }
  if ((checked.data.construction === 'none') !== (checked.data.evidence === null)) {
    throw new WitnessError(
      'INVALID_INPUT',
      `metadata ${DELEGATION_KEY}: construction none goes without evidence; chain and dag need the parent's task evidence.`,
    );
  }
  if ((checked.data.construction === 'dag') !== (checked.data.cosign_token !== undefined)) {
    throw new WitnessError(
      'INVALID_INPUT',
      `metadata ${DELEGATION_KEY}: a dag delegation carries cosign_token, the credential the parent's co-signer issued with the grant (and only dag does).`,
    );
  }
  return checked.data;
}

function _ancestors(delegation: Delegation | undefined): Receipt[] {
  if (!delegation?.evidence) return [];
  return delegation.evidence.path.map((item, i) => {
    const parsed = parseReceipt(item, i);
    if (!parsed.ok)
      throw new WitnessError(
        'INVALID_INPUT',
        `The parent's task evidence is malformed: ${parsed.reasons.map((r) => `${r.code} ${r.message}`).join('; ')}`,
      );
    return parsed.value.receipt;
  });
}
