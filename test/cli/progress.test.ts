import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it, vi } from 'vitest';
import { memoryIo } from '../../src/cli/io.js';
import { formatProgress, progressPrinter } from '../../src/cli/progress.js';
import { formatWaiting, llmActivity } from '../../src/llm/activity.js';
import { OpenAiCompatibleBackend } from '../../src/llm/openai-compatible.js';

const progress = (done: number, skipped = 0) => ({
  done,
  total: 100,
  skipped,
  outcomes: { valid: done - skipped, invalid: 0, none: 0, timeout: 0, escalated: 0 },
  elapsedMs: 1000,
});

describe('progress', () => {
  it('shows runs done of total, an ETA and outcome counts', () => {
    expect(formatProgress(progress(25))).toBe('runs 25/100 ETA 3s  valid 25  invalid 0  none 0  timeout 0');
  });
  it("shows the sweep's own estimate of the time left when it gives one (cells differ in cost)", () => {
    expect(formatProgress({ ...progress(25), etaMs: 61_000 })).toContain(' ETA 1m01s ');
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

describe('progress while an LLM endpoint is slow', () => {
  const hanging =
    (startedAt: number, retries = 0) =>
    () => ({
      inFlight: 3,
      retries,
      oldest: { endpoint: 'http://127.0.0.1:8000/v1', startedAt, retries, lastError: 'timed out' },
    });

  it('says which endpoint it waits for, and the retries so far, once a call has waited 5 s', () => {
    const now = Date.now();
    expect(formatWaiting(hanging(now - 4000)(), now)).toBeUndefined();
    expect(formatWaiting(hanging(now - 12_000, 2)(), now)).toBe(
      'waiting 12s for http://127.0.0.1:8000/v1 (3 calls in flight, 2 retries so far (last: timed out))',
    );
  });

  it('prints the waiting line with no run finishing, and the final line only once', () => {
    vi.useFakeTimers();
    try {
      const io = memoryIo();
      const started = Date.now();
      const printer = progressPrinter(io, { activity: hanging(started, 1) });
      printer.update(progress(0));
      vi.advanceTimersByTime(6000);
      expect(io.err).toMatch(
        /^runs 0\/100 .* waiting [56]s for http:\/\/127\.0\.0\.1:8000\/v1 \(3 calls in flight, 1 retry so far/m,
      );
      const lines = io.err.split('\n').length;
      printer.update(progress(100));
      printer.finish();
      expect(io.err.split('\n').length).toBe(lines + 1);
      vi.advanceTimersByTime(60_000); // finish stopped the timer
      expect(io.err.split('\n').length).toBe(lines + 1);
    } finally {
      vi.useRealTimers();
    }
  });

  it('the OpenAI-compatible backend reports a call to a server that does not answer as in flight at that endpoint', async () => {
    const server = createServer(() => {}); // accepts, never answers
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
    const backend = new OpenAiCompatibleBackend({ endpoints: [url], model: 'm', timeoutMs: 60_000 });
    const controller = new AbortController();
    const call = backend
      .complete(
        {
          messages: [{ role: 'user', content: 'hi' }],
          schema: {},
          schemaName: 's',
          temperature: 0,
          maxTokens: 1,
        } as never,
        { key: {} as never, signal: controller.signal },
      )
      .catch((e: Error) => e);
    try {
      await vi.waitFor(() => expect(llmActivity().oldest?.endpoint).toBe(url));
      expect(llmActivity().inFlight).toBe(1);
    } finally {
      controller.abort();
      await call;
      await backend.close();
      server.closeAllConnections();
      server.close();
    }
    expect(llmActivity().inFlight).toBe(0);
  });
});
