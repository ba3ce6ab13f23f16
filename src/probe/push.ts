/**
 * @module
 * "Push that reaches the model" (mailbox.md §3), per push path: the agent is asked to
 * keep working without reading its inbox; once its session is up (its first mailbox
 * call is in the call log) the peer sends it a message carrying a canary. Two
 * questions, answered from two records and reported apart:
 *
 * - delivered — did the server tell the runtime? The session log (`serve
 *   --session-log`) holds the subscription and each `resources/updated` notice the
 *   transport took; for a channel, the signed `channel_push` line names the message.
 * - seen — did the model see it without asking? The model endpoint's own request
 *   records: the first request after the send whose text holds the canary, with no
 *   inbox read (check_inbox, wait_for_message) by the agent before it. Without those
 *   records (a model the probe does not run) it is undecided, never a yes.
 */
import { newCanary } from './checks.js';
import type { Peer } from './peer.js';
import { readRecords, recordsSince } from './records.js';
import { readSessions } from './sessions.js';
import type { AgentTask, ModelRecord, ProbeContext, PushPath, PushResult, RuntimeAdapter } from './types.js';
import { AGENT, PEER } from './workspace.js';

/** How often the call log is looked at while waiting for the agent's first call. */
const LOOK_MS = 200;
/** Inbox reads the model asks for: a message seen through one was pulled, not pushed. */
const PULLS = new Set(['check_inbox', 'wait_for_message']);

export function pushTask(path: PushPath, prefix: string, serverName: string): AgentTask {
  return {
    kind: 'push',
    path,
    prompt: `[witness-probe push] Use the tools of the MCP server ${serverName}. Call ${prefix}list_agents, and again, one call at a time, up to 8 calls in all. Do not call ${prefix}check_inbox or ${prefix}wait_for_message. If a message from ${PEER} reaches you some other way, stop and quote its text.`,
  };
}

export interface PushOptions {
  /** The model endpoint's request records, if the caller runs the model (a scripted one). */
  modelRecords?: () => readonly ModelRecord[];
}

/** Why a runtime has no such path, or undefined when it has it. */
export function pushUnavailable(adapter: RuntimeAdapter, path: PushPath): string | undefined {
  if (path === 'channel' && !adapter.installChannel)
    return `${adapter.title} has no channels (notifications/claude/channel is Claude Code's own contract)`;
  return undefined;
}

export async function runPush(
  adapter: RuntimeAdapter,
  ctx: ProbeContext,
  path: PushPath,
  peer: Peer,
  options: PushOptions,
): Promise<PushResult> {
  const started = Date.now();
  const canary = newCanary();
  const none = pushUnavailable(adapter, path);
  if (none)
    return {
      path,
      delivered: 'n/a',
      delivered_reason: none,
      seen: 'n/a',
      seen_reason: none,
      canary: '',
      agent_calls: [],
      ms: 0,
    };
  if (path === 'channel') adapter.installChannel?.(ctx);
  const before = await readRecords(ctx.ws.mailbox, ctx.ws.keyPath);
  let finished = false;
  const running = adapter.run(ctx, pushTask(path, ctx.toolPrefix, ctx.serverName)).finally(() => {
    finished = true;
  });
  // Mid-run: once the agent's session has made a call, it is up (and subscribed, if it subscribes).
  while (!finished) {
    const now = recordsSince(before, await readRecords(ctx.ws.mailbox, ctx.ws.keyPath));
    if (now.log.some((l) => l.record.agent === AGENT)) break;
    await new Promise((r) => setTimeout(r, LOOK_MS));
  }
  if (finished) {
    const run = await running;
    const why = `the agent's session made no mailbox call before the run ended (exit ${run.exitCode}${run.timedOut ? ', timed out' : ''}), so no message could arrive mid-run`;
    return {
      path,
      delivered: 'undecided',
      delivered_reason: why,
      seen: 'undecided',
      seen_reason: why,
      canary,
      agent_calls: [],
      ms: Date.now() - started,
    };
  }
  const sentAt = Date.now();
  const messageId = await peer.send(AGENT, `A message from ${PEER}: ${canary}`);
  const run = await running;
  const during = recordsSince(before, await readRecords(ctx.ws.mailbox, ctx.ws.keyPath));
  const agentLines = during.log.filter((l) => l.record.agent === AGENT && l.genuine);
  const delivered =
    path === 'channel'
      ? _channelDelivered(agentLines, messageId, ctx, sentAt, started)
      : _resourceDelivered(ctx, sentAt, started);
  const pulls = agentLines.filter((l) => PULLS.has(l.record.tool)).map((l) => Date.parse(l.record.ts));
  const seen = _seen(options, canary, sentAt, pulls, run.exitCode);
  return {
    path,
    ...delivered,
    ...seen,
    canary,
    message_id: messageId,
    agent_calls: agentLines.map((l) => l.record.tool),
    ms: Date.now() - started,
  };
}

type Delivered = Pick<PushResult, 'delivered' | 'delivered_reason' | 'delivered_ms'>;

function _resourceDelivered(ctx: ProbeContext, sentAt: number, started: number): Delivered {
  const mine = readSessions(ctx.ws.sessionLog).filter((r) => r.agent === AGENT && Date.parse(r.at) >= started - 1000);
  if (!mine.some((r) => r.event === 'initialize' || r.event === 'discover'))
    return {
      delivered: 'undecided',
      delivered_reason:
        'no session of the agent reached initialize (or a 2026-07-28 server/discover) in the session log during the run',
    };
  if (!mine.some((r) => r.event === 'subscribe'))
    return {
      delivered: 'no',
      delivered_reason:
        'the runtime never subscribed to mailbox://inbox (no resources/subscribe, or subscriptions/listen naming it, in the session log), so the server had no one to tell',
    };
  const notice = mine.find((r) => r.event === 'resource_updated' && Date.parse(r.at) >= sentAt);
  if (!notice)
    return {
      delivered: 'no',
      delivered_reason:
        'the runtime subscribed to mailbox://inbox, but the server sent no resources/updated after the message was stored (the session had ended?)',
    };
  const ms = Date.parse(notice.at) - sentAt;
  return {
    delivered: 'yes',
    delivered_reason: `subscribed; notifications/resources/updated sent to the runtime ${ms} ms after the send (session log)`,
    delivered_ms: ms,
  };
}

function _channelDelivered(
  lines: ReturnType<typeof recordsSince>['log'],
  messageId: string,
  ctx: ProbeContext,
  sentAt: number,
  started: number,
): Delivered {
  const pushed = lines.find((l) => l.record.tool === 'channel_push' && l.record.message_ids.includes(messageId));
  if (!pushed) {
    const session = readSessions(ctx.ws.sessionLog).some(
      (r) => r.agent === AGENT && r.event === 'initialize' && Date.parse(r.at) >= started - 1000,
    );
    return {
      delivered: 'no',
      delivered_reason: `no signed channel_push line names the message${session ? '' : ' (no session of the agent reached initialize during the run)'}`,
    };
  }
  const ms = Date.parse(pushed.record.ts) - sentAt;
  return {
    delivered: 'yes',
    delivered_reason: `notifications/claude/channel sent to the runtime ${ms} ms after the send (signed channel_push, ${pushed.at})`,
    delivered_ms: ms,
  };
}

function _seen(
  options: PushOptions,
  canary: string,
  sentAt: number,
  pulls: number[],
  exitCode: number | null,
): Pick<PushResult, 'seen' | 'seen_reason' | 'seen_ms'> {
  if (!options.modelRecords)
    return {
      seen: 'undecided',
      seen_reason:
        "the model's requests are not recorded here (only a model endpoint the caller runs, such as the scripted model, records them)",
    };
  const after = options.modelRecords().filter((r) => r.at >= sentAt);
  const first = after.find((r) => r.text.includes(canary));
  if (!first) {
    if (after.length === 0)
      return {
        seen: 'undecided',
        seen_reason: `the runtime made no model request after the message was sent (exit ${exitCode}), so nothing could show it`,
      };
    return {
      seen: 'no',
      seen_reason: `none of the ${after.length} model requests after the send held the canary: the model was never shown the message`,
    };
  }
  const ms = first.at - sentAt;
  if (pulls.some((t) => t <= first.at))
    return {
      seen: 'no',
      seen_reason: `the model was shown the message ${ms} ms after the send, but only after the agent read its inbox: pulled, not pushed`,
      seen_ms: ms,
    };
  return {
    seen: 'yes',
    seen_reason: `model request ${after.indexOf(first) + 1} after the send held the canary, ${ms} ms after it, with no inbox read before`,
    seen_ms: ms,
  };
}
