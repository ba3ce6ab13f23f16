/**
 * @module
 * The steps of one round that the reference fixes in detail (consensus.md §2; ref:
 * main.py `run_round`, `_run_batched_decisions`): which answers are accepted, what an
 * agent that made no new proposal sends, and what the reasoning of an agent whose
 * every try failed says. The game loop (game.ts) puts them in order.
 */
import { cutText, WIRE_REASONING_LIMIT } from './network.js';
import type { Note, Proposal, Role, VoteChoice } from './types.js';

/** The public reasoning of an agent whose every try failed (ref: main.py, in its own words). */
export function failedReasoning(tries: number): string {
  return `No usable answer after ${tries} tries.`;
}

/** One round's answers, filled in by `acceptDecision` and the fallback. */
export interface RoundAnswers {
  round: number;
  /** Each agent's new value; `abstain` when it made none (an abstention or every try failed). */
  values: Proposal[];
  reasonings: string[];
  /** Each agent's confidence (null: none given); absent until some agent gives one. */
  confidences: (number | null)[] | undefined;
  /** Each agent's private notes; absent until it has one (most rule-based agents never do). */
  notes: (Note[] | undefined)[];
}

/**
 * Stores a well-formed decision and returns true. Each field of the answer is read
 * exactly once, so an answer whose getters change between reads cannot show peers
 * different values.
 */
export function acceptDecision(
  raw: unknown,
  role: Role,
  [lo, hi]: readonly [number, number],
  i: number,
  out: RoundAnswers,
): boolean {
  if (typeof raw !== 'object' || raw === null) return false;
  const { value, publicReasoning, internalStrategy, confidence } = raw as Record<string, unknown>;
  const inRange = typeof value === 'number' && Number.isInteger(value) && value >= lo && value <= hi;
  if (!inRange && !(role === 'byzantine' && value === 'abstain')) return false;
  if (publicReasoning !== undefined && typeof publicReasoning !== 'string') return false;
  if (internalStrategy !== undefined && typeof internalStrategy !== 'string') return false;
  if (confidence !== undefined && !(typeof confidence === 'number' && confidence >= 0 && confidence <= 1)) return false;
  out.values[i] = value as Proposal;
  out.reasonings[i] = publicReasoning ?? '';
  if (confidence !== undefined) {
    out.confidences ??= new Array(out.values.length).fill(null);
    out.confidences[i] = confidence;
  }
  if (internalStrategy) {
    out.notes[i] ??= [];
    out.notes[i].push({ round: out.round, text: internalStrategy });
  }
  return true;
}

export interface Wire {
  values: Proposal[];
  reasonings: string[];
  /** Set when some agent made no new proposal this round. */
  abstained: boolean[] | undefined;
}

/**
 * What goes on the wire, written over the round's answers: each agent's new value, or
 * — when it made none — its previous one, `abstain` only if it never proposed (ref:
 * main.py broadcasts the game's proposed value, which an abstention leaves unchanged),
 * and reasoning cut as the wire cuts it. Updates `shown`.
 */
export function broadcast(answers: RoundAnswers, shown: (number | null)[]): Wire {
  const { values, reasonings } = answers;
  const n = values.length;
  let abstained: boolean[] | undefined;
  for (let i = 0; i < n; i++) {
    const v = values[i]!;
    if (v === 'abstain') {
      abstained ??= new Array(n).fill(false);
      abstained[i] = true;
      values[i] = shown[i] ?? 'abstain';
    } else {
      shown[i] = v;
    }
    const r = reasonings[i]!;
    if (r.length > WIRE_REASONING_LIMIT) reasonings[i] = cutText(r, WIRE_REASONING_LIMIT);
  }
  return { values, reasonings, abstained };
}

/** A well-formed vote, or undefined: stop or continue, and for Byzantine agents also abstain. */
export function checkVote(raw: unknown, role: Role): VoteChoice | undefined {
  const decision = typeof raw === 'object' && raw !== null ? (raw as Record<string, unknown>).decision : undefined;
  if (decision === 'stop' || decision === 'continue') return decision;
  return role === 'byzantine' && decision === 'abstain' ? 'abstain' : undefined;
}
