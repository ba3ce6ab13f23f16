/**
 * @module
 * The three checks of mailbox.md §3 and how each is judged. The verdict comes from
 * the inboxes, the call log and its receipts; the agent's output is searched only
 * for a canary it could not know without reading it through the server (receive)
 * or could not know at all (control). What the agent says about success is
 * recorded as an excerpt and never consulted.
 */
import { randomBytes } from 'node:crypto';
import type { Records } from './records.js';
import type { AgentRun, AgentTask, CheckName, CheckEvidence, Verdict } from './types.js';
import { AGENT, PEER } from './workspace.js';

/** A fresh random marker no model can guess. */
export function newCanary(): string {
  return `canary-${randomBytes(9).toString('base64url').replace(/[-_]/g, 'x')}`;
}

export function taskFor(check: CheckName, prefix: string, serverName: string, canary: string): AgentTask {
  const t = (tool: string) => `${prefix}${tool}`;
  if (check === 'send') {
    return {
      kind: 'send',
      peer: PEER,
      canary,
      prompt: `[witness-probe send] Use the tools of the MCP server ${serverName}. Call ${t('list_agents')} to find the agent named ${PEER}, then call ${t('send_message')} with to=${PEER} and body=${canary} (exactly these values, without quotes). Then say in one line what happened.`,
    };
  }
  // Receive and control get the same words, and never the canary: receive must read it, control must not have it.
  return {
    kind: check,
    prompt: `[witness-probe read] Use the tools of the MCP server ${serverName}. Call ${t('check_inbox')} and print the body of every message you received, exactly as it is. If there are none, say: no messages.`,
  };
}

export interface Judgement {
  verdict: Verdict;
  reason: string;
  message_ids: string[];
  evidence: CheckEvidence;
}

const READS = new Set(['check_inbox', 'wait_for_message']);

export function judge(
  check: CheckName,
  canary: string,
  during: Records,
  run: AgentRun,
  peerMessageId?: string,
): Judgement {
  const output = `${run.stdout}\n${run.stderr}`;
  const evidence: CheckEvidence = {
    inbox: during.inbox.map((l) => ({
      at: l.at,
      id: l.message.id,
      from: l.message.from,
      to: l.message.to,
      body_has_canary: l.message.body.includes(canary),
    })),
    receipts: during.log.map((l) => ({
      at: l.at,
      seq: l.record.seq,
      agent: l.record.agent,
      tool: l.record.tool,
      ok: l.record.ok,
      message_ids: l.record.message_ids,
      genuine: l.genuine,
    })),
    verify_problems: during.problems,
    canary_in_output: output.includes(canary),
    output_excerpt: _excerpt(run.stdout.trim() || run.stderr.trim()),
    ...(run.toolCalls ? { agent_tool_calls: run.toolCalls } : {}),
  };
  const done = (verdict: Verdict, reason: string, ids: string[] = []): Judgement => ({
    verdict,
    reason,
    message_ids: ids,
    evidence,
  });
  if (run.timedOut)
    return done(
      'undecided',
      `the runtime did not finish within the time limit (${Math.round(run.ms / 1000)} s); nothing is judged from a run that was cut short`,
    );
  // Only records the server signed, and that verify does not flag (a replayed copy is genuine yet flagged), count.
  const flagged = new Set(during.problems.map((p) => p.split(': ')[0]));
  const trusted = during.log.filter((l) => l.genuine && !flagged.has(l.at));
  const byAgent = trusted.filter((l) => l.record.agent === AGENT);
  const tamper =
    during.problems.length > 0 ? `; verify: ${during.problems.length} problem(s), first: ${during.problems[0]}` : '';
  if (check === 'send') return _judgeSend(canary, during, byAgent, tamper, done);
  if (check === 'receive') return _judgeReceive(evidence.canary_in_output, byAgent, tamper, peerMessageId ?? '', done);
  if (during.problems.length > 0) return done('fail', `records were tampered with during the check${tamper}`);
  if (evidence.canary_in_output)
    return done(
      'fail',
      'the canary appears in the output although nothing was sent: the agent could not have read it anywhere',
    );
  const reads = byAgent.filter((l) => READS.has(l.record.tool));
  if (reads.length === 0)
    return done(
      'undecided',
      `no signed check_inbox receipt by ${AGENT}: the agent never looked, so an empty answer proves nothing${_calls(byAgent)}`,
    );
  return done('pass', `the agent read its inbox through the server (${reads[0]!.at}) and printed no canary`);
}

type Done = (verdict: Verdict, reason: string, ids?: string[]) => Judgement;

function _judgeSend(canary: string, during: Records, byAgent: Records['log'], tamper: string, done: Done): Judgement {
  const lines = during.inbox.filter((l) => l.message.to === PEER && l.message.body.includes(canary));
  const sends = byAgent.filter((l) => l.record.tool === 'send_message' && l.record.ok);
  const matched = lines.find(
    (l) => l.message.from === AGENT && sends.some((s) => s.record.message_ids.includes(l.message.id)),
  );
  if (matched && tamper === '')
    return done(
      'pass',
      `${PEER}'s inbox has the canary from ${AGENT} (${matched.at}) and a signed send_message receipt names the same id`,
      [matched.message.id],
    );
  const ids = lines.map((l) => l.message.id);
  if (tamper !== '') return done('fail', `records were written around the server${tamper}`, ids);
  if (lines.length > 0)
    return done(
      'fail',
      `${PEER}'s inbox has the canary (${lines[0]!.at}) but no signed send_message receipt by ${AGENT} names its id`,
      ids,
    );
  if (sends.length > 0)
    return done(
      'fail',
      `${AGENT} sent through the server (${sends[0]!.at}) but no message to ${PEER} carries the canary`,
      sends.flatMap((s) => s.record.message_ids),
    );
  return done(
    'fail',
    `no inbox line in ${PEER}'s inbox has the canary and the call log has no send_message receipt by ${AGENT}${_calls(byAgent)}`,
  );
}

function _judgeReceive(printed: boolean, byAgent: Records['log'], tamper: string, id: string, done: Done): Judgement {
  const read = byAgent.find((l) => READS.has(l.record.tool) && l.record.message_ids.includes(id));
  if (tamper !== '') return done('fail', `records were written around the server${tamper}`, [id]);
  if (read && printed)
    return done(
      'pass',
      `a signed ${read.record.tool} receipt by ${AGENT} lists the peer's message ${id} (${read.at}) and the canary is in the output`,
      [id],
    );
  if (printed)
    return done(
      'fail',
      `the canary is in the output but no signed receipt shows ${AGENT} reading message ${id} through the server: it was read some other way`,
      [id],
    );
  if (read)
    return done(
      'fail',
      `${AGENT} read message ${id} through the server (${read.at}) but the canary is not in its output`,
      [id],
    );
  return done(
    'fail',
    `the canary is not in the output and no signed check_inbox receipt by ${AGENT} lists message ${id}${_calls(byAgent)}`,
    [id],
  );
}

function _calls(byAgent: Records['log']): string {
  if (byAgent.length === 0) return `; the server recorded no call by ${AGENT} at all`;
  return `; the server recorded only: ${[...new Set(byAgent.map((l) => l.record.tool))].join(', ')}`;
}

function _excerpt(text: string, max = 400): string {
  return text.length <= max ? text : `…${text.slice(-max)}`;
}
