/**
 * @module
 * Asking every agent one question with validation, retries and a fallback
 * (consensus.md §2: invalid output is retried, default 3 tries; then the agent keeps
 * its previous value / abstains / votes continue). Synchronous answers stay
 * synchronous, so rule-based sweeps pay no promise per decision; asynchronous ones
 * (LLM agents) are all in flight at once.
 */
import type { MaybePromise } from './types.js';

/** Thrown by an agent whose output could not be understood (bad JSON, wrong schema). */
export class InvalidAnswerError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InvalidAnswerError';
  }
}

export interface AnswerCounters {
  decisions: number;
  invalidAnswers: number;
  fallbacks: number;
}

export interface AskOptions<A> {
  count: number;
  tries: number;
  ask: (index: number) => MaybePromise<unknown>;
  /** The validated answer, or undefined when `raw` is not acceptable. */
  check: (index: number, raw: unknown) => A | undefined;
  fallback: (index: number) => A;
  counters: AnswerCounters;
}

/** Asks agents 0..count-1; resolves synchronously when every agent answered synchronously. */
export function askAll<A>(options: AskOptions<A>): A[] | Promise<A[]> {
  const out: A[] = new Array(options.count);
  const pending: Promise<void>[] = [];
  for (let i = 0; i < options.count; i++) {
    const answer = _attempt(options, i, 1);
    if (answer instanceof Promise) {
      pending.push(
        answer.then((a) => {
          out[i] = a;
        }),
      );
    } else {
      out[i] = answer;
    }
  }
  return pending.length ? Promise.all(pending).then(() => out) : out;
}

function _attempt<A>(o: AskOptions<A>, index: number, attempt: number): A | Promise<A> {
  o.counters.decisions++;
  let raw: MaybePromise<unknown>;
  try {
    raw = o.ask(index);
  } catch (error) {
    return _invalid(o, index, attempt, error);
  }
  if (raw instanceof Promise) {
    return raw.then(
      (value) => _accept(o, index, attempt, value),
      (error: unknown) => _invalid(o, index, attempt, error),
    );
  }
  return _accept(o, index, attempt, raw);
}

function _accept<A>(o: AskOptions<A>, index: number, attempt: number, raw: unknown): A | Promise<A> {
  const answer = o.check(index, raw);
  return answer === undefined ? _invalid(o, index, attempt, undefined) : answer;
}

function _invalid<A>(o: AskOptions<A>, index: number, attempt: number, error: unknown): A | Promise<A> {
  // Only a malformed answer is retried; any other failure (an endpoint down) ends the run.
  if (error !== undefined && !(error instanceof InvalidAnswerError)) throw error;
  o.counters.invalidAnswers++;
  if (attempt < o.tries) return _attempt(o, index, attempt + 1);
  o.counters.fallbacks++;
  return o.fallback(index);
}
