/**
 * @module
 * `witness probe RUNTIME` (mailbox.md §3): in a fresh workspace, register the
 * mailbox in the runtime, run the preflight (runtime found, config written, the
 * runtime's own `mcp list` shows the server connected, built-ins that shadow a
 * mailbox tool — from the runtime's own tool list where it has one),
 * then the send, receive and control checks, each judged from the records made
 * while it ran. Nothing the probe cannot judge is ever reported as a pass.
 */
import { WitnessError } from '../core/errors.js';
import { adapterFor } from './adapters/index.js';
import { checkTemplate } from './adapters/command.js';
import { judge, newCanary, taskFor } from './checks.js';
import { shadowNote, shadowWarnings, takeInventory } from './inventory.js';
import { type Peer, startPeer } from './peer.js';
import { type PushOptions, runPush } from './push.js';
import { readRecords, recordsSince } from './records.js';
import { negotiated, readSessions } from './sessions.js';
import {
  CHECKS,
  type CheckName,
  type CheckResult,
  type Preflight,
  type ProbeContext,
  type ProbeReport,
  PUSH_PATHS,
  type PushResult,
  type RuntimeAdapter,
} from './types.js';
import { AGENT, createWorkspace } from './workspace.js';

export interface ProbeOptions {
  runtime: string;
  /** How to start `witness` for the mailbox servers (executable and arguments before `mailbox serve`). */
  serverCommand: string[];
  toolPrefix?: string;
  serverName?: string;
  modelEndpoint?: string;
  model?: string;
  bin?: string;
  template?: string;
  /** Per runtime command (each `mcp list`, each agent run). Default 180 s. */
  timeoutMs?: number;
  checks?: readonly CheckName[];
  /** Keep the workspace (its path is in the report). */
  keep?: boolean;
  /** Parent folder for the workspace (default: the OS temp folder). */
  tmpDir?: string;
  onProgress?: (message: string) => void;
  /** Also measure each push path (push.ts); `modelRecords` lets it judge whether the model saw the message. */
  push?: boolean;
  modelRecords?: PushOptions['modelRecords'];
  /**
   * Aborted on Ctrl-C or SIGTERM: the runtime's process group and the mailbox servers are
   * stopped, the workspace removed (unless kept), and runProbe throws CANCELLED with the
   * checks that finished in `data.finished`.
   */
  signal?: AbortSignal;
}

export async function runProbe(options: ProbeOptions): Promise<ProbeReport> {
  const adapter = adapterFor(options.runtime);
  if (adapter.name === 'command') checkTemplate(options.template);
  const started = Date.now();
  const progress = options.onProgress ?? (() => undefined);
  const ws = await createWorkspace(options.serverCommand, options.tmpDir);
  const ctx: ProbeContext = {
    ws,
    serverName: options.serverName ?? 'witness-mailbox',
    toolPrefix: options.toolPrefix ?? '',
    timeoutMs: options.timeoutMs ?? 180_000,
    ...(options.modelEndpoint ? { modelEndpoint: options.modelEndpoint } : {}),
    ...(options.model ? { model: options.model } : {}),
    ...(options.bin ? { bin: options.bin } : {}),
    ...(options.template ? { template: options.template } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
  };
  const checks = options.checks ?? CHECKS;
  const results: CheckResult[] = [];
  const stopIfAborted = () => {
    if (options.signal?.aborted) throw _interrupted(checks, results, options.keep ? ws.root : undefined);
  };
  let peer: Peer | undefined;
  try {
    progress(`preflight: ${adapter.title}`);
    const { preflight, blocked } = await _preflight(adapter, ctx);
    stopIfAborted();
    for (const check of checks) {
      if (blocked) {
        results.push(_undecided(check, blocked));
        continue;
      }
      progress(`check ${check}`);
      if (check === 'receive') peer ??= await startPeer(ws, options.signal);
      const result = await _runCheck(adapter, ctx, check, preflight, peer);
      // A check cut short by the signal is not a verdict: it is left out, not reported as a fail.
      stopIfAborted();
      results.push(result);
    }
    const push: PushResult[] = [];
    for (const path of options.push ? PUSH_PATHS : []) {
      if (blocked) break;
      progress(`push over ${path}`);
      peer ??= await startPeer(ws, options.signal);
      push.push(
        await runPush(adapter, ctx, path, peer, options.modelRecords ? { modelRecords: options.modelRecords } : {}),
      );
      stopIfAborted();
    }
    const protocol = negotiated(readSessions(ws.sessionLog), AGENT);
    const report: ProbeReport = {
      format: 'witness-probe/1',
      runtime: adapter.name,
      ...(preflight.runtime.version ? { version: preflight.runtime.version } : {}),
      ...(options.model ? { model: options.model } : {}),
      tool_prefix: ctx.toolPrefix,
      started_at: new Date(started).toISOString(),
      ms: Date.now() - started,
      preflight,
      checks: results,
      ...(protocol ? { protocol } : {}),
      ...(options.push ? { push } : {}),
      ok: results.length > 0 && results.every((r) => r.verdict === 'pass'),
      ...(options.keep ? { workspace: ws.root } : {}),
    };
    return options.keep ? report : _withoutWorkspacePaths(report, ws.root);
  } catch (error) {
    // A step cut by the signal fails in its own words (a closed MCP connection…): it is the interruption.
    stopIfAborted();
    throw error;
  } finally {
    await peer?.close().catch(() => undefined);
    if (!options.keep) ws.remove();
  }
}

async function _preflight(
  adapter: RuntimeAdapter,
  ctx: ProbeContext,
): Promise<{ preflight: Preflight; blocked?: string }> {
  const runtime = await adapter.detect(ctx);
  const preflight: Preflight = {
    runtime,
    connection: { status: 'unchecked', detail: 'not asked' },
    shadowing: { source: 'none', detail: 'not checked', builtins: [], clashes: [] },
    warnings: [],
  };
  const blocked = await _connect(adapter, ctx, preflight);
  // Asked after the connection check, so a runtime that started our server names the mailbox's tools in its list too.
  preflight.shadowing = await takeInventory(adapter, ctx, runtime, runtime.found);
  preflight.warnings = shadowWarnings(adapter.title, preflight.shadowing, ctx.toolPrefix);
  return { preflight, ...(blocked ? { blocked } : {}) };
}

/** Registers the server and asks the runtime whether it connected; returns why the checks cannot run, if they cannot. */
async function _connect(adapter: RuntimeAdapter, ctx: ProbeContext, preflight: Preflight): Promise<string | undefined> {
  if (!preflight.runtime.found) return `runtime not available: ${preflight.runtime.reason}`;
  let config: Preflight['config'];
  try {
    config = adapter.install(ctx);
  } catch (error) {
    return `could not register the mailbox server: ${(error as Error).message}`;
  }
  if (config) preflight.config = config;
  if (config && !config.has_server) return `${config.file} does not have the ${ctx.serverName} entry after install`;
  preflight.connection = await adapter.connection(ctx);
  const { status, detail } = preflight.connection;
  if (status === 'failed')
    return `the runtime did not connect to the mailbox server (the server never started or failed): ${detail}`;
  if (status === 'not-listed')
    return `the runtime did not pick up the config written to ${config?.file ?? 'its config'}: ${detail}`;
  return undefined;
}

async function _runCheck(
  adapter: RuntimeAdapter,
  ctx: ProbeContext,
  check: CheckName,
  preflight: Preflight,
  peer?: Peer,
): Promise<CheckResult> {
  const started = Date.now();
  const canary = newCanary();
  const before = await readRecords(ctx.ws.mailbox, ctx.ws.keyPath);
  const peerMessageId = check === 'receive' && peer ? await peer.send(AGENT, canary) : undefined;
  const task = taskFor(check, ctx.toolPrefix, ctx.serverName, canary);
  const run = await adapter.run(ctx, task);
  const during = recordsSince(before, await readRecords(ctx.ws.mailbox, ctx.ws.keyPath));
  const j = judge(check, canary, during, run, peerMessageId);
  let { verdict, reason } = j;
  const agentCalls = during.log.filter((l) => l.record.agent === AGENT).length;
  if (
    verdict === 'fail' &&
    agentCalls === 0 &&
    preflight.connection.status === 'unchecked' &&
    during.problems.length === 0
  ) {
    verdict = 'undecided';
    reason = `the server recorded no call by ${AGENT} and ${adapter.title} cannot be asked whether it started the server, so a missing config cannot be told from an agent that did nothing (${j.reason})`;
  }
  if (verdict === 'fail' && run.exitCode !== 0 && agentCalls === 0 && !run.toolCalls)
    reason += `; the runtime exited with status ${run.exitCode}`;
  if (verdict !== 'pass') reason += shadowNote(check, preflight.shadowing);
  return { check, verdict, reason, canary, message_ids: j.message_ids, evidence: j.evidence, ms: Date.now() - started };
}

function _interrupted(checks: readonly CheckName[], finished: CheckResult[], kept: string | undefined): WitnessError {
  const done = finished.map((r) => `${r.check} ${r.verdict}`);
  const notRun = checks.slice(finished.length);
  const workspace = kept ? `the workspace is kept at ${kept}` : 'its workspace and mailbox key were removed';
  return new WitnessError(
    'CANCELLED',
    `The probe was interrupted: finished ${done.length > 0 ? done.join(', ') : 'no check'}${notRun.length > 0 ? `; not run: ${notRun.join(', ')}` : ''}. The runtime's processes and mailbox servers were stopped and ${workspace}; nothing was reported as a pass. Rerun the probe for a full report.`,
    { data: { finished } },
  );
}

function _undecided(check: CheckName, reason: string): CheckResult {
  return {
    check,
    verdict: 'undecided',
    reason,
    canary: '',
    message_ids: [],
    evidence: { inbox: [], receipts: [], verify_problems: [], canary_in_output: false, output_excerpt: '' },
    ms: 0,
  };
}

/**
 * The workspace is deleted when the probe ends (without --keep), so a path into it in a
 * verdict or evidence would point at nothing: it is written `<workspace>/…` instead.
 */
function _withoutWorkspacePaths(report: ProbeReport, root: string): ProbeReport {
  const inJson = JSON.stringify(root).slice(1, -1);
  return JSON.parse(
    JSON.stringify(report).split(`${inJson}/`).join('<workspace>/').split(inJson).join('<workspace>'),
  ) as ProbeReport;
}
