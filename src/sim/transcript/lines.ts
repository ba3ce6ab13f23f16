/**
 * @module
 * Reading one signed results line: its receipt, the unsigned text the receipt hashes,
 * and the checks one line can make alone — the content digest, the content in the
 * one form the writer produces (so it has exactly one reading: no duplicate keys, no
 * other spelling of the same values), and the receipt naming the line's own run,
 * seq, seed, cell and prompt pack. Chain, plan and key checks need the neighbours
 * and belong to the callers.
 */
import { canonicalizeWithout } from '../../core/canonical-json.js';
import { sha256Hex } from '../../core/hash.js';
import type { RunRecord } from '../experiment/record.js';
import { type LineReceipt, LineReceiptSchema, receiptDigest, splitSignedLine } from './format.js';
import { type ResultsProblem, problem } from './reasons.js';

export interface SignedLine {
  line: number;
  record: RunRecord;
  receipt: LineReceipt;
  /** Canonical text of the receipt without `sig`: what its signature covers (after the tag). */
  unsignedReceipt: string;
  /** SHA-256 of tag + `unsignedReceipt`: the chain link. */
  digest: string;
}

/** A line that failed keeps what could be read of it: its receipt (for the chain), its run id and seq. */
export type LineResult =
  | { ok: true; value: SignedLine }
  | { ok: false; problem: ResultsProblem; receipt?: LineReceipt; id?: string; seq?: number };

/** Checks one line by itself (see the module comment). */
export function readSignedLine(raw: string, line: number): LineResult {
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch (error) {
    return _fail(problem('MALFORMED', `not JSON: ${(error as Error).message}`, line));
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed))
    return _fail(problem('MALFORMED', 'not a JSON object', line));
  const { receipt: rawReceipt, ...fields } = parsed as Record<string, unknown>;
  const id = typeof fields.id === 'string' ? fields.id : undefined;
  const seq = Number.isInteger(fields.seq) ? (fields.seq as number) : undefined;
  if (rawReceipt === undefined)
    return {
      ok: false,
      problem: problem('UNSIGNED_LINE', 'the line has no receipt: it was not written by a signed sweep', line),
      id,
      seq,
    };
  const checked = LineReceiptSchema.safeParse(rawReceipt);
  if (!checked.success) {
    const issue = checked.error.issues[0];
    return {
      ok: false,
      problem: problem('MALFORMED', `receipt.${issue?.path.join('.') || ''}: ${issue?.message}`, line),
      id,
      seq,
    };
  }
  const receipt = checked.data;
  const split = splitSignedLine(raw, parsed as Record<string, unknown>);
  if (!split)
    return _fail(
      problem(
        'NON_CANONICAL',
        'the receipt is not the last member of the line in RFC 8785 form, so the signed content cannot be read back exactly',
        line,
      ),
      receipt,
    );
  if (sha256Hex(split.content) !== receipt.content_sha256) {
    return _fail(
      problem(
        'CONTENT_MISMATCH',
        `the line's content does not hash to its receipt's content_sha256: a value of run ${receipt.run} was changed after it was written`,
        line,
      ),
      receipt,
    );
  }
  // The writer's form is JSON.stringify's: a duplicate key or another spelling of a value would differ from it.
  if (JSON.stringify(fields) !== split.content)
    return _fail(
      problem(
        'NON_CANONICAL',
        'the line is not in the form a sweep writes (a repeated key, or a value spelled another way), so it has no single reading',
        line,
      ),
      receipt,
    );
  const shape = _shapeProblem(fields);
  if (shape) return _fail(problem('MALFORMED', `not a results line: ${shape}`, line), receipt);
  const record = fields as unknown as RunRecord;
  const mismatch = _receiptMismatch(record, receipt);
  if (mismatch) return _fail(problem('RECEIPT_MISMATCH', mismatch, line), receipt);
  const unsignedReceipt = receipt.sig === undefined ? split.receiptText : canonicalizeWithout(receipt, 'sig').without;
  return { ok: true, value: { line, record, receipt, unsignedReceipt, digest: receiptDigest(unsignedReceipt) } };
}

/**
 * The fields verification reads, with their types. The rest of the line is covered
 * by its digest and left to readers of results (`witness report` validates it all).
 */
function _shapeProblem(v: Record<string, unknown>): string | undefined {
  const wrong =
    (['id', 'cell', 'experiment'] as const).find((k) => typeof v[k] !== 'string') ??
    (['seq', 'index', 'seed'] as const).find((k) => !Number.isInteger(v[k]));
  if (wrong) return `${wrong} is missing or has the wrong type`;
  if (v.config === null || typeof v.config !== 'object') return 'config is missing or not an object';
  const llm = v.llm as { prompts?: { hash?: unknown } } | undefined;
  if (llm !== undefined && typeof llm?.prompts?.hash !== 'string') return 'llm.prompts.hash is missing or not a string';
  return undefined;
}

function _fail(p: ResultsProblem, receipt?: LineReceipt): LineResult {
  return receipt ? { ok: false, problem: p, receipt } : { ok: false, problem: p };
}

function _receiptMismatch(record: RunRecord, receipt: LineReceipt): string | undefined {
  const prompts = record.llm?.prompts.hash ?? null;
  const pairs: [string, unknown, unknown][] = [
    ['run', receipt.run, record.id],
    ['seq', receipt.seq, record.seq],
    ['seed', receipt.seed, record.seed],
    ['cell', receipt.cell, record.cell],
    ['prompts', receipt.prompts, prompts],
  ];
  const wrong = pairs.find(([, a, b]) => a !== b);
  return wrong
    ? `the receipt says ${wrong[0]} ${JSON.stringify(wrong[1])}, the line ${JSON.stringify(wrong[2])}`
    : undefined;
}
