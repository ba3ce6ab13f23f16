/**
 * @module
 * The parent's side of one delegation (attest.md §5–§6): discover the child's Agent
 * Card and verify it against the parent's own key directory; sign the task as the
 * root receipt; under `dag` record a grant with the parent's co-signing service and pass
 * its credential to the child with the delegation; send
 * the task with the `@a2a-js/sdk` client; follow the Task it answers to its end and
 * verify every artifact's evidence against the artifact's bytes before accepting the
 * result (answer.ts; a child answering with a Message is verified as before). Every
 * step is timed.
 */
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { AgentCard, Role } from '@a2a-js/sdk';
import { ClientFactory } from '@a2a-js/sdk/client';
import type { KeyDirectory } from '../attest/key-directory.js';
import type { SigningKey } from '../attest/keys.js';
import type { NonceStore } from '../attest/nonce-store.js';
import { type Receipt, receiptDigest } from '../attest/receipt.js';
import { createReleaseSigner } from '../attest/signer.js';
import { WitnessError } from '../core/errors.js';
import type { TaskProblem } from './artifact.js';
import { type ArtifactRecord, followAnswer, verifyAnswer } from './answer.js';
import { fetchAgentCard, verifyAgentCard } from './card.js';
import type { CosignService } from './cosigner.js';
import { type Condition, DELEGATION_KEY, type Delegation } from './metadata.js';
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
  output_text: string;
  /** The receipt path of the one result: the first artifact's, or a Message answer's. */
  evidence: { path: Receipt[] };
  /** Every artifact of a Task answer, with what its receipt covers; empty for a Message answer. */
  artifacts: ArtifactRecord[];
  verdict: { ok: boolean; reasons: TaskProblem[] };
  verified_at: string;
  child_deployer: string;
  latency: Latency;
}

/** Delegates `task` to the agent at `childUrl` under `condition`; throws when the child returns no result. */
export async function delegate(
  childUrl: string,
  task: string,
  condition: Condition,
  options: ParentOptions,
): Promise<DelegationResult> {
  const taskId = randomUUID();
  const cpu0 = process.cpuUsage();
  const start = performance.now();
  const card = await fetchAgentCard(childUrl);
  const cardCheck = verifyAgentCard(card, options.directory);
  if (!cardCheck.ok || !cardCheck.deployer)
    throw new WitnessError(
      'REFUSED',
      `The child's Agent Card at ${childUrl} did not verify: ${cardCheck.reasons.map((r) => `${r.code} ${r.message}`).join('; ')}`,
    );
  const client = await new ClientFactory().createFromAgentCard(AgentCard.fromJSON(card));
  const tDiscovered = performance.now();

  const ttl = options.ttlMs ?? 600_000;
  let parentPath: Receipt[] = [];
  if (condition !== 'none') {
    const signer = createReleaseSigner({ key: options.key, instance: 'parent', ttlMs: ttl });
    parentPath = [await signer.releaseOutput(Buffer.from(task, 'utf8'), { construction: condition })];
  }
  const tSigned = performance.now();
  let cosignToken: string | undefined;
  if (condition === 'dag') {
    if (!options.cosigner) throw new WitnessError('USAGE', 'The dag condition needs the parent co-signing service.');
    cosignToken = options.cosigner.grant({
      taskId,
      childDeployer: cardCheck.deployer,
      parentDigest: receiptDigest(parentPath[0] as Receipt),
      expiresAt: Date.now() + ttl,
    });
  }
  const tGranted = performance.now();

  // The grant's credential goes to this child only, with the delegation it authorises.
  const delegation: Delegation = {
    task_id: taskId,
    construction: condition,
    evidence: condition === 'none' ? null : { path: parentPath },
    ...(cosignToken ? { cosign_token: cosignToken } : {}),
  };
  const response = await client.sendMessage({
    tenant: '',
    message: textMessage(Role.ROLE_USER, { taskId: '', contextId: '' }, task, { [DELEGATION_KEY]: delegation }),
    configuration: undefined,
    metadata: undefined,
  });
  const final = await followAnswer(client, response);
  const tCalled = performance.now();
  const verifiedAt = Date.now();
  const result = await verifyAnswer(final, childUrl, {
    directory: options.directory,
    construction: condition,
    now: verifiedAt,
    ...(options.nonceStore ? { nonceStore: options.nonceStore } : {}),
  });
  const tVerified = performance.now();
  const cpu = process.cpuUsage(cpu0);
  const child = result.timings;
  const childInside = child.tool_ms + child.model_ms + child.sign_ms + child.cosign_ms;
  return {
    task_id: taskId,
    condition,
    output_text: result.text,
    evidence: result.evidence,
    artifacts: result.artifacts,
    verdict: result.verdict,
    verified_at: new Date(verifiedAt).toISOString(),
    child_deployer: cardCheck.deployer,
    latency: {
      discovery_ms: tDiscovered - start,
      a2a_ms: Math.max(0, tCalled - tGranted - childInside),
      tool_ms: child.tool_ms,
      model_ms: child.model_ms,
      sign_ms: tSigned - tDiscovered + child.sign_ms,
      cosign_ms: tGranted - tSigned + child.cosign_ms,
      verify_ms: tVerified - tCalled,
      total_ms: tVerified - start,
      cpu_ms: (cpu.user + cpu.system) / 1000 + child.cpu_ms,
    },
  };
}
