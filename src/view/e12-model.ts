/**
 * @module
 * The E12 page's data (`witness a2a bench` results, docs/a2a.md §3): the file's
 * verdict from `verifyE12Results` (what `witness verify results.json` reports), its
 * summary rows, overheads and forgery as recorded, one row per trial, and each trial's
 * and each forgery's delegation path as a graph, verified as e12-verify.ts verifies it
 * (its condition as the construction, as of its recorded verification time, trusting
 * the same keys): the receipts laid out by attest's verifier over the bytes they cover,
 * and a trial's verdict that of the one check of an answer (`verifyTrial`), whose
 * problems beyond the receipts (a release by another child) go on the whole path.
 * Every answer is computed once: the page and a bundle read the same.
 */
import { conditionParts, type E12Results } from '../a2a/e12.js';
import { e12SummaryTable, LATENCY_PARTS } from '../a2a/e12-summary.js';
import { cardDeployer, verifyAgentCard } from '../a2a/card.js';
import { type E12VerifyResult, trialBytes, verifyE12Results, verifyTrial } from '../a2a/e12-verify.js';
import { KeyDirectory, parseDirectory } from '../attest/key-directory.js';
import { REASON_CODES } from '../attest/reasons.js';
import { verifyEvidence } from '../attest/verify.js';
import { WitnessError } from '../core/errors.js';
import { attestationGraph } from './attest-model.js';
import { apiKey } from './page.js';

export interface E12Page {
  file: string;
  verify: E12VerifyResult & { trusting: string };
  created_at: string;
  config: E12Results['config'];
  summary: E12Results['summary'];
  /** The summary as `witness a2a bench` prints it: the page shows these rows. */
  summary_table: { head: string[]; rows: string[][] };
  latency_parts: readonly string[];
  overheads: Record<string, number>;
  forgery: Array<{ construction: string; accepted: boolean; reasons: string[]; verified_at: string }>;
  trials: Array<{
    i: number;
    round: number;
    task_id: string;
    condition: string;
    ok: boolean;
    codes: string[];
    total_ms: number;
    cpu_ms: number;
    output_len: number;
  }>;
  interrupted: E12Results['interrupted'] | null;
}

/** Every answer of the E12 pages, keyed as the page asks (`e12?`, `graph?of=trial:3`, …). */
export async function e12Answers(
  value: unknown,
  file: string,
  directory?: KeyDirectory,
): Promise<Record<string, unknown>> {
  const verify = await verifyE12Results(value, directory ? { directory } : {});
  const r = value as E12Results;
  if (!Array.isArray(r.trials) || !Array.isArray(r.forgery) || !Array.isArray(r.summary)) {
    // Not even the shape of a run: the verdict says why, and there is nothing else to show.
    throw new WitnessError(
      'INVALID_INPUT',
      `${file} is not an E12 results file the viewer can show: ${verify.problems.map((p) => `${p.code} ${p.message}`).join('; ')}`,
    );
  }
  const trust = directory ?? new KeyDirectory(parseDirectory(r.keys, 'the results file keys'));
  const page: E12Page = {
    file,
    verify: { ...verify, trusting: directory ? 'your key directory' : 'the keys recorded in the file' },
    created_at: r.created_at,
    config: r.config,
    summary: r.summary,
    summary_table: e12SummaryTable(r.summary),
    latency_parts: LATENCY_PARTS,
    overheads: {
      dag_vs_none_ms: r.overhead_dag_vs_none_ms,
      chain_vs_none_ms: r.overhead_chain_vs_none_ms,
      dag_vs_none_cpu_ms: r.overhead_dag_vs_none_cpu_ms,
      dag_vs_none_paired_median_ms: r.overhead_dag_vs_none_paired_median_ms,
      ...(r.overhead_dag_stream_vs_none_ms === undefined
        ? {}
        : {
            dag_stream_vs_none_ms: r.overhead_dag_stream_vs_none_ms,
            dag_stream_vs_dag_ms: r.overhead_dag_stream_vs_dag_ms ?? Number.NaN,
            dag_stream_vs_none_cpu_ms: r.overhead_dag_stream_vs_none_cpu_ms ?? Number.NaN,
          }),
    },
    forgery: r.forgery.map((f) => ({
      construction: f.construction,
      accepted: f.accepted,
      reasons: f.reasons,
      verified_at: f.verified_at,
    })),
    trials: r.trials.map((t, i) => ({
      i,
      round: t.round,
      task_id: t.task_id,
      condition: t.condition,
      ok: t.verdict.ok,
      codes: [...new Set(t.verdict.reasons.map((x) => x.code))],
      total_ms: t.latency.total_ms,
      cpu_ms: t.latency.cpu_ms,
      output_len: t.output_len,
    })),
    interrupted: r.interrupted ?? null,
  };
  const answers: Record<string, unknown> = { [apiKey('about', {})]: { kind: 'e12', file }, [apiKey('e12', {})]: page };
  const graph = async (
    evidence: unknown,
    bytes: Buffer,
    construction: 'none' | 'chain' | 'merkle' | 'dag',
    at: string,
    title: string,
  ) => {
    const result = await verifyEvidence(evidence, bytes, {
      directory: trust,
      construction,
      now: Date.parse(at),
      revocation: 'from-revoked-at',
    });
    return { title, back: '#/e12', ...attestationGraph(result, trust) };
  };
  const child = cardDeployer(r.card, verifyAgentCard(r.card, trust, Date.parse(r.created_at)));
  for (const [i, t] of r.trials.entries()) {
    const drawn = await graph(
      t.evidence,
      trialBytes(t),
      conditionParts(t.condition).construction,
      t.verified_at,
      `trial ${i}: ${t.condition}, task ${t.task_id}`,
    );
    const answer = await verifyTrial(t, child, { directory: trust, revocation: 'from-revoked-at' });
    const beyond = answer.problems
      .filter((p) => !(p.code in REASON_CODES))
      .map((p) => ({ code: p.code, message: p.at ? `${p.at}: ${p.message}` : p.message }));
    answers[apiKey('graph', { of: `trial:${i}` })] = {
      ...drawn,
      ok: drawn.ok && answer.ok,
      path_reasons: [...drawn.path_reasons, ...beyond],
    };
  }
  for (const [i, f] of r.forgery.entries())
    answers[apiKey('graph', { of: `forgery:${i}` })] = await graph(
      f.evidence,
      Buffer.from(f.output_text, 'utf8'),
      f.construction,
      f.verified_at,
      `the forgery under ${f.construction}: the child's key alone claims a parent`,
    );
  return answers;
}
