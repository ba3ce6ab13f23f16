/**
 * @module
 * Experiment E12 (attest.md §6): the paper's live local workflow with three loopback
 * processes — this one (parent + its co-signing service), the child A2A agent and the
 * MCP tool server (e12-launch.ts: the servers of `witness a2a serve` and `witness a2a
 * tool`, started from the library). Conditions none /
 * chain / dag run interleaved (so drift hits all three alike) after warm-ups; every
 * trial is recorded with its output text, SHA-256, UTF-8 length, the artifact its
 * receipt covers, verdict and latency split. Then the controlled forgery: a child holding only its own key claims a
 * parent — chain accepts it, dag rejects it with COSIGNATURE_MISSING.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { type DirectoryFile, KeyDirectory, addKey, emptyDirectory } from '../attest/key-directory.js';
import { newSigningKey, publicJwk, type SigningKey, writeKeyFile } from '../attest/keys.js';
import { SqliteNonceStore } from '../attest/nonce-store.js';
import { type Receipt, receiptDigest, signingBytes, type UnsignedReceipt } from '../attest/receipt.js';
import { createReleaseSigner } from '../attest/signer.js';
import { verifyEvidence } from '../attest/verify.js';
import { signEd25519 } from '../core/ed25519.js';
import { WitnessError } from '../core/errors.js';
import { sha256Hex } from '../core/hash.js';
import type { ArtifactRecord } from './artifact.js';
import { type CardJson, fetchAgentCard } from './card.js';
import { CosignService, serveCosigner } from './cosigner.js';
import { startE12Process, stopE12Process } from './e12-launch.js';
import type { Condition } from './metadata.js';
import { type DelegationResult, delegate, type Latency } from './parent.js';
import { type LATENCY_PARTS, pairedMedian, summarise } from './e12-summary.js';
import { DEFAULT_STREAM_RELEASE } from './stream-release.js';

/** The declared `type` of an E12 results file (files written before declared it as `kind`). */
export const E12_KIND = 'witness/e12-results';

/**
 * The conditions of a run: the three constructions, and dag with a streamed answer. A
 * stream's evidence is only as strong as its final receipt's delegation, so the streamed
 * condition is the one a deployer would stream under: dag (its overhead over none is the
 * whole cost; over dag, the streaming's own).
 */
export const E12_CONDITIONS = ['none', 'chain', 'dag', 'dag+stream'] as const;
export type E12Condition = (typeof E12_CONDITIONS)[number];
/** The conditions of files written before the streamed one: what their `config` implies. */
export const E12_CONDITIONS_BEFORE_STREAM: readonly E12Condition[] = ['none', 'chain', 'dag'];

/** The ancestry construction a condition delegates under, and whether its answer is streamed. */
export function conditionParts(condition: E12Condition): { construction: Condition; stream: boolean } {
  return condition === 'dag+stream'
    ? { construction: 'dag', stream: true }
    : { construction: condition, stream: false };
}

export interface E12Options {
  trials?: number;
  warmup?: number;
  agent?: string;
  /** For `agent: 'llm'`: the OpenAI-compatible endpoint and model the child uses. */
  endpoint?: string;
  model?: string;
  /** Called after each trial (warm-ups included), for progress output. */
  onProgress?: (done: number, total: number) => void;
  /**
   * Aborted on Ctrl-C: the trial in flight finishes, no other starts, and the results
   * hold the finished trials with `interrupted` set (never read as a complete run).
   */
  signal?: AbortSignal;
}

export interface E12Trial {
  /** Round of the run: each round runs every condition once, in rotating order. */
  round: number;
  /** The parent's delegation id (the grant's task id), unique per trial. */
  task_id: string;
  condition: E12Condition;
  /** What the user reads: the artifact's text (or, in files written before, the result message's text). */
  output_text: string;
  /** SHA-256 and UTF-8 length of `output_text`. */
  output_sha256: string;
  output_len: number;
  /**
   * The A2A artifact the child released, as its receipt covers it (artifact.ts): the A2A
   * task and context, the artifact id and every part. Absent in files written before
   * results were artifacts, whose receipts cover `output_text` itself.
   */
  artifact?: ArtifactRecord;
  evidence: { path: Receipt[] };
  /** dag+stream: the recording of the answer's stream as the parent received it (a witness/stream recording, its lines as values). */
  stream?: Array<Record<string, unknown>>;
  /** The one check's verdict (answer.ts, and the stream's for dag+stream); `at` says where: "artifact 0 (a1), receipt 1". In files written before, reasons carried `index` instead. */
  verdict: { ok: boolean; reasons: Array<{ code: string; message: string; at?: string; index?: number }> };
  verified_at: string;
  latency: Latency;
}

export interface E12Forgery {
  construction: 'chain' | 'dag';
  output_text: string;
  evidence: { path: Receipt[] };
  verified_at: string;
  accepted: boolean;
  reasons: string[];
}

export interface E12Summary {
  condition: E12Condition;
  n: number;
  verified: number;
  mean: Record<(typeof LATENCY_PARTS)[number], number>;
  median_total_ms: number;
  p95_total_ms: number;
}

export interface E12Results {
  type: typeof E12_KIND;
  v: 1;
  created_at: string;
  config: {
    trials: number;
    warmup: number;
    agent: string;
    node: string;
    platform: string;
    cpus: number /** 1-minute load average at the start and the end of the run. */;
    load_average: [number, number];
    /** The conditions run (absent in files written before the streamed condition: none, chain, dag). */
    conditions?: E12Condition[];
    /** How the child cut and checkpointed its streamed answers (absent in files written before). */
    stream?: { policy: string; checkpoint_every: number; checkpoint_ms: number };
  };
  /** The public keys of the run's two deployers, as a key directory file. */
  keys: DirectoryFile;
  card: CardJson;
  trials: E12Trial[];
  forgery: E12Forgery[];
  summary: E12Summary[];
  /** Mean total latency of dag minus none, ms. */
  overhead_dag_vs_none_ms: number;
  overhead_chain_vs_none_ms: number;
  /** Mean CPU time (parent + child processes) of dag minus none, ms. */
  overhead_dag_vs_none_cpu_ms: number;
  /** Median over rounds of (dag total − none total) within the same round, ms: less sensitive to a loaded machine's drift. */
  overhead_dag_vs_none_paired_median_ms: number;
  /** Mean total of dag+stream minus none, and minus dag (the streaming's own cost), ms; and the CPU of dag+stream minus none. */
  overhead_dag_stream_vs_none_ms?: number;
  overhead_dag_stream_vs_dag_ms?: number;
  overhead_dag_stream_vs_none_cpu_ms?: number;
  /** Set when the run was stopped before its last trial: `witness verify` then says partial, never valid. */
  interrupted?: { at: string; trials_recorded: number; trials_planned: number };
}

export async function runE12(options: E12Options = {}): Promise<E12Results> {
  const trials = options.trials ?? 30;
  const warmup = options.warmup ?? 10;
  const agent = options.agent ?? 'policy';
  const work = mkdtempSync(join(tmpdir(), 'witness-e12-'));
  const parent = newSigningKey('org-parent');
  const child = newSigningKey('org-child');
  const now = Date.now();
  const loadAtStart = loadavg()[0] ?? 0;
  let keys = emptyDirectory();
  for (const k of [parent, child])
    keys = addKey(keys, publicJwk(k), { notBefore: now - 60_000, notAfter: now + 7 * 86_400_000 });
  const directory = new KeyDirectory(keys);
  writeKeyFile(join(work, 'child.key.json'), child);

  const processes: ChildProcess[] = [];
  const service = new CosignService(parent);
  const cosigner = await serveCosigner(service);
  const nonceStore = new SqliteNonceStore(join(work, 'nonces.db'));
  try {
    const tool = await startE12Process({ role: 'tool' }, processes);
    const childUrl = await startE12Process(
      {
        role: 'child',
        key: join(work, 'child.key.json'),
        taskStore: join(work, 'child.tasks.sqlite'),
        toolUrl: tool,
        cosigners: { [parent.deployer]: cosigner.url },
        agent,
        ...(options.endpoint ? { endpoint: options.endpoint } : {}),
        ...(options.model ? { model: options.model } : {}),
      },
      processes,
    );
    const card = await fetchAgentCard(childUrl);
    const parentOptions = { key: parent, directory, nonceStore, cosigner: service };
    const total = (warmup + trials) * E12_CONDITIONS.length;
    const run = (c: E12Condition, task: string) => {
      const { construction, stream } = conditionParts(c);
      return delegate(childUrl, task, construction, parentOptions, { stream });
    };
    let done = 0;
    const stopped = () => options.signal?.aborted === true;
    for (let i = 0; i < warmup && !stopped(); i++) {
      for (const c of E12_CONDITIONS) {
        if (stopped()) break;
        await run(c, _task(-1 - i));
        options.onProgress?.(++done, total);
      }
    }
    const records: E12Trial[] = [];
    for (let i = 0; i < trials && !stopped(); i++) {
      for (const c of _rotate(E12_CONDITIONS, i)) {
        if (stopped()) break;
        records.push(_record(i, c, await run(c, _task(i))));
        options.onProgress?.(++done, total);
      }
    }
    const planned = trials * E12_CONDITIONS.length;
    const interrupted =
      records.length < planned
        ? { at: new Date().toISOString(), trials_recorded: records.length, trials_planned: planned }
        : undefined;
    const forgery = await _forge(parent, child, directory);
    const summary = E12_CONDITIONS.map((c) =>
      summarise(
        c,
        records.filter((r) => r.condition === c),
      ),
    );
    const mean = (c: E12Condition, part: 'total_ms' | 'cpu_ms' = 'total_ms') =>
      summary.find((s) => s.condition === c)?.mean[part] ?? Number.NaN;
    return {
      type: E12_KIND,
      v: 1,
      created_at: new Date(now).toISOString(),
      config: {
        trials,
        warmup,
        agent,
        node: process.version,
        platform: `${process.platform}-${process.arch}`,
        cpus: cpus().length,
        load_average: [loadAtStart, loadavg()[0] ?? 0],
        conditions: [...E12_CONDITIONS],
        stream: {
          policy: DEFAULT_STREAM_RELEASE.policy,
          checkpoint_every: DEFAULT_STREAM_RELEASE.checkpointEvery.chunks,
          checkpoint_ms: DEFAULT_STREAM_RELEASE.checkpointEvery.ms,
        },
      },
      keys,
      card,
      trials: records,
      forgery,
      summary,
      overhead_dag_vs_none_ms: mean('dag') - mean('none'),
      overhead_chain_vs_none_ms: mean('chain') - mean('none'),
      overhead_dag_vs_none_cpu_ms: mean('dag', 'cpu_ms') - mean('none', 'cpu_ms'),
      overhead_dag_vs_none_paired_median_ms: pairedMedian(records, 'dag', 'none'),
      overhead_dag_stream_vs_none_ms: mean('dag+stream') - mean('none'),
      overhead_dag_stream_vs_dag_ms: mean('dag+stream') - mean('dag'),
      overhead_dag_stream_vs_none_cpu_ms: mean('dag+stream', 'cpu_ms') - mean('none', 'cpu_ms'),
      ...(interrupted ? { interrupted } : {}),
    };
  } finally {
    nonceStore.close();
    await cosigner.close();
    await Promise.all(processes.map(stopE12Process));
    rmSync(work, { recursive: true, force: true });
  }
}

function _task(i: number): string {
  return i < 0
    ? `E12 warm-up ${-i}: inspect lot W${-i} and report whether it is within tolerance.`
    : `E12 task ${i + 1}: inspect lot ${1000 + i} and report whether it is within tolerance.`;
}

/** Condition order rotates per round, so no condition always runs first. */
function _rotate<T>(items: readonly T[], i: number): T[] {
  const k = i % items.length;
  return [...items.slice(k), ...items.slice(0, k)];
}

function _record(round: number, condition: E12Condition, r: DelegationResult): E12Trial {
  if (r.artifacts.length > 1)
    throw new WitnessError(
      'UNAVAILABLE',
      `E12 expects one artifact per task; the child returned ${r.artifacts.length} for delegation ${r.task_id}.`,
    );
  const bytes = Buffer.from(r.output_text, 'utf8');
  const released = r.artifacts[0];
  return {
    round,
    task_id: r.task_id,
    condition,
    output_text: r.output_text,
    output_sha256: sha256Hex(bytes),
    output_len: bytes.length,
    ...(released ? { artifact: released } : {}),
    evidence: r.evidence,
    ...(r.stream ? { stream: r.stream } : {}),
    verdict: r.verdict,
    verified_at: r.verified_at,
    latency: r.latency,
  };
}

/**
 * The controlled forgery (attest.md §6): the child's key alone, claiming a real parent
 * task receipt. Under chain the child's signature over the parent digest is all there
 * is; under dag the parent's co-signature is missing.
 */
async function _forge(parent: SigningKey, child: SigningKey, directory: KeyDirectory): Promise<E12Forgery[]> {
  const task = Buffer.from('E12 forgery: a task the parent never delegated to this child.', 'utf8');
  const output = 'Forged answer: every lot is within tolerance.';
  const bytes = Buffer.from(output, 'utf8');
  const parentSigner = createReleaseSigner({ key: parent, instance: 'parent' });
  const childSigner = createReleaseSigner({ key: child, instance: 'forger' });
  const out: E12Forgery[] = [];
  for (const construction of ['chain', 'dag'] as const) {
    const root = await parentSigner.releaseOutput(task, { construction });
    const chainEdge = await childSigner.releaseOutput(bytes, { ancestors: [root], construction: 'chain' });
    let leaf = chainEdge;
    if (construction === 'dag') {
      const { signatures: _drop, ...rest } = chainEdge;
      const edge: UnsignedReceipt = {
        ...rest,
        type: 'edge',
        construction: 'dag',
        parent: receiptDigest(root),
        cosigners: [parent.deployer],
      };
      leaf = {
        ...edge,
        signatures: [{ key_id: child.kid, alg: 'Ed25519', sig: signEd25519(child.privateKey, signingBytes(edge)) }],
      };
    }
    const verifiedAt = Date.now();
    const verdict = await verifyEvidence({ path: [root, leaf] }, bytes, { directory, construction, now: verifiedAt });
    out.push({
      construction,
      output_text: output,
      evidence: { path: [root, leaf] },
      verified_at: new Date(verifiedAt).toISOString(),
      accepted: verdict.ok,
      reasons: [...new Set(verdict.reasons.map((r) => r.code))],
    });
  }
  return out;
}
