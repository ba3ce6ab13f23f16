/**
 * @module
 * Asking every agent one question with validation, retries and a fallback, on the
 * reference's schedule (consensus.md §2; ref: main.py `_run_batched_decisions`,
 * `_run_batched_votes`). Every agent is asked once; the agents without a usable answer
 * are asked the same question again, all together, up to `tries` times — unless they
 * are few (at most 30% of all agents), in which case each of them gets up to `tries`
 * more tries of its own, told from the second on that it is a retry. After that the
 * fallback applies. Synchronous answers stay synchronous when all are usable, so
 * rule-based sweeps pay no promise per decision; asynchronous ones (LLM agents) of a
 * pass are all in flight at once.
 */
import type { Attempt, MaybePromise } from './types.js';

/** Thrown by an agent whose output could not be understood (bad JSON, wrong schema). */
export class InvalidAnswerError extends Error {
  /** True when no further try should be made (ref: an abstention in a single follow-up counts as a failure). */
  readonly final: boolean;
  /** A private note the failed answer still leaves behind (ref: it is recorded before the failure). */
  readonly note: string | undefined;
  constructor(message: string, options: { final?: boolean; note?: string } = {}) {
    super(message);
    this.name = 'InvalidAnswerError';
    this.final = options.final ?? false;
    this.note = options.note;
  }
}

export interface AnswerCounters {
  decisions: number;
  invalidAnswers: number;
  fallbacks: number;
}

export interface AskOptions {
  count: number;
  tries: number;
  ask: (index: number, attempt: Attempt) => MaybePromise<unknown>;
  /** Stores the answer and returns true, or returns false when `raw` is not acceptable. */
  accept: (index: number, raw: unknown) => boolean;
  /** Stores the fallback answer after every try failed (`note`: what the failed answer left). */
  fallback: (index: number, note: string | undefined) => void;
  counters: AnswerCounters;
}

/** Share of all agents at or below which failures are followed up one agent at a time (ref: 0.3). */
export const SINGLE_RETRY_SHARE = 0.3;

/** How one try ended: usable, unusable (retry allowed), or unusable with no further try. */
type _Outcome = true | false | InvalidAnswerError;

/**
 * Asks agents 0..count-1; returns synchronously when every agent answered usably and
 * synchronously, else a promise that settles when the schedule is done.
 */
export function askAll(o: AskOptions): void | Promise<void> {
  const first = _firstAttempt(o.tries);
  // Allocated only when needed: a rule-based round has no promise and no failure.
  let pending: Promise<void>[] | undefined;
  let failed: number[] | undefined;
  let ended: Map<number, InvalidAnswerError> | undefined;
  for (let i = 0; i < o.count; i++) {
    const r = _try(o, i, first);
    if (r === true) continue;
    const note = (x: _Outcome) => {
      if (x === false) {
        failed ??= [];
        failed.push(i);
      } else if (x !== true) {
        ended ??= new Map();
        ended.set(i, x);
      }
    };
    if (r instanceof Promise) {
      pending ??= [];
      pending.push(r.then(note));
    } else note(r);
  }
  if (!pending && !failed && !ended) return;
  return (pending ? Promise.all(pending) : Promise.resolve()).then(() =>
    _followUp(o, failed ?? [], ended ?? new Map()),
  );
}

const _firsts = new Map<number, Attempt>();

/** The first try's attempt, one frozen object per number of tries. */
function _firstAttempt(tries: number): Attempt {
  let a = _firsts.get(tries);
  if (!a) {
    a = Object.freeze({ phase: 'round', number: 1, of: tries } as const);
    _firsts.set(tries, a);
  }
  return a;
}

/** Round passes 2..tries, or single follow-ups, then the fallback for whoever is left. */
async function _followUp(o: AskOptions, failed: number[], ended: Map<number, InvalidAnswerError>): Promise<void> {
  let left = failed.sort((a, b) => a - b);
  for (let pass = 1; left.length > 0 && pass < o.tries; pass++) {
    if (left.length / o.count <= SINGLE_RETRY_SHARE) {
      await Promise.all(left.map((i) => _single(o, i, ended)));
      left = [];
      break;
    }
    const attempt: Attempt = { phase: 'round', number: pass + 1, of: o.tries };
    const outcomes = await Promise.all(left.map((i) => _try(o, i, attempt)));
    left = left.filter((i, k) => {
      const r = outcomes[k]!;
      if (r instanceof InvalidAnswerError) ended.set(i, r);
      return r === false;
    });
  }
  for (const i of left) _fallback(o, i, undefined);
  for (const [i, error] of [...ended].sort((a, b) => a[0] - b[0])) _fallback(o, i, error.note);
}

/** Up to `tries` tries of one agent alone; the fallback when none is usable. */
async function _single(o: AskOptions, i: number, ended: Map<number, InvalidAnswerError>): Promise<void> {
  for (let n = 1; n <= o.tries; n++) {
    const r = await _try(o, i, { phase: 'single', number: n, of: o.tries });
    if (r === true) return;
    if (r instanceof InvalidAnswerError) {
      ended.set(i, r);
      return;
    }
  }
  _fallback(o, i, undefined);
}

function _try(o: AskOptions, index: number, attempt: Attempt): _Outcome | Promise<_Outcome> {
  o.counters.decisions++;
  let raw: MaybePromise<unknown>;
  try {
    raw = o.ask(index, attempt);
  } catch (error) {
    return _invalid(o, error);
  }
  if (raw instanceof Promise) {
    return raw.then(
      (value) => _judge(o, index, value),
      (error: unknown) => _invalid(o, error),
    );
  }
  return _judge(o, index, raw);
}

function _judge(o: AskOptions, index: number, raw: unknown): _Outcome {
  return o.accept(index, raw) ? true : _invalid(o, undefined);
}

function _invalid(o: AskOptions, error: unknown): false | InvalidAnswerError {
  // Only a malformed answer is retried; any other failure (an endpoint down) ends the run.
  if (error !== undefined && !(error instanceof InvalidAnswerError)) throw error;
  o.counters.invalidAnswers++;
  return error instanceof InvalidAnswerError && error.final ? error : false;
}

function _fallback(o: AskOptions, index: number, note: string | undefined): void {
  o.counters.fallbacks++;
  o.fallback(index, note);
}
