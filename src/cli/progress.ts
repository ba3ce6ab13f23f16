/**
 * @module
 * Progress of a sweep on stderr: one line redrawn in place on a terminal, or a
 * plain line every few seconds when stderr is a file or pipe (CI logs).
 */
import { formatWaiting, type LlmActivity, llmActivity } from '../llm/activity.js';
import type { ExperimentProgress } from '../sim/experiment/run.js';
import type { CliIo } from './io.js';

export interface ProgressPrinter {
  update(progress: ExperimentProgress): void;
  finish(): void;
}

export interface ProgressOptions {
  quiet?: boolean;
  /** Between plain lines when stderr is not a terminal (default 5000 ms). */
  plainEveryMs?: number;
  /** What the LLM backends wait for (default: this process's); injectable for tests. */
  activity?: () => LlmActivity;
}

export function progressPrinter(io: CliIo, options: ProgressOptions = {}): ProgressPrinter {
  if (options.quiet) return { update() {}, finish() {} };
  const every = io.isTTY ? 100 : (options.plainEveryMs ?? 5000);
  const activity = options.activity ?? llmActivity;
  let lastShown = 0;
  let last: ExperimentProgress | undefined;
  let shownText = '';
  let drawn = false;
  const show = (p: ExperimentProgress | undefined, waiting?: string) => {
    const text = [p ? formatProgress(p) : '', waiting ?? ''].filter(Boolean).join('  ');
    if (io.isTTY) io.stderr(`\r\x1b[2K${text}`);
    else io.stderr(`${text}\n`);
    drawn = true;
    shownText = text;
    lastShown = Date.now();
  };
  // A call that hangs produces no update: a timer says what is awaited (endpoint, retries).
  const timer = setInterval(
    () => {
      const waiting = formatWaiting(activity());
      if (waiting && Date.now() - lastShown >= every) show(last, waiting);
    },
    Math.min(every, 1000),
  );
  timer.unref();
  return {
    update(p) {
      last = p;
      if (Date.now() - lastShown >= every) show(p);
    },
    finish() {
      clearInterval(timer);
      // The last state once: not again when the line already on screen says it.
      if (last && (io.isTTY || last.done !== last.skipped) && formatProgress(last) !== shownText) show(last);
      if (io.isTTY && drawn) io.stderr('\n');
    },
  };
}

export function formatProgress(p: ExperimentProgress): string {
  const ran = p.done - p.skipped;
  const left = p.total - p.done;
  // The sweep's own estimate (cells differ in cost), else the average so far.
  const ms = p.etaMs ?? (ran > 0 ? (p.elapsedMs / ran) * left : undefined);
  const eta = ms !== undefined && left > 0 ? ` ETA ${_duration(ms)}` : '';
  const o = p.outcomes;
  const resumed = p.skipped ? ` (${p.skipped} already done)` : '';
  const escalated = o.escalated ? `  escalated ${o.escalated}` : '';
  return `runs ${p.done}/${p.total}${resumed}${eta}  valid ${o.valid}  invalid ${o.invalid}  none ${o.none}  timeout ${o.timeout}${escalated}`;
}

function _duration(ms: number): string {
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}
