/**
 * @module
 * Group commit: operations that arrive while a commit is in flight are queued and
 * committed together in the next one — one lock, one write and one fsync per file
 * for the whole group. This is how concurrent agents on one server get more durable
 * sends per second than one fsync each would allow.
 */
export interface Pending<Op, R> {
  op: Op;
  resolve(value: R): void;
  reject(error: unknown): void;
}

export class GroupCommitter<Op, R> {
  private queue: Pending<Op, R>[] = [];
  private running = false;
  private idle: Promise<void> = Promise.resolve();

  /** `commit` runs one group; it settles each pending op itself. */
  constructor(
    private readonly commit: (group: Pending<Op, R>[]) => Promise<void>,
    private readonly maxGroup = 256,
  ) {}

  submit(op: Op): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.queue.push({ op, resolve, reject });
      if (!this.running) this.idle = this.drain();
    });
  }

  /** Resolves when everything submitted so far is committed. */
  flushed(): Promise<void> {
    return this.idle;
  }

  private async drain(): Promise<void> {
    this.running = true;
    try {
      while (this.queue.length > 0) {
        // Let the event loop read what has arrived (requests parsed, ops submitted)
        // before closing the group: a commit blocks while it syncs, so without this
        // every group would hold one op.
        await new Promise<void>((resolve) => setImmediate(resolve));
        const group = this.queue.splice(0, this.maxGroup);
        try {
          await this.commit(group);
        } catch (error) {
          for (const p of group) p.reject(error);
        }
      }
    } finally {
      this.running = false;
    }
  }
}
