/**
 * @module
 * The record of one delegation that `witness a2a send --out FILE` writes (docs/a2a.md
 * §4; docs/schemas/a2a-delegation.schema.json): the child's card as fetched, the task
 * as sent with the parent's task receipt, the answer as received (A2A v1.0 JSON), when
 * it was verified and the verdict. `witness verify FILE --keys DIR` recognises it by its
 * `type` and re-verifies it in full, as of the recorded times: the card, the task
 * receipt over the task text, every result's evidence over its recomputed bytes (the
 * message text, or `artifactBytes` of each artifact), the root and the child, a streamed
 * answer's recorded streams (stream-answer.ts), and that the recorded verdict is
 * reproduced.
 */
import { z } from 'zod';
import type { KeyDirectory } from '../attest/key-directory.js';
import type { RevocationPolicy } from '../attest/key-status.js';
import { parseReceipt, type Receipt } from '../attest/receipt.js';
import type { StreamVerifyResult } from '../attest/stream/index.js';
import { checkPath } from '../attest/verify.js';
import type { AnswerCheck, AnswerProblem, WireAnswer } from './answer.js';
import { cardDeployer, verifyAgentCard } from './card.js';
import { CONDITIONS } from './metadata.js';
import { verifyStreamedAnswer } from './stream-answer.js';

/** The declared `type` of a delegation record. */
export const DELEGATION_RECORD_TYPE = 'witness/a2a-delegation';

const _Json = z.record(z.string(), z.unknown());
const _Time = z.iso.datetime({ offset: false, precision: 3 });
const ProblemSchema = z.strictObject({
  code: z
    .string()
    .regex(/^[A-Z][A-Z_]*$/)
    .describe('a reason code of the one vocabulary (docs/attest.md §3)'),
  message: z.string(),
  at: z.string().optional().describe('where: "message, receipt 1", "artifact 0 (a1), receipt 1", "task"'),
});

export const DelegationRecordSchema = z
  .strictObject({
    type: z.literal(DELEGATION_RECORD_TYPE),
    v: z.literal(1),
    created_at: _Time.describe('when the parent fetched the card and signed the task (UTC, milliseconds)'),
    url: z.string().min(1).describe('the child agent as the parent named it (base URL or card URL)'),
    card: _Json.describe("the child's signed Agent Card as fetched (A2A v1.0 JSON, with its signatures)"),
    request: z
      .strictObject({
        task_id: z.string().min(1).describe('the delegation task id the parent chose (the grant names it)'),
        construction: z.enum(CONDITIONS).describe('the ancestry construction the parent asked for and pinned'),
        text: z.string().min(1).describe('the task as sent: the one text part of the request message'),
        evidence: z
          .strictObject({ path: z.array(_Json).length(1) })
          .nullable()
          .describe("the parent's task receipt over the task text's UTF-8 bytes (chain, dag); null under none"),
      })
      .describe('the task as sent, without the grant credential'),
    answer: z
      .union([
        z.strictObject({ message: _Json.describe('the answer message, A2A v1.0 JSON') }),
        z.strictObject({ task: _Json.describe('the answer task, A2A v1.0 JSON, without its history') }),
      ])
      .describe("the child's answer as received, in the shape of a SendMessageResponse: {message} or {task}"),
    streams: z
      .array(z.array(_Json).min(1))
      .min(1)
      .optional()
      .describe(
        'a streamed answer: each artifact stream as the parent recorded it, its lines as JSON values (a witness/stream recording, docs/attest.md §10); absent when nothing was streamed',
      ),
    verified_at: _Time.describe('when the parent verified the answer: the re-check is made as of this time'),
    verdict: z
      .strictObject({
        ok: z.boolean().describe('true only when every result verified'),
        problems: z.array(ProblemSchema).describe('every problem found; empty exactly when ok'),
      })
      .describe("the parent's verdict at verified_at"),
  })
  .describe('The record of one delegation written by witness a2a send --out (docs/a2a.md §4).');
export type DelegationRecord = z.infer<typeof DelegationRecordSchema>;

/** The JSON Schema of a delegation record (docs/schemas/a2a-delegation.schema.json, `npm run schemas`). */
export function delegationRecordJsonSchema(): Record<string, unknown> {
  const { $schema, ...schema } = z.toJSONSchema(DelegationRecordSchema);
  return {
    $schema,
    $id: 'https://agent-witness.dev/schemas/a2a-delegation.schema.json',
    title: 'Witness A2A delegation record',
    ...schema,
  };
}

export interface RecordVerifyOptions {
  /** Your own key directory: the only trust root. */
  directory: KeyDirectory;
  revocation?: RevocationPolicy;
  /** Deployers that must co-sign every delegation (see verifyPath). */
  requireCosigners?: readonly string[];
}

export interface RecordVerifyResult {
  ok: boolean;
  problems: AnswerProblem[];
  /** The answer's check, when the record could be read. */
  check?: AnswerCheck;
  /** Each recorded stream's verdict, for a streamed answer. */
  streams?: StreamVerifyResult[];
  record?: DelegationRecord;
  /** The deployer the card's signing key belongs to in your directory (or, when the card fails, the one it names). */
  childDeployer?: string;
}

/** A stream recorded twice would count its chunks twice in what the record says was streamed. */
function _repeatedStreams(streams: readonly StreamVerifyResult[]): AnswerProblem[] {
  const seen = new Set<string>();
  return streams.flatMap((s, i) => {
    if (!s.stream) return [];
    const key = JSON.stringify([s.stream.session, s.stream.task, s.stream.artifact]);
    if (!seen.has(key)) {
      seen.add(key);
      return [];
    }
    return [
      {
        code: 'MALFORMED',
        message: `streams[${i}] is a second recording of the stream of artifact ${s.stream.artifact}: each artifact is streamed once`,
        at: `streams[${i}]`,
      },
    ];
  });
}

/**
 * `--revocation all` refuses every receipt of a revoked key once its revocation has
 * passed by the real clock: the re-check runs as of the record's `verified_at`, which
 * whoever holds the record can edit, so the revocations are judged here by `Date.now()`.
 */
function _revokedSince(
  answer: AnswerCheck,
  streams: readonly StreamVerifyResult[],
  directory: KeyDirectory,
  verifiedAt: number,
): AnswerProblem[] {
  const kids = new Set([...answer.paths, ...streams.map((s) => s.path ?? [])].flat().map((r) => r.key_id));
  const now = Date.now();
  return [...kids].flatMap((kid) => {
    const revokedAt = directory.get(kid)?.revokedAt;
    // Revoked by the record's own time: the re-check as of that time has said so already.
    if (revokedAt === undefined || now < revokedAt || revokedAt <= verifiedAt) return [];
    return [
      {
        code: 'REVOKED_KEY',
        message: `Key ${kid} was revoked at ${new Date(revokedAt).toISOString()}; the revocation policy "all" refuses every receipt of a revoked key, whenever the record says it was verified.`,
      },
    ];
  });
}

/** Re-verifies a parsed delegation record as of its recorded times; consumes no nonce. */
export async function verifyDelegationRecord(
  value: unknown,
  options: RecordVerifyOptions,
): Promise<RecordVerifyResult> {
  const parsed = DelegationRecordSchema.safeParse(value);
  if (!parsed.success)
    return {
      ok: false,
      problems: parsed.error.issues.slice(0, 8).map((issue) => ({
        code: 'MALFORMED',
        message: `Not a delegation record: ${issue.path.join('.') || '(root)'}: ${issue.message}.`,
      })),
    };
  const record = parsed.data;
  const now = Date.parse(record.verified_at);
  const problems: AnswerProblem[] = [];
  const card = verifyAgentCard(record.card, options.directory, Date.parse(record.created_at));
  if (!card.ok)
    problems.push({
      code: 'CARD_INVALID',
      message: `the child's Agent Card: ${card.reasons.map((r) => `${r.code} ${r.message}`).join('; ')}`,
      at: 'card',
    });
  const childDeployer = cardDeployer(record.card, card);
  const check = { directory: options.directory, now, revocation: options.revocation ?? 'from-revoked-at' } as const;
  const taskReceipt = _taskReceipt(record, check, problems);
  const expected = {
    construction: record.request.construction,
    childDeployer,
    ...(taskReceipt ? { taskReceipt } : {}),
  };
  const { check: answer, streams } = await verifyStreamedAnswer(
    record.answer as WireAnswer,
    record.streams ?? [],
    expected,
    {
      ...check,
      requireCosigners: options.requireCosigners ?? [],
    },
  );
  problems.push(...answer.problems, ..._repeatedStreams(streams));
  // A replay is known only to the nonce store the parent used: the record keeps it, a re-check cannot undo it.
  for (const p of record.verdict.problems.filter((x) => x.code === 'REPLAY'))
    problems.push({ code: 'REPLAY', message: `recorded at ${record.verified_at}: ${p.message}` });
  if (record.verdict.ok !== (problems.length === 0))
    problems.push({
      code: 'VERDICT_NOT_REPRODUCED',
      message: `the record says ${record.verdict.ok ? 'valid' : 'invalid'}; the re-check finds it ${problems.length === 0 ? 'valid' : 'invalid'}.`,
    });
  // After the verdict's re-check: a key revoked since the record was verified changes today's answer, not that one.
  if (options.revocation === 'all') problems.push(..._revokedSince(answer, streams, options.directory, now));
  return {
    ok: problems.length === 0,
    problems,
    check: answer,
    streams,
    record,
    childDeployer,
  };
}

/**
 * The parent's task receipt, checked over the task text as of the verification time:
 * under none there is none; under chain and dag it is the root every result must start at.
 */
function _taskReceipt(
  record: DelegationRecord,
  options: Parameters<typeof checkPath>[2],
  problems: AnswerProblem[],
): Receipt | undefined {
  const { construction, evidence, text } = record.request;
  if ((construction === 'none') !== (evidence === null)) {
    problems.push({
      code: 'MALFORMED',
      message: `request.evidence must be null exactly under construction none (it is ${construction}).`,
      at: 'task receipt',
    });
    return undefined;
  }
  if (!evidence) return undefined;
  const root = evidence.path[0];
  const parsed = parseReceipt(root);
  const check = checkPath([root], Buffer.from(text, 'utf8'), { ...options, construction });
  for (const r of check.reasons) problems.push({ code: r.code, message: r.message, at: 'task receipt' });
  return parsed.ok ? parsed.value.receipt : undefined;
}
