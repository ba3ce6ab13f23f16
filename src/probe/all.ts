/**
 * @module
 * `witness probe --all`: the probe over every agent runtime that is installed (on
 * PATH or in the checkout's `.tools/`), one after the other, summed up as one row
 * per runtime — version, the MCP protocol version its sessions negotiated (from the
 * server's session log), the three verdicts, the built-ins that shadow a mailbox
 * tool, push delivered / seen by the model per push path (with `push`), seconds.
 * Runtimes that are not installed are listed as skipped, not run; a runtime the
 * machine cannot install says so, with the known built-ins it falls back on.
 */
import { findBin } from './adapters/common.js';
import { RUNTIME_ADAPTERS } from './adapters/index.js';
import { servedTools } from './inventory.js';
import { knownBuiltins } from './known-builtins.js';
import { type ProbeOptions, runProbe } from './probe.js';
import { findClashes } from './shadowing.js';
import type { CheckName, ProbeReport, PushAnswer, PushPath, Verdict } from './types.js';

/** Runtimes with an executable of their own name; `command` needs a template. */
const RUNNABLE = RUNTIME_ADAPTERS.filter((r) => r !== 'command');

export interface RuntimeRow {
  runtime: string;
  version?: string;
  verdicts: Partial<Record<CheckName, Verdict>>;
  /** Built-ins that name a mailbox action, as `Builtin≈mailbox_tool`. */
  shadowing: string[];
  /** The protocol version(s) negotiated in initialize, as the server answered them. */
  protocol?: string[];
  /** Push delivered to the runtime / seen by the model, per path (with `push`). */
  push?: Partial<Record<PushPath, { delivered: PushAnswer; seen: PushAnswer }>>;
  seconds: number;
  ok: boolean;
}

/** A runtime not run here: why, and the built-ins witness knows for it (not asked of the runtime). */
export interface Skipped {
  runtime: string;
  reason: string;
  known_builtins?: { tools: readonly string[]; source: string; shadowing: string[] };
}

/**
 * Runtimes that cannot be installed where the probe's runtimes come from (npm): they
 * are never found in .tools, and the matrix says why rather than "not installed".
 */
const NOT_FROM_NPM: Readonly<Record<string, string>> = {
  openhands:
    'OpenHands CLI is a Python package (uv tool install openhands), not on npm: it cannot be installed into .tools here',
};

export interface AllReport {
  format: 'witness-probe-all/1';
  started_at: string;
  ok: boolean;
  rows: RuntimeRow[];
  skipped: Skipped[];
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
      skipped.push(skippedRow(runtime));
      continue;
    }
    options.onProgress?.(`runtime ${runtime} (${bin})`);
    const report = await runProbe({ ...options, runtime, bin });
    reports.push(report);
    rows.push(rowOf(report));
  }
  return {
    format: 'witness-probe-all/1',
    started_at: started.toISOString(),
    ok: rows.length > 0 && rows.every((r) => r.ok),
    rows,
    skipped,
    reports,
  };
}

export function rowOf(report: ProbeReport): RuntimeRow {
  return {
    runtime: report.runtime,
    ...(report.version ? { version: report.version } : {}),
    verdicts: Object.fromEntries(report.checks.map((c) => [c.check, c.verdict])),
    shadowing: report.preflight.shadowing.clashes.map((c) => `${c.tool}≈${c.shadows}`),
    ...(report.protocol ? { protocol: report.protocol.versions } : {}),
    ...(report.push
      ? { push: Object.fromEntries(report.push.map((p) => [p.path, { delivered: p.delivered, seen: p.seen }])) }
      : {}),
    seconds: Math.round(report.ms / 100) / 10,
    ok: report.ok,
  };
}

export function skippedRow(runtime: string, tools = servedTools('')): Skipped {
  const why = NOT_FROM_NPM[runtime];
  const known = why ? knownBuiltins(runtime)?.row : undefined;
  return {
    runtime,
    reason: why ?? `no executable "${runtime}" on PATH or in .tools`,
    ...(known
      ? {
          known_builtins: {
            tools: known.tools,
            source: known.source,
            shadowing: findClashes(known.tools, tools).map((c) => `${c.tool}≈${c.shadows}`),
          },
        }
      : {}),
  };
}

/** A push cell: delivered/seen, or n/a when the runtime offers no such path. */
export function pushCell(p: { delivered: PushAnswer; seen: PushAnswer } | undefined): string {
  if (!p) return '—';
  return p.delivered === 'n/a' ? 'n/a' : `${p.delivered}/${p.seen}`;
}

/** The table, one row per runtime, then the skipped ones. */
export function renderAll(report: AllReport): string {
  const push = report.rows.some((r) => r.push);
  const head = [
    'runtime',
    'version',
    'MCP protocol',
    'send',
    'receive',
    'control',
    'shadowing built-ins',
    ...(push ? ['push resource', 'push channel'] : []),
    'seconds',
  ];
  const lines = report.rows.map((r) => [
    r.runtime,
    r.version ?? '?',
    r.protocol?.join(', ') ?? '?',
    r.verdicts.send ?? '—',
    r.verdicts.receive ?? '—',
    r.verdicts.control ?? '—',
    r.shadowing.join(', ') || 'none',
    ...(push ? [pushCell(r.push?.resource), pushCell(r.push?.channel)] : []),
    r.seconds.toFixed(1),
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i]!.length)));
  const row = (cells: string[]) => `  ${cells.map((c, i) => c.padEnd(widths[i]!)).join('  ')}`.trimEnd();
  const out = [row(head), ...lines.map(row)];
  if (push)
    out.push(
      '',
      '  push cells: delivered to the runtime / seen by the model (server records / model requests); n/a: the runtime offers no such path',
    );
  for (const s of report.skipped)
    out.push(
      `  skipped ${s.runtime}: ${s.reason}${s.known_builtins ? `; known built-ins (not asked of the runtime): shadowing ${s.known_builtins.shadowing.join(', ') || 'none'}` : ''}`,
    );
  const passed = report.rows.filter((r) => r.ok).length;
  out.push('', `${report.ok ? 'PASS' : 'NOT PASSED'}: ${passed}/${report.rows.length} runtimes passed every check`);
  return `${out.join('\n')}\n`;
}
