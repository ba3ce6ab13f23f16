/**
 * @module
 * Progress of a sweep on stderr: one line redrawn in place on a terminal, or a
 * plain line every few seconds when stderr is a file or pipe (CI logs).
 */
import type { ExperimentProgress } from '../sim/experiment/run.js';
import type { CliIo } from './io.js';

export interface ProgressPrinter {
  update(progress: ExperimentProgress): void;
  finish(): void;
}

export function progressPrinter(io: CliIo, options: { quiet?: boolean; plainEveryMs?: number } = {}): ProgressPrinter {
  if (options.quiet) return { update() {}, finish() {} };
  const every = io.isTTY ? 100 : (options.plainEveryMs ?? 5000);
  let lastShown = 0;
  let last: ExperimentProgress | undefined;
  let drawn = false;
  const show = (p: ExperimentProgress) => {
    const text = formatProgress(p);
    if (io.isTTY) io.stderr(`\r\x1b[2K${text}`);
    else io.stderr(`${text}\n`);
    drawn = true;
    lastShown = Date.now();
  };
  return {
    update(p) {
      last = p;
      if (Date.now() - lastShown >= every) show(p);
    },
    finish() {
      if (last && (io.isTTY || last.done !== last.skipped)) show(last);
      if (io.isTTY && drawn) io.stderr('\n');
    },
  };
}

export function formatProgress(p: ExperimentProgress): string {
  const ran = p.done - p.skipped;
  const left = p.total - p.done;
  const eta = ran > 0 && left > 0 ? ` ETA ${_duration((p.elapsedMs / ran) * left)}` : '';
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
