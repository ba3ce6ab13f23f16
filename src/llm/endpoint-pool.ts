/**
 * @module
 * Spreads requests over several endpoints with a concurrency limit per endpoint.
 * A caller takes a slot on the least-loaded endpoint that is not cooling down (after
 * a 429 or 5xx), or waits in FIFO order for one; so a slow or failing server gets
 * fewer requests while the others keep their batches full.
 */

export interface PooledEndpoint<T> {
  readonly url: string;
  readonly client: T;
  inFlight: number;
  /** Epoch ms before which the endpoint is not picked if another one can be. */
  coolUntil: number;
  /** Failures since its last success: each one doubles how long it cools down. */
  failures: number;
}

export class EndpointPool<T> {
  readonly endpoints: PooledEndpoint<T>[];
  private readonly limit: number;
  private readonly waiting: Array<() => void> = [];

  constructor(endpoints: { url: string; client: T }[], limit: number) {
    this.endpoints = endpoints.map((e) => ({ ...e, inFlight: 0, coolUntil: 0, failures: 0 }));
    this.limit = limit;
  }

  /** Waits for a free slot and takes it (elsewhere than `avoid` if possible); `release` gives it back. */
  async acquire(signal?: AbortSignal, avoid?: PooledEndpoint<T>): Promise<PooledEndpoint<T>> {
    for (;;) {
      signal?.throwIfAborted();
      const picked = this._pick(Date.now(), avoid);
      if (picked) {
        picked.inFlight++;
        return picked;
      }
      await new Promise<void>((resolve, reject) => {
        const onAbort = () => {
          const i = this.waiting.indexOf(wake);
          if (i >= 0) this.waiting.splice(i, 1);
          reject(signal!.reason);
        };
        const wake = () => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        };
        this.waiting.push(wake);
        signal?.addEventListener('abort', onAbort, { once: true });
      });
    }
  }

  release(endpoint: PooledEndpoint<T>): void {
    endpoint.inFlight--;
    this.waiting.shift()?.();
  }

  /**
   * Records a failure (429, 5xx, timeout): the endpoint cools down until `until` or for
   * `baseMs` doubled per failure in a row (at most `maxMs`), whichever is later. A
   * failing endpoint answers fast, so without this it would look the least loaded.
   */
  failed(endpoint: PooledEndpoint<T>, until: number, baseMs: number, maxMs: number): void {
    endpoint.failures++;
    const penalty = Math.min(maxMs, baseMs * 2 ** (endpoint.failures - 1));
    endpoint.coolUntil = Math.max(endpoint.coolUntil, until, Date.now() + penalty);
  }

  succeeded(endpoint: PooledEndpoint<T>): void {
    endpoint.failures = 0;
  }

  private _pick(now: number, avoid: PooledEndpoint<T> | undefined): PooledEndpoint<T> | undefined {
    let best: PooledEndpoint<T> | undefined;
    let bestKey = Number.POSITIVE_INFINITY;
    for (const e of this.endpoints) {
      if (e.inFlight >= this.limit) continue;
      // Prefer endpoints not cooling down and not just failed; among equals, the least loaded.
      const key = (e.coolUntil > now ? 2 * this.limit : 0) + (e === avoid ? this.limit : 0) + e.inFlight;
      if (key < bestKey) {
        best = e;
        bestKey = key;
      }
    }
    return best;
  }
}
