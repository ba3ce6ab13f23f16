/**
 * @module
 * `witness probe --all`: the probe over every agent runtime that is installed (on
 * PATH or in the checkout's `.tools/`), one after the other, summed up as one row
 * per runtime — version, the three verdicts, the built-ins that shadow a mailbox
 * tool, seconds. Runtimes that are not installed are listed as skipped, not run.
 */
import { findBin } from './adapters/common.js';
import { RUNTIME_ADAPTERS } from './adapters/index.js';
import { type ProbeOptions, runProbe } from './probe.js';
import type { CheckName, ProbeReport, Verdict } from './types.js';

/** Runtimes with an executable of their own name; `command` needs a template. */
const RUNNABLE = RUNTIME_ADAPTERS.filter((r) => r !== 'command');

export interface RuntimeRow {
  runtime: string;
  version?: string;
  verdicts: Partial<Record<CheckName, Verdict>>;
  /** Built-ins that name a mailbox action, as `Builtin≈mailbox_tool`. */
  shadowing: string[];
  seconds: number;
  ok: boolean;
}

export interface AllReport {
  format: 'witness-probe-all/1';
  started_at: string;
  ok: boolean;
  rows: RuntimeRow[];
  skipped: Array<{ runtime: string; reason: string }>;
  reports: ProbeReport[];
}

export type AllOptions = Omit<ProbeOptions, 'runtime' | 'bin' | 'template' | 'keep'> & { runtimes?: readonly string[] };

export async function runAll(options: AllOptions): Promise<AllReport> {
  const started = new Date();
  const rows: RuntimeRow[] = [];
  const skipped: AllReport['skipped'] = [];
  const reports: ProbeReport[] = [];
  for (const runtime of options.runtimes ?? RUNNABLE) {
    const bin = findBin(runtime, {});
    if (!bin) {
      skipped.push({ runtime, reason: `no executable "${runtime}" on PATH or in .tools` });
      continue;
    }
    options.onProgress?.(`runtime ${runtime} (${bin})`);
    const report = await runProbe({ ...options, runtime, bin });
    reports.push(report);
    rows.push(rowOf(report));
  }
  return { format: 'witness-probe-all/1', started_at: started.toISOString(), ok: rows.length > 0 && rows.every((r) => r.ok), rows, skipped, reports };
}

export function rowOf(report: ProbeReport): RuntimeRow {
  return {
    runtime: report.runtime,
    ...(report.version ? { version: report.version } : {}),
    verdicts: Object.fromEntries(report.checks.map((c) => [c.check, c.verdict])),
    shadowing: report.preflight.shadowing.clashes.map((c) => `${c.tool}≈${c.shadows}`),
    seconds: Math.round(report.ms / 100) / 10,
    ok: report.ok,
  };
}

/** The table, one row per runtime, then the skipped ones. */
export function renderAll(report: AllReport): string {
  const head = ['runtime', 'version', 'send', 'receive', 'control', 'shadowing built-ins', 'seconds'];
  const lines = report.rows.map((r) => [r.runtime, r.version ?? '?', r.verdicts.send ?? '—', r.verdicts.receive ?? '—', r.verdicts.control ?? '—', r.shadowing.join(', ') || 'none', r.seconds.toFixed(1)]);
  const widths = head.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i]!.length)));
  const row = (cells: string[]) => `  ${cells.map((c, i) => c.padEnd(widths[i]!)).join('  ')}`.trimEnd();
  const out = [row(head), ...lines.map(row)];
  for (const s of report.skipped) out.push(`  skipped ${s.runtime}: ${s.reason}`);
  const passed = report.rows.filter((r) => r.ok).length;
  out.push('', `${report.ok ? 'PASS' : 'NOT PASSED'}: ${passed}/${report.rows.length} runtimes passed every check`);
  return `${out.join('\n')}\n`;
}
