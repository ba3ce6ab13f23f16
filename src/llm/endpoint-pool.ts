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
}

export class EndpointPool<T> {
  readonly endpoints: PooledEndpoint<T>[];
  private readonly limit: number;
  private readonly waiting: Array<() => void> = [];

  constructor(endpoints: { url: string; client: T }[], limit: number) {
    this.endpoints = endpoints.map((e) => ({ ...e, inFlight: 0, coolUntil: 0 }));
    this.limit = limit;
  }

  /** Waits for a free slot and takes it; `release` gives it back. */
  async acquire(signal?: AbortSignal): Promise<PooledEndpoint<T>> {
    for (;;) {
      signal?.throwIfAborted();
      const picked = this._pick(Date.now());
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

  /** Marks an endpoint as overloaded or failing until `until` (epoch ms). */
  coolDown(endpoint: PooledEndpoint<T>, until: number): void {
    endpoint.coolUntil = Math.max(endpoint.coolUntil, until);
  }

  private _pick(now: number): PooledEndpoint<T> | undefined {
    let best: PooledEndpoint<T> | undefined;
    for (const e of this.endpoints) {
      if (e.inFlight >= this.limit) continue;
      // Prefer endpoints not cooling down; among equals, the least loaded.
      const key = (e.coolUntil > now ? this.limit : 0) + e.inFlight;
      const bestKey = best ? (best.coolUntil > now ? this.limit : 0) + best.inFlight : Number.POSITIVE_INFINITY;
      if (key < bestKey) best = e;
    }
    return best;
  }
}
