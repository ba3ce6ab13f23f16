/**
 * @module
 * Re-checks an E12 results file (`witness verify results.json`), as the seed did with
 * the paper's archive: every task id unique; every output's SHA-256 and UTF-8 byte
 * length recomputed from its text; every receipt signature and dag edge re-verified
 * (as of the trial's recorded verification time); the recorded verdicts reproduced;
 * the forgery still accepted under chain and rejected under dag; the card signature.
 *
 * Trust: by default the keys recorded in the file (the run's own deployers) — that
 * checks the archive's internal consistency. Pass your own directory to check it
 * against keys you trust.
 */
import { z } from 'zod';
import { KeyDirectory, parseDirectory } from '../attest/key-directory.js';
import { verifyEvidence } from '../attest/verify.js';
import { sha256Hex } from '../core/hash.js';
import { verifyAgentCard } from './card.js';
import { E12_KIND } from './e12.js';
import { CONDITIONS } from './metadata.js';

const TrialSchema = z.object({
  task_id: z.string(),
  condition: z.enum(CONDITIONS),
  output_text: z.string(),
  output_sha256: z.string(),
  output_len: z.number(),
  evidence: z.unknown(),
  verdict: z.object({ ok: z.boolean() }),
  verified_at: z.string(),
});
const ForgerySchema = z.object({ construction: z.enum(['chain', 'dag']), output_text: z.string(), evidence: z.unknown(), verified_at: z.string(), accepted: z.boolean() });
const ResultsSchema = z.object({ kind: z.literal(E12_KIND), v: z.literal(1), created_at: z.string(), keys: z.unknown(), card: z.unknown(), trials: z.array(TrialSchema), forgery: z.array(ForgerySchema) });

export interface E12VerifyResult {
  ok: boolean;
  trials: number;
  verified: number;
  signatures: number;
  edges: number;
  /** Every mismatch found, each naming the trial. */
  problems: string[];
  trustedKeys: 'file' | 'directory';
}

/** True when `value` is an E12 results file (its `kind`), so `witness verify` can route it here. */
export function isE12Results(value: unknown): boolean {
  return value !== null && typeof value === 'object' && (value as { kind?: unknown }).kind === E12_KIND;
}

export async function verifyE12Results(value: unknown, options: { directory?: KeyDirectory } = {}): Promise<E12VerifyResult> {
  const parsed = ResultsSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return { ok: false, trials: 0, verified: 0, signatures: 0, edges: 0, problems: [`Not an E12 results file: ${issue?.path.join('.') || '(root)'}: ${issue?.message}.`], trustedKeys: options.directory ? 'directory' : 'file' };
  }
  const results = parsed.data;
  const problems: string[] = [];
  let directory = options.directory;
  if (!directory) {
    try {
      directory = new KeyDirectory(parseDirectory(results.keys, 'the results file keys'));
    } catch (error) {
      return { ok: false, trials: results.trials.length, verified: 0, signatures: 0, edges: 0, problems: [(error as Error).message], trustedKeys: 'file' };
    }
  }
  const seen = new Set<string>();
  let verified = 0;
  let signatures = 0;
  let edges = 0;
  for (const [i, t] of results.trials.entries()) {
    const where = `trial ${i} (${t.condition}, task ${t.task_id})`;
    if (seen.has(t.task_id)) problems.push(`${where}: task id used twice.`);
    seen.add(t.task_id);
    const bytes = Buffer.from(t.output_text, 'utf8');
    const sha = sha256Hex(bytes);
    if (sha !== t.output_sha256) problems.push(`${where}: the output's SHA-256 is ${sha}, the record says ${t.output_sha256}.`);
    if (bytes.length !== t.output_len) problems.push(`${where}: the output has ${bytes.length} UTF-8 bytes, the record says ${t.output_len}.`);
    const check = await verifyEvidence(t.evidence, bytes, { directory, construction: t.condition, now: Date.parse(t.verified_at) });
    signatures += check.signaturesChecked;
    edges += (check.path ?? []).filter((r) => r.type === 'edge').length;
    if (check.ok) verified++;
    else problems.push(`${where}: evidence does not verify: ${check.reasons.map((r) => `${r.code} ${r.message}`).join('; ')}`);
    if (check.ok !== t.verdict.ok) problems.push(`${where}: recorded verdict ${t.verdict.ok ? 'valid' : 'invalid'} is not reproduced.`);
  }
  for (const f of results.forgery) {
    const check = await verifyEvidence(f.evidence, Buffer.from(f.output_text, 'utf8'), { directory, construction: f.construction, now: Date.parse(f.verified_at) });
    const expected = f.construction === 'chain' ? check.ok : !check.ok && check.reasons.some((r) => r.code === 'COSIGNATURE_MISSING');
    if (!expected) problems.push(`forgery under ${f.construction}: expected ${f.construction === 'chain' ? 'accepted' : 'rejected with COSIGNATURE_MISSING'}, got ${check.ok ? 'accepted' : check.reasons.map((r) => r.code).join(', ')}.`);
    if (check.ok !== f.accepted) problems.push(`forgery under ${f.construction}: recorded ${f.accepted ? 'accepted' : 'rejected'} is not reproduced.`);
  }
  const card = verifyAgentCard(results.card, directory, Date.parse(results.created_at));
  if (!card.ok) problems.push(`the child's Agent Card: ${card.reasons.map((r) => `${r.code} ${r.message}`).join('; ')}`);
  return { ok: problems.length === 0, trials: results.trials.length, verified, signatures, edges, problems, trustedKeys: options.directory ? 'directory' : 'file' };
}
