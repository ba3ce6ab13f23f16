/**
 * @module
 * The probe report as text: the preflight, then one row per check with its verdict
 * and the reason, then the evidence behind each verdict that is not a pass.
 */
import type { ProbeReport } from './types.js';

export function renderReport(report: ProbeReport): string {
  const p = report.preflight;
  const out: string[] = [];
  out.push(
    `witness probe ${report.runtime}${report.version ? ` ${report.version}` : ''}${report.model ? ` (model ${report.model})` : ''} — tool prefix ${JSON.stringify(report.tool_prefix)}`,
  );
  out.push(`  runtime     ${p.runtime.found ? `found ${p.runtime.bin ?? ''}`.trim() : `MISSING: ${p.runtime.reason}`}`);
  if (p.config)
    out.push(`  config      ${p.config.file} ${p.config.has_server ? 'has the server' : 'LACKS the server'}`);
  out.push(`  connection  ${p.connection.status}: ${p.connection.detail}`);
  out.push(
    `  protocol    ${report.protocol ? `${report.protocol.versions.join(', ')} negotiated (the server's answer to initialize, or the version a 2026-07-28 server/discover claimed; client ${report.protocol.clients.join(', ')}; ${report.protocol.sessions} sessions)` : 'unknown: no session reached initialize or server/discover'}`,
  );
  out.push(..._shadowing(p.shadowing));
  for (const w of p.warnings) out.push(`  WARNING     ${w}`);
  out.push('');
  out.push(`  ${'check'.padEnd(8)} ${'verdict'.padEnd(10)} reason`);
  for (const c of report.checks)
    out.push(`  ${c.check.padEnd(8)} ${c.verdict.toUpperCase().padEnd(10)} ${_short(c.reason, report)}`);
  for (const c of report.checks) {
    if (c.verdict === 'pass' || c.canary === '') continue;
    const e = c.evidence;
    out.push('', `  evidence for ${c.check} (canary ${c.canary}):`);
    out.push(
      `    inbox lines:  ${e.inbox.length === 0 ? 'none' : e.inbox.map((l) => `${l.at} ${l.from}→${l.to}${l.body_has_canary ? ' [canary]' : ''}`).join('; ')}`,
    );
    out.push(
      `    receipts:     ${e.receipts.length === 0 ? 'none' : e.receipts.map((r) => `seq ${r.seq} ${r.agent} ${r.tool}${r.genuine ? '' : ' [NOT SIGNED BY THE SERVER]'}`).join('; ')}`,
    );
    if (e.verify_problems.length > 0) out.push(`    verify:       ${e.verify_problems.join('\n                  ')}`);
    out.push(`    canary in output: ${e.canary_in_output ? 'yes' : 'no'}`);
    if (e.agent_tool_calls) out.push(`    agent's tool calls: ${e.agent_tool_calls.join(', ') || 'none'}`);
    out.push(`    output:       ${JSON.stringify(e.output_excerpt.slice(-200))}`);
  }
  if (report.push) {
    out.push('', `  ${'push over'.padEnd(10)} ${'delivered'.padEnd(10)} ${'seen'.padEnd(10)} why`);
    for (const r of report.push)
      out.push(
        `  ${r.path.padEnd(10)} ${r.delivered.padEnd(10)} ${r.seen.padEnd(10)} ${r.delivered === 'n/a' ? r.delivered_reason : `delivered: ${r.delivered_reason}; seen: ${r.seen_reason}`}`,
      );
  }
  const passed = report.checks.filter((c) => c.verdict === 'pass').length;
  out.push(
    '',
    `${report.ok ? 'PASS' : 'NOT PASSED'}: ${passed}/${report.checks.length} checks passed in ${(report.ms / 1000).toFixed(1)} s${report.workspace ? `; workspace kept at ${report.workspace}` : out.some((l) => l.includes('<workspace>')) ? '; <workspace> was a temporary folder, now deleted (--keep keeps it)' : ''}`,
  );
  return `${out.join('\n')}\n`;
}

/** The built-ins and where they came from, then each one that shadows a mailbox tool. */
function _shadowing(s: ProbeReport['preflight']['shadowing']): string[] {
  const from = { runtime: 'listed by the runtime', known: 'known (not listed by the runtime)', none: 'unknown' }[
    s.source
  ];
  const clashes = s.clashes.map(
    (c) => `${c.tool} shadows ${c.shadows}${c.same_name ? ' (same name)' : ` (same action: ${c.action})`}`,
  );
  return [`  built-ins   ${s.builtins.length} ${from}: ${s.detail}`, `  shadowing   ${clashes.join('; ') || 'none'}`];
}

/** A check's reason without the preflight's own words (a missing runtime's install hint, a failed connection's cause), which the lines above already say once. */
function _short(reason: string, report: ProbeReport): string {
  const p = report.preflight;
  let out = reason;
  for (const said of [
    p.runtime.found ? undefined : p.runtime.reason,
    p.connection.status === 'failed' ? p.connection.detail : undefined,
  ]) {
    if (said && said.length > 20 && out.endsWith(said) && out.length > said.length)
      out = `${out.slice(0, -said.length).replace(/[:\s]+$/, '')} (see above)`;
  }
  return out;
}
