import { describe, expect, it } from 'vitest';
import { memoryIo } from '../../src/cli/io.js';
import { formatProgress, progressPrinter } from '../../src/cli/progress.js';

const progress = (done: number, skipped = 0) => ({ done, total: 100, skipped, outcomes: { valid: done - skipped, invalid: 0, none: 0, timeout: 0, escalated: 0 }, elapsedMs: 1000 });

describe('progress', () => {
  it('shows runs done of total, an ETA and outcome counts', () => {
    expect(formatProgress(progress(25))).toBe('runs 25/100 ETA 3s  valid 25  invalid 0  none 0  timeout 0');
  });
  it('says how many runs a resumed sweep found already done', () => {
    expect(formatProgress(progress(60, 50))).toContain('(50 already done)');
  });
  it('redraws one line in place on a terminal', () => {
    const io = memoryIo(process.cwd(), { isTTY: true });
    const printer = progressPrinter(io);
    printer.update(progress(1));
    printer.finish();
    expect(io.err.startsWith('\r\x1b[2K')).toBe(true);
    expect(io.err.endsWith('\n')).toBe(true);
  });
  it('prints nothing when quiet', () => {
    const io = memoryIo();
    const printer = progressPrinter(io, { quiet: true });
    printer.update(progress(1));
    printer.finish();
    expect(io.err).toBe('');
  });
});
