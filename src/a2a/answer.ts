/**
 * @module
 * The one check of a child's answer (docs/a2a.md §4.1), read from its A2A v1.0 JSON:
 * a Message whose one text part is the released output, or a Task that completed with
 * artifacts, each released over `artifactBytes` (artifact.ts). `witness a2a send`, its
 * delegation record, the parent's `delegate()` (E12), E12's re-verification and the
 * viewer all check answers here. Beyond attest's verifier, every evidence path must
 * start at the task receipt this parent signed for this delegation, and end at a release
 * by the child whose card the parent verified: a valid receipt for something else is not
 * an answer to this task. Only an answer that passes every check consumes its nonces.
 */
import { z } from 'zod';
import type { EvidenceCode } from '../attest/reasons.js';
import { evidencePath, type Receipt, receiptDigest } from '../attest/receipt.js';
import { acceptPath, checkPath, type PathCheck, type VerifyOptions } from '../attest/verify.js';
import { isWitnessError } from '../core/errors.js';
import { type Problem, problemWithin } from '../core/problem.js';
import { artifactBytes, artifactText, partText } from './artifact.js';
import { type Condition, ERROR_KEY, EVIDENCE_KEY } from './metadata.js';

const _Metadata = z.record(z.string(), z.unknown());
// A2A v1.0 JSON leaves out empty lists and strings (the SDK's toJSON does): absent is empty.
const WireMessageSchema = z.looseObject({
  messageId: z.string(),
  parts: z.array(z.unknown()).default([]),
  metadata: _Metadata.optional(),
});
/** The wire name of the one state in which a task's artifacts are released results. */
export const COMPLETED_STATE = 'TASK_STATE_COMPLETED';

const WireArtifactSchema = z.looseObject({
  artifactId: z.string().min(1),
  parts: z.array(z.unknown()).min(1),
  metadata: _Metadata.optional(),
});
const WireTaskSchema = z.looseObject({
  id: z.string().min(1),
  contextId: z.string().default(''),
  status: z.looseObject({ state: z.string(), message: WireMessageSchema.optional() }).optional(),
  artifacts: z
    .array(WireArtifactSchema)
    .default([])
    .refine((a) => new Set(a.map((x) => x.artifactId)).size === a.length, {
      message: 'an artifact id appears twice; each artifact is released once',
    }),
  metadata: _Metadata.optional(),
});

/**
 * A child's answer as A2A v1.0 JSON, in the shape of a `SendMessageResponse` on the
 * wire: `{message}` or `{task}` (`Message.toJSON` / `Task.toJSON` of `@a2a-js/sdk`).
 */
export type WireAnswer = { message: unknown } | { task: unknown };

/** What the parent asked for, which every result's evidence must match. */
export interface AnswerExpectation {
  construction: Condition;
  /** The parent's task receipt, the root of every path under chain and dag; absent under none. */
  taskReceipt?: Receipt;
  /** The deployer whose Agent Card the parent verified: every result must be its release. */
  childDeployer: string;
}

/** A problem of an answer; `at` says where: "message, receipt 1", "artifact 0 (a1), receipt 1", "task". */
export type AnswerProblem = Problem<EvidenceCode>;

export interface AnswerCheck {
  ok: boolean;
  /** The text a user reads: the message's text part, or the text parts of the task's artifacts in order. */
  output: string;
  problems: AnswerProblem[];
  /** Each result's path, root first (one for a message, one per artifact), where it parsed. */
  paths: Receipt[][];
  signaturesChecked: number;
  /** The A2A task's id, context and state, for a task. */
  task?: { id: string; contextId: string; state: string };
}

/** Checks a Message or a Task answer; `options.construction` is the expectation's. */
export function verifyAnswer(
  answer: WireAnswer,
  expected: AnswerExpectation,
  options: Omit<VerifyOptions, 'construction'>,
): Promise<AnswerCheck> {
  return 'message' in answer
    ? verifyMessageAnswer(answer.message, expected, options)
    : verifyTaskArtifacts(answer.task, expected, options);
}

/** A Message answer: exactly one text part, released with the evidence in the message metadata. */
export async function verifyMessageAnswer(
  message: unknown,
  expected: AnswerExpectation,
  options: Omit<VerifyOptions, 'construction'>,
): Promise<AnswerCheck> {
  const m = WireMessageSchema.safeParse(message);
  if (!m.success) return _unusable(`The answer is not an A2A message: ${_issue(m.error)}.`);
  const texts = m.data.parts.map(partText);
  const text = texts[0];
  if (texts.length !== 1 || text === undefined)
    return _unusable(
      `The answer message holds ${m.data.parts.length} part(s), ${texts.filter((t) => t !== undefined).length} of them text; an attested message holds exactly one text part, the released output.`,
    );
  const bytes = Buffer.from(text, 'utf8');
  const result = _checkResult(m.data.metadata?.[EVIDENCE_KEY], bytes, 'message', expected, options);
  return _accept([result], text, options);
}

/**
 * A Task answer: it completed, holds at least one artifact, and every artifact carries
 * evidence whose leaf covers `artifactBytes` of that artifact in this task and context.
 * A task that did not complete is `TASK_FAILED`, with the child's reason.
 */
export async function verifyTaskArtifacts(
  task: unknown,
  expected: AnswerExpectation,
  options: Omit<VerifyOptions, 'construction'>,
): Promise<AnswerCheck> {
  const t = WireTaskSchema.safeParse(task);
  if (!t.success) return _unusable(`The answer is not an A2A task: ${_issue(t.error)}.`);
  const { id, contextId, artifacts } = t.data;
  const state = t.data.status?.state ?? 'TASK_STATE_UNSPECIFIED';
  const output = artifactText(artifacts);
  const about = { id, contextId, state };
  if (state !== COMPLETED_STATE) return { ..._unusable(_failure(t.data), 'TASK_FAILED', 'task'), output, task: about };
  if (artifacts.length === 0)
    return {
      ..._unusable('The task completed without an artifact: there is no released result.', 'EVIDENCE_MISSING', 'task'),
      task: about,
    };
  const results = artifacts.map((artifact, i) => {
    const where = `artifact ${i} (${artifact.artifactId})`;
    let bytes: Buffer;
    try {
      bytes = artifactBytes({ taskId: id, contextId }, artifact);
    } catch (error) {
      if (!isWitnessError(error, 'NOT_CANONICALIZABLE')) throw error;
      return _problemOnly({
        code: 'MALFORMED',
        message: `The ${where} has parts with no canonical JSON form: ${error.message}`,
        at: where,
      });
    }
    return _checkResult(artifact.metadata?.[EVIDENCE_KEY], bytes, where, expected, options);
  });
  return { ...(await _accept(results, output, options)), task: about };
}

interface _Result {
  /** Which result: "message", "artifact 0 (a1)". */
  where: string;
  check?: PathCheck;
  problems: AnswerProblem[];
}

/** Every check of one result but the nonce: attest's, then root and child. */
function _checkResult(
  evidence: unknown,
  bytes: Buffer,
  where: string,
  expected: AnswerExpectation,
  options: Omit<VerifyOptions, 'construction'>,
): _Result {
  if (evidence === undefined)
    return _problemOnly({
      code: 'EVIDENCE_MISSING',
      message: `The ${where} carries no ${EVIDENCE_KEY}: an unattested result is not accepted.`,
      at: where,
    });
  const path = evidencePath(evidence);
  if (!path.ok) return { where, problems: path.reasons.map((r) => ({ code: r.code, message: r.message, at: where })) };
  const check = checkPath(path.value, bytes, { ...options, construction: expected.construction });
  const problems: AnswerProblem[] = check.reasons.map((r) => problemWithin(where, r));
  problems.push(...pathOriginProblems(check.path ?? [], expected, where));
  return { where, check, problems };
}

/**
 * Beyond the receipts: a path must start at the task receipt this parent signed for the
 * delegation (ROOT_MISMATCH) and end at a release by the child whose card it verified
 * (CHILD_MISMATCH). For an artifact's path, and for a streamed artifact's final receipt.
 */
export function pathOriginProblems(
  receipts: readonly Receipt[],
  expected: AnswerExpectation,
  where: string,
): AnswerProblem[] {
  const problems: AnswerProblem[] = [];
  const root = receipts[0];
  const leaf = receipts.at(-1);
  if (root && expected.taskReceipt && receiptDigest(root) !== receiptDigest(expected.taskReceipt))
    problems.push({
      code: 'ROOT_MISMATCH',
      message: `The path starts at receipt ${receiptDigest(root)}, not at the task receipt ${receiptDigest(expected.taskReceipt)} this parent signed for the delegation: it answers another task.`,
      at: `${where}, receipt 0`,
    });
  if (leaf && leaf.deployer !== expected.childDeployer)
    problems.push({
      code: 'CHILD_MISMATCH',
      message: `The result was released by ${leaf.deployer}, not by ${expected.childDeployer}, whose Agent Card was verified.`,
      at: `${where}, receipt ${receipts.length - 1}`,
    });
  return problems;
}

/** The answer's verdict: its nonces are consumed only when every result passed every check. */
async function _accept(
  results: _Result[],
  output: string,
  options: Pick<VerifyOptions, 'nonceStore'>,
): Promise<AnswerCheck> {
  const problems = results.flatMap((r) => r.problems);
  let signaturesChecked = 0;
  const paths: Receipt[][] = [];
  for (const r of results) {
    signaturesChecked += r.check?.signaturesChecked ?? 0;
    if (r.check?.path) paths.push(r.check.path);
  }
  if (problems.length === 0)
    for (const r of results) {
      const accepted = await acceptPath(r.check as PathCheck, options);
      problems.push(...accepted.reasons.map((x) => ({ code: x.code, message: x.message, at: r.where })));
    }
  return { ok: problems.length === 0, output, problems, paths, signaturesChecked };
}

function _problemOnly(problem: AnswerProblem & { at: string }): _Result {
  return { where: problem.at, problems: [problem] };
}

function _unusable(message: string, code: EvidenceCode = 'MALFORMED', at?: string): AnswerCheck {
  return {
    ok: false,
    output: '',
    problems: [{ code, message, ...(at ? { at } : {}) }],
    paths: [],
    signaturesChecked: 0,
  };
}

/** Why a task has no result: the child's ERROR_KEY (status message, then task), else its status text. */
function _failure(task: z.infer<typeof WireTaskSchema>): string {
  const state = task.status?.state ?? 'TASK_STATE_UNSPECIFIED';
  const error = _error(task.status?.message?.metadata?.[ERROR_KEY]) ?? _error(task.metadata?.[ERROR_KEY]);
  const said = task.status?.message?.parts
    .map(partText)
    .filter((x) => x !== undefined)
    .join('');
  const why = error ? `${error.code}: ${error.message}` : said || 'the child gave no reason';
  const ended = ['TASK_STATE_FAILED', 'TASK_STATE_CANCELED', 'TASK_STATE_REJECTED'].includes(state);
  const waiting = ['TASK_STATE_INPUT_REQUIRED', 'TASK_STATE_AUTH_REQUIRED'].includes(state);
  return ended
    ? `The child's task ${task.id} ended ${state} without a result: ${why}`
    : waiting
      ? `The child's task ${task.id} is waiting (${state}), which a delegation cannot answer: ${why}`
      : `The child's task ${task.id} had not finished (${state}).`;
}

function _error(value: unknown): { code: string; message: string } | undefined {
  const e = value as { code?: unknown; message?: unknown } | undefined;
  return typeof e?.code === 'string' && typeof e.message === 'string'
    ? { code: e.code, message: e.message }
    : undefined;
}

function _issue(error: z.ZodError): string {
  const issue = error.issues[0];
  return `${issue?.path.join('.') || '(root)'}: ${issue?.message}`;
}
