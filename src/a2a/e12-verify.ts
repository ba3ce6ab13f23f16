/**
 * @module
 * Re-checks an E12 results file (`witness verify results.json`), as the seed did with
 * the paper's archive: every task id unique; every output's SHA-256 and UTF-8 byte
 * length recomputed from its text, which must be its artifact's text; every trial
 * re-checked as the answer its parent received (`trialAnswer`), by the one check of an
 * answer (answer.ts): its receipts against the bytes they cover (the artifact's,
 * artifact.ts, or in files written before results were artifacts the output text's),
 * every signature and dag edge (as of the trial's recorded verification time), and the
 * release by the child whose card the file holds; a dag+stream trial's recorded stream,
 * chunk by chunk, against that answer (stream-answer.ts); the recorded verdicts and summary
 * counts reproduced; the forgery still accepted under chain and rejected under dag; the
 * card signature. A file that proves nothing — no trials, a condition missing, no
 * forgery entries — is invalid, never "valid 0/0". Files written before the streamed
 * condition (no `config.conditions`) ran none, chain and dag, and verify as before.
 *
 * Trust: by default the keys recorded in the file (the run's own deployers) — that
 * checks the archive's internal consistency. Pass your own directory to check it
 * against keys you trust.
 */
import { KeyDirectory, parseDirectory } from '../attest/key-directory.js';
import type { RevocationPolicy } from '../attest/key-status.js';
import { codesFor } from '../attest/reasons.js';
import type { VerifyOptions } from '../attest/verify.js';
import type { StreamVerifyResult } from '../attest/stream/index.js';
import { sha256Hex } from '../core/hash.js';
import type { Problem } from '../core/problem.js';
import { type AnswerCheck, COMPLETED_STATE, type WireAnswer } from './answer.js';
import { type ArtifactRecord, artifactBytes, artifactText, type WireArtifact } from './artifact.js';
import { cardDeployer, verifyAgentCard } from './card.js';
import { conditionParts, E12_KIND } from './e12.js';
import { EVIDENCE_KEY } from './metadata.js';
import {
  codeList,
  type E12FileTrial,
  forgeryProblems,
  ResultsSchema,
  sameCodes,
  shapeProblems,
  summaryProblems,
} from './e12-file.js';
import { verifyStreamedAnswer } from './stream-answer.js';

/** What can be wrong with an E12 file, by code, with its meaning (docs/a2a.md §3): attest's one vocabulary. */
export const E12_PROBLEM_CODES = codesFor([
  'MALFORMED',
  'UNKNOWN_KEY',
  'TASK_ID_REPEATED',
  'OUTPUT_MISMATCH',
  'LENGTH_MISMATCH',
  'EVIDENCE_INVALID',
  'VERDICT_NOT_REPRODUCED',
  'SUMMARY_MISMATCH',
  'FORGERY_NOT_REPRODUCED',
  'CARD_INVALID',
  'INCOMPLETE',
]);
export type E12ProblemCode = keyof typeof E12_PROBLEM_CODES;
/** An E12 file's problem; its message names the trial, the forgery or the summary row it concerns. */
export type E12Problem = Problem<E12ProblemCode>;

export interface E12VerifyResult {
  ok: boolean;
  trials: number;
  verified: number;
  signatures: number;
  edges: number;
  /** Recorded streams (dag+stream trials) re-checked chunk by chunk, and their chunks. */
  streams: number;
  chunks: number;
  /** Every mismatch found, each naming the trial. */
  problems: E12Problem[];
  trustedKeys: 'file' | 'directory';
  /** The file says its run was interrupted: at best partial (an `INCOMPLETE` problem), never ok. */
  interrupted?: { at: string; trials_recorded: number; trials_planned: number };
}

export interface E12VerifyOptions {
  /** Your own key directory; default: the keys recorded in the file. */
  directory?: KeyDirectory;
  revocation?: RevocationPolicy;
  /** Deployers that must co-sign every delegation of every trial (see verifyPath). */
  requireCosigners?: readonly string[];
}

/** True when `value` declares itself an E12 results file (its parsed `type`, or `kind` in files written before). */
export function isE12Results(value: unknown): boolean {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const { type, kind } = value as { type?: unknown; kind?: unknown };
  return (type === E12_KIND) !== (kind === E12_KIND) && (type === undefined || kind === undefined);
}

export async function verifyE12Results(value: unknown, options: E12VerifyOptions = {}): Promise<E12VerifyResult> {
  const trustedKeys = options.directory ? 'directory' : 'file';
  const empty = (problems: E12Problem[]): E12VerifyResult => ({
    ok: false,
    trials: 0,
    verified: 0,
    signatures: 0,
    edges: 0,
    streams: 0,
    chunks: 0,
    problems,
    trustedKeys,
  });
  const parsed = ResultsSchema.safeParse(value);
  if (!parsed.success) {
    return empty(
      parsed.error.issues.slice(0, 8).map((issue) => ({
        code: 'MALFORMED',
        message: `Not a complete E12 results file: ${issue.path.join('.') || '(root)'}: ${issue.message}.`,
        ...(issue.path.length > 0 ? { at: issue.path.join('.') } : {}),
      })),
    );
  }
  const results = parsed.data;
  let directory = options.directory;
  if (!directory) {
    try {
      directory = new KeyDirectory(parseDirectory(results.keys, 'the results file keys'));
    } catch (error) {
      return empty([{ code: 'MALFORMED', message: (error as Error).message }]);
    }
  }
  const foreign = options.directory ? _foreignKeys(results.keys, options.directory) : undefined;
  if (foreign)
    return {
      ...empty([
        {
          code: 'UNKNOWN_KEY',
          message: `your key directory holds none of the keys that signed this run (${foreign.join(', ')}): give the directory that trusts them, or leave --keys out to check against the keys the file records`,
        },
      ]),
      trials: results.trials.length,
    };
  const problems = shapeProblems(results);
  const check = {
    directory,
    revocation: options.revocation ?? 'from-revoked-at',
    requireCosigners: options.requireCosigners ?? [],
  } as const;
  const card = verifyAgentCard(results.card, directory, Date.parse(results.created_at));
  const childDeployer = cardDeployer(results.card, card);
  const seen = new Set<string>();
  const verifiedBy = new Map<string, number>();
  let signatures = 0;
  let edges = 0;
  let streams = 0;
  let chunks = 0;
  for (const [i, t] of results.trials.entries()) {
    // `at` places the problem; the message names the trial's condition and task beside it.
    const at = `trial ${i}`;
    const where = `${t.condition} trial, task ${t.task_id}`;
    if (seen.has(t.task_id)) problems.push({ code: 'TASK_ID_REPEATED', message: `${where}: task id used twice.`, at });
    seen.add(t.task_id);
    const bytes = Buffer.from(t.output_text, 'utf8');
    const sha = sha256Hex(bytes);
    if (sha !== t.output_sha256)
      problems.push({
        code: 'OUTPUT_MISMATCH',
        message: `${where}: the output's SHA-256 is ${sha}, the record says ${t.output_sha256}.`,
        at,
      });
    if (bytes.length !== t.output_len)
      problems.push({
        code: 'LENGTH_MISMATCH',
        message: `${where}: the output has ${bytes.length} UTF-8 bytes, the record says ${t.output_len}.`,
        at,
      });
    if (t.artifact && artifactText([_wire(t.artifact)]) !== t.output_text)
      problems.push({
        code: 'OUTPUT_MISMATCH',
        message: `${where}: the output text is not the text of the artifact's parts.`,
        at,
      });
    const result = await verifyTrial(t, childDeployer, check);
    signatures += result.signaturesChecked;
    streams += result.streams.length;
    chunks += result.streams.reduce((n, x) => n + x.received, 0);
    edges += [...result.paths, ...result.streams.map((x) => x.path ?? [])]
      .flat()
      .filter((r) => r.type === 'edge').length;
    if (result.ok) verifiedBy.set(t.condition, (verifiedBy.get(t.condition) ?? 0) + 1);
    else
      problems.push({
        code: 'EVIDENCE_INVALID',
        message: `${where}: evidence does not verify: ${result.problems.map((r) => `${r.code}${r.at ? ` [${r.at}]` : ''} ${r.message}`).join('; ')}`,
        at,
      });
    if (result.ok !== t.verdict.ok)
      problems.push({
        code: 'VERDICT_NOT_REPRODUCED',
        message: `${where}: recorded verdict ${t.verdict.ok ? 'valid' : 'invalid'} is not reproduced.`,
        at,
      });
    else if (
      !sameCodes(
        t.verdict.reasons.map((r) => r.code),
        result.problems,
      )
    )
      problems.push({
        code: 'VERDICT_NOT_REPRODUCED',
        message: `${where}: recorded reasons ${codeList(t.verdict.reasons)}, re-verification gives ${codeList(result.problems)}.`,
        at,
      });
  }
  problems.push(...(await forgeryProblems(results.forgery, check)), ...summaryProblems(results, verifiedBy));
  if (!card.ok)
    problems.push({
      code: 'CARD_INVALID',
      message: `the child's Agent Card: ${card.reasons.map((r) => `${r.code} ${r.message}`).join('; ')}`,
      at: 'card',
    });
  const verified = [...verifiedBy.values()].reduce((a, b) => a + b, 0);
  return {
    ok: problems.length === 0,
    trials: results.trials.length,
    verified,
    signatures,
    edges,
    streams,
    chunks,
    problems,
    trustedKeys,
    ...(results.interrupted ? { interrupted: results.interrupted } : {}),
  };
}

type _Trial = E12FileTrial;

/**
 * A trial as the answer its parent received, A2A v1.0 JSON: the completed task holding
 * its artifact with the evidence in the artifact's metadata, or — in a file written
 * before results were artifacts — the message whose one text part is the output.
 */
export function trialAnswer(trial: Pick<_Trial, 'output_text' | 'artifact' | 'evidence'>): WireAnswer {
  const metadata = { [EVIDENCE_KEY]: trial.evidence };
  const a = trial.artifact;
  if (!a) return { message: { messageId: 'e12-trial', parts: [{ text: trial.output_text }], metadata } };
  return {
    task: {
      id: a.task_id,
      contextId: a.context_id,
      status: { state: COMPLETED_STATE },
      artifacts: [{ artifactId: a.artifact_id, parts: a.parts, metadata }],
    },
  };
}

/**
 * Re-checks one trial as of its recorded verification time with the one check of an
 * answer: released by `childDeployer` (the deployer of the file's card), under the
 * trial's construction, and — for dag+stream — its recorded stream against that answer
 * (stream-answer.ts); no nonce is consumed. There is no task receipt to pin the root
 * to: the file records none apart from the path.
 */
export async function verifyTrial(
  trial: Pick<_Trial, 'output_text' | 'artifact' | 'evidence' | 'condition' | 'verified_at' | 'stream'>,
  childDeployer: string,
  options: Omit<VerifyOptions, 'construction' | 'now' | 'nonceStore'>,
): Promise<AnswerCheck & { streams: StreamVerifyResult[] }> {
  const { construction, stream } = conditionParts(trial.condition);
  const { check, streams } = await verifyStreamedAnswer(
    trialAnswer(trial),
    trial.stream ? [trial.stream] : [],
    { construction, childDeployer },
    { ...options, now: Date.parse(trial.verified_at) },
  );
  if (stream && !trial.stream)
    return {
      ...check,
      ok: false,
      problems: [
        {
          code: 'MALFORMED',
          message: `A ${trial.condition} trial records the stream its parent was shown; this one has none.`,
          at: 'stream',
        },
        ...check.problems,
      ],
      streams,
    };
  return { ...check, streams };
}

/**
 * The bytes a trial's receipt covers: its artifact's (artifact.ts) or, in a file written
 * before results were artifacts, the UTF-8 of its output text.
 */
export function trialBytes(trial: { output_text: string; artifact?: ArtifactRecord }): Buffer {
  if (!trial.artifact) return Buffer.from(trial.output_text, 'utf8');
  return artifactBytes({ taskId: trial.artifact.task_id, contextId: trial.artifact.context_id }, _wire(trial.artifact));
}

function _wire(artifact: ArtifactRecord): WireArtifact {
  return { artifactId: artifact.artifact_id, parts: artifact.parts };
}

/**
 * The run's keys (as the file records them) when your directory holds none of them:
 * then every trial would fail on UNKNOWN_KEY, and one line says why. Undefined when
 * it holds one, or the file's keys cannot be read (the trials then say what is wrong).
 */
function _foreignKeys(keys: unknown, directory: KeyDirectory): string[] | undefined {
  let kids: string[];
  try {
    kids = parseDirectory(keys, 'the results file keys').keys.map((k) => k.kid);
  } catch {
    return undefined;
  }
  return kids.length > 0 && kids.every((kid) => !directory.get(kid)) ? kids : undefined;
}
