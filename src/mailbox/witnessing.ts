/**
 * @module
 * A mailbox server's witness submitter (`witness mailbox serve --witness URL
 * --witness-key VKEY`). The store counts receipts here as its commits become durable;
 * every `everyReceipts` of them a round is due, and every `everySeconds` one runs
 * anyway. A round — reading the log's new lines, hashing them into the tree, signing,
 * the HTTP request, the kept copy's fsyncs — runs on a thread of its own
 * (witness-rounds.ts), so none of it takes the event loop that serves sends: on a
 * CPU-bound server that work cost sends/s in the same proportion (NOTES.md, Mailbox).
 * The thread failing is a line on the log, never the server's end.
 */
import type { Worker } from 'node:worker_threads';
import { WitnessError, type WitnessErrorCode } from '../core/errors.js';
import { startModuleWorker } from '../core/module-worker.js';
import type { MailboxStore } from './store/types.js';
import { DEFAULT_WITNESS_EVERY_RECEIPTS, type WitnessingOptions } from './witness-rounds.js';

export {
  DEFAULT_WITNESS_EVERY_RECEIPTS,
  DEFAULT_WITNESS_EVERY_SECONDS,
  DEFAULT_WITNESS_TIMEOUT_SECONDS,
} from './witness-rounds.js';
export type { WitnessingOptions, WitnessTarget } from './witness-rounds.js';

/** What the thread is started with: the options, less the log function (a function does not cross threads). */
export interface WitnessThreadSetup {
  dir: string;
  options: Omit<WitnessingOptions, 'log'>;
}
export type WitnessThreadRequest = { type: 'round' } | { type: 'close' };
export type WitnessThreadReply =
  | { type: 'ready'; origin: string }
  | { type: 'failed'; code?: WitnessErrorCode; message: string }
  | { type: 'log'; line: string }
  | { type: 'closed'; error?: string };

export class WitnessSubmitter {
  readonly #worker: Worker;
  readonly #everyReceipts: number;
  readonly #log: (line: string) => void;
  #origin = '';
  #receipts = 0;
  #unwatch: (() => void) | undefined;
  /** Who waits for the thread's next answer other than a log line: its start, then its close. */
  #waiter: ((reply: WitnessThreadReply | undefined) => void) | undefined;
  /** What the thread died of, if it did. */
  #failure: Error | undefined;
  #closed: Promise<void> | undefined;
  #gone = false;

  /** Checks the options and the key, and starts the thread; its first round reads the whole log and submits it, while the server serves. */
  static async start(dir: string, options: WitnessingOptions): Promise<WitnessSubmitter> {
    const { log: _log, ...rest } = options;
    const setup: WitnessThreadSetup = { dir, options: rest };
    const submitter = new WitnessSubmitter(startModuleWorker(import.meta.url, './witnessing-worker', setup), options);
    const first = await submitter.#next();
    if (first?.type === 'ready') {
      submitter.#origin = first.origin;
      // From here its timer and requests must not keep a server that has finished alive; close() holds it while it waits.
      submitter.#worker.unref();
      return submitter;
    }
    await submitter.#worker.terminate();
    if (first?.type === 'failed') throw new WitnessError(first.code ?? 'INTERNAL', first.message);
    const why = submitter.#failure ? `: ${submitter.#failure.message}` : '';
    throw new WitnessError('INTERNAL', `The witness submitter's thread ended before it started submitting${why}.`);
  }

  private constructor(worker: Worker, options: WitnessingOptions) {
    this.#worker = worker;
    this.#everyReceipts = options.everyReceipts ?? DEFAULT_WITNESS_EVERY_RECEIPTS;
    this.#log = options.log ?? (() => {});
    worker.on('message', (message: WitnessThreadReply) => {
      if (message.type === 'log') this.#log(message.line);
      else this.#answer(message);
    });
    // A submission must never take the server down: a thread that fails is said, and the server serves on.
    worker.on('error', (error) => {
      this.#failure = error;
      if (this.#origin === '') return; // not started yet: start() says why
      this.#log(
        `witness: the submitter's thread failed: ${error.message}; no more checkpoints are submitted until the server restarts.`,
      );
    });
    worker.once('exit', () => {
      this.#gone = true;
      this.#answer(undefined);
    });
  }

  get origin(): string {
    return this.#origin;
  }

  /**
   * Counts the store's receipts as its commits become durable, and asks for a round
   * every `everyReceipts`; returns the store itself. Nothing waits on it: a listener,
   * not a wrapper (a Proxy around the store slowed every store call; NOTES.md, Mailbox).
   */
  watch(store: MailboxStore): MailboxStore {
    this.#unwatch?.();
    this.#unwatch = store.onReceipts((count) => {
      this.#receipts += count;
      if (this.#receipts < this.#everyReceipts) return;
      this.#receipts = 0;
      this.#request({ type: 'round' });
    });
    return store;
  }

  /** Waits for submissions in flight, submits the log as stored now to every witness, closes its reader and ends the thread. */
  close(): Promise<void> {
    this.#closed ??= (async () => {
      this.#unwatch?.();
      if (this.#gone) return;
      this.#worker.ref();
      const closed = this.#next();
      this.#request({ type: 'close' });
      const reply = await closed;
      if (reply?.type === 'closed' && reply.error) this.#log(`witness: closing the submitter failed: ${reply.error}`);
      await this.#worker.terminate();
    })();
    return this.#closed;
  }

  /** The thread's next answer other than a log line; undefined when the thread ended first. */
  #next(): Promise<WitnessThreadReply | undefined> {
    if (this.#gone) return Promise.resolve(undefined);
    return new Promise((resolve) => {
      this.#waiter = resolve;
    });
  }

  #answer(reply: WitnessThreadReply | undefined): void {
    const waiter = this.#waiter;
    this.#waiter = undefined;
    waiter?.(reply);
  }

  #request(message: WitnessThreadRequest): void {
    if (!this.#gone) this.#worker.postMessage(message);
  }
}
