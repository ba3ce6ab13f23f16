import { describe, expect, it } from 'vitest';
import type { E12Trial } from '../../src/a2a/e12.js';
import { formatE12Summary, pairedMedian, summarise } from '../../src/a2a/e12-summary.js';
import type { Condition } from '../../src/a2a/metadata.js';

function trial(round: number, condition: Condition, total: number, ok = true): E12Trial {
  const latency = {
    discovery_ms: 1,
    a2a_ms: 1,
    tool_ms: 1,
    model_ms: 0,
    sign_ms: 1,
    cosign_ms: 0,
    verify_ms: 1,
    total_ms: total,
    cpu_ms: total / 2,
  };
  return {
    round,
    task_id: `${round}-${condition}`,
    condition,
    output_text: 'x',
    output_sha256: '',
    output_len: 1,
    evidence: { path: [] },
    verdict: { ok, reasons: [] },
    verified_at: '',
    latency,
  };
}

describe('the E12 summary', () => {
  it('pairs dag and none trials of the same round and takes the median difference', () => {
    const trials = [
      trial(0, 'none', 10),
      trial(0, 'dag', 13),
      trial(1, 'dag', 30),
      trial(1, 'none', 10),
      trial(2, 'none', 50),
      trial(2, 'dag', 51),
    ];
    expect(pairedMedian(trials, 'dag', 'none')).toBe(3);
  });

  it('counts verified trials and takes the median and p95 of totals', () => {
    const s = summarise('dag', [trial(0, 'dag', 10), trial(1, 'dag', 20, false), trial(2, 'dag', 30)]);
    expect(s).toMatchObject({ n: 3, verified: 2, median_total_ms: 20, p95_total_ms: 30 });
    expect(s.mean.total_ms).toBe(20);
  });

  it('prints one row per condition, the overheads and the forgery outcome', () => {
    const summary = (['none', 'chain', 'dag'] as const).map((c) => summarise(c, [trial(0, c, 10)]));
    const text = formatE12Summary({
      config: {
        trials: 1,
        warmup: 0,
        agent: 'policy',
        node: 'v20',
        platform: 'linux-x64',
        cpus: 2,
        load_average: [1, 2],
      },
      summary,
      forgery: [
        {
          construction: 'dag',
          output_text: '',
          evidence: { path: [] },
          verified_at: '',
          accepted: false,
          reasons: ['COSIGNATURE_MISSING'],
        },
      ],
      overhead_dag_vs_none_ms: 1.5,
      overhead_chain_vs_none_ms: 0.5,
      overhead_dag_vs_none_cpu_ms: 0.25,
      overhead_dag_vs_none_paired_median_ms: 1,
    });
    expect(text).toMatch(/^dag +1 +1\/1 +10\.0/m);
    expect(text).toMatch(/overhead dag over none: \+1\.500 ms \(mean total\), \+1\.000 ms/);
    expect(text).toMatch(/dag {2}: rejected COSIGNATURE_MISSING/);
  });
});
