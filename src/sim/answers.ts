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

export interface AskOptions {
  count: number;
  tries: number;
  ask: (index: number) => MaybePromise<unknown>;
  /** Stores the answer and returns true, or returns false when `raw` is not acceptable. */
  accept: (index: number, raw: unknown) => boolean;
  /** Stores the fallback answer after every try failed. */
  fallback: (index: number) => void;
  counters: AnswerCounters;
}

/**
 * Asks agents 0..count-1; returns synchronously when every agent answered
 * synchronously, else a promise that settles when all have.
 */
export function askAll(options: AskOptions): void | Promise<void> {
  const pending: Promise<void>[] = [];
  for (let i = 0; i < options.count; i++) {
    const settled = _attempt(options, i, 1);
    if (settled) pending.push(settled);
  }
  return pending.length ? Promise.all(pending).then(() => undefined) : undefined;
}

function _attempt(o: AskOptions, index: number, attempt: number): void | Promise<void> {
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

function _accept(o: AskOptions, index: number, attempt: number, raw: unknown): void | Promise<void> {
  return o.accept(index, raw) ? undefined : _invalid(o, index, attempt, undefined);
}

function _invalid(o: AskOptions, index: number, attempt: number, error: unknown): void | Promise<void> {
  // Only a malformed answer is retried; any other failure (an endpoint down) ends the run.
  if (error !== undefined && !(error instanceof InvalidAnswerError)) throw error;
  o.counters.invalidAnswers++;
  if (attempt < o.tries) return _attempt(o, index, attempt + 1);
  o.counters.fallbacks++;
  o.fallback(index);
}
