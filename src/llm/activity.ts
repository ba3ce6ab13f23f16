/**
 * @module
 * What the LLM backends are waiting for right now: calls in flight, per endpoint, with
 * when each started and its retries so far. A sweep's progress line reads it, so a slow
 * or hanging endpoint shows as "waiting 40 s for http://…, 3 retries" instead of a
 * counter that does not move (120 s timeout × 5 retries is 12 minutes of silence).
 * Process-wide on purpose: the CLI's progress printer is one per process and must not
 * need a handle on every backend the agents opened.
 */

export interface CallActivity {
  endpoint: string;
  startedAt: number;
  retries: number;
  lastError?: string;
}

export interface LlmActivity {
  /** Calls in flight. */
  inFlight: number;
  /** The call waiting longest, if any. */
  oldest?: CallActivity;
  /** Retries made by the calls in flight. */
  retries: number;
}

const _calls = new Set<CallActivity>();

/** Registers a call; the caller updates `retries`/`lastError` and calls `end()` when it settles. */
export function trackCall(endpoint: string, now = Date.now()): CallActivity & { end(): void } {
  const call: CallActivity & { end(): void } = { endpoint, startedAt: now, retries: 0, end: () => _calls.delete(call) };
  _calls.add(call);
  return call;
}

export function llmActivity(): LlmActivity {
  let oldest: CallActivity | undefined;
  let retries = 0;
  for (const call of _calls) {
    retries += call.retries;
    if (!oldest || call.startedAt < oldest.startedAt) oldest = call;
  }
  return { inFlight: _calls.size, retries, ...(oldest ? { oldest: { ...oldest } } : {}) };
}

/** One line for a progress display, or undefined when nothing has waited `afterMs` yet. */
export function formatWaiting(activity: LlmActivity, now = Date.now(), afterMs = 5000): string | undefined {
  const oldest = activity.oldest;
  if (!oldest || now - oldest.startedAt < afterMs) return undefined;
  const s = Math.round((now - oldest.startedAt) / 1000);
  const retries = activity.retries
    ? `, ${activity.retries} ${activity.retries === 1 ? 'retry' : 'retries'} so far${oldest.lastError ? ` (last: ${oldest.lastError})` : ''}`
    : '';
  return `waiting ${s}s for ${oldest.endpoint} (${activity.inFlight} ${activity.inFlight === 1 ? 'call' : 'calls'} in flight${retries})`;
}
