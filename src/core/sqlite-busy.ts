/**
 * @module
 * Setting up a SQLite file that other processes may be setting up at the same moment
 * (WAL mode, the schema): SQLite answers one of them SQLITE_BUSY at once, without
 * calling the busy handler, where waiting could deadlock — seen in 20 of 600 opens of
 * a new file, three at a time. Such work is retried after a short random pause.
 */

/** Runs `work` (synchronous SQLite statements) until it does not fail with SQLITE_BUSY, for at most `timeoutMs`. */
export function retryWhileBusy<T>(work: () => T, timeoutMs: number): T {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return work();
    } catch (error) {
      if ((error as { code?: unknown }).code !== 'SQLITE_BUSY' || Date.now() > deadline) throw error;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 5 + Math.random() * 20);
    }
  }
}
