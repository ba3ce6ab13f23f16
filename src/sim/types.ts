/**
 * @module
 * The vocabulary of the consensus game (consensus.md §1–§4): configuration, what an
 * agent is shown, what it may answer, and what a finished game records.
 */
import type { Budget, DecideMode } from './decide/mode.js';

export type Role = 'honest' | 'byzantine';
export type Awareness = 'may_exist' | 'none_exist';
/** A proposal: an integer in range, or (Byzantine agents only) `abstain`. */
export type Proposal = number | 'abstain';
export type VoteChoice = 'stop' | 'continue' | 'abstain';
export type MaybePromise<T> = T | Promise<T>;

export interface GameConfig {
  honest: number;
  byzantine: number;
  /** Inclusive integer range of values, default [0, 50]. */
  range: readonly [number, number];
  /** Rounds before the run ends as `timeout` (R), default 50. */
  maxRounds: number;
  awareness: Awareness;
  /** Tries an agent gets for a well-formed answer before the fallback applies (default 3). */
  tries: number;
  /** Who ends the game: the agents' vote (default), a rule, or both (consensus.md §8). */
  decide?: DecideMode;
  /** With `rule` and `hybrid`: the round from which the rule decides (default 3). */
  after?: number;
  /** Circuit breaker: over budget, the game ends as `escalated`. */
  budget?: Budget;
}

/** The rules every agent is told; the same for all. */
export interface GameRules {
  readonly totalAgents: number;
  readonly range: readonly [number, number];
  readonly maxRounds: number;
  readonly awareness: Awareness;
  /** True when answers should carry a `confidence` in [0, 1] (the confidence rule is on). */
  readonly confidence?: boolean;
}

/**
 * One message as the network delivered it: the sender id is stamped by the network,
 * and the same frozen object reaches every agent (no spoofing, no equivocation).
 */
export interface Message {
  readonly round: number;
  readonly from: string;
  readonly value: Proposal;
  /** Public reasoning, capped at 500 characters on the wire (consensus.md §2). */
  readonly reasoning: string;
}

/** Everything public about one finished round. */
export interface PublicRound {
  readonly round: number;
  /** One message per agent, in agent-id order. */
  readonly messages: readonly Message[];
  /** The messages' values, in the same order (a convenience for rule-based agents). */
  readonly values: readonly Proposal[];
}

/** What an agent is shown when asked for its proposal. Nothing else reaches it. */
export interface DecideView {
  readonly id: string;
  readonly role: Role;
  readonly round: number;
  readonly rules: GameRules;
  /** Honest: its own initial value. Byzantine: null (no stake). */
  readonly initialValue: number | null;
  /** Its own current value (the last it proposed, or its initial value). */
  readonly currentValue: Proposal | null;
  /** All earlier rounds, oldest first. */
  readonly history: readonly PublicRound[];
  /** Its own private notes (`internalStrategy`), oldest first, each with its round. */
  readonly notes: readonly Note[];
}

/** One private note of an agent, kept with the round it was written in. */
export interface Note {
  readonly round: number;
  readonly text: string;
}

/**
 * Which try of a question this is (consensus.md §2, ref: main.py
 * `_run_batched_decisions`). `round` tries ask every agent still without a usable
 * answer the same question again; `single` tries follow up a few failures one agent
 * at a time, and from the second such try the agent is told it is a retry.
 */
export interface Attempt {
  readonly phase: 'round' | 'single';
  /** 1-based number of this try within its phase. */
  readonly number: number;
  /** Tries a phase allows (the game's `tries`). */
  readonly of: number;
}

/** What an agent is shown when asked to vote: the decide view plus this round's messages. */
export interface VoteView extends DecideView {
  readonly proposals: readonly Message[];
  /** The proposals' values, in agent-id order. */
  readonly proposalValues: readonly Proposal[];
}

export interface Decision {
  value: Proposal;
  publicReasoning?: string;
  internalStrategy?: string;
  /** Self-reported confidence in [0, 1], asked for when the confidence rule is on. */
  confidence?: number;
}

export interface VoteAnswer {
  decision: VoteChoice;
}

/**
 * An agent answers the two questions of a round. Answers may be synchronous or
 * asynchronous (LLM agents). Throwing `InvalidAnswerError` (or returning a malformed
 * answer) counts as an invalid output: it is retried, then the fallback applies.
 */
export interface Agent {
  decide(view: DecideView, attempt: Attempt): MaybePromise<Decision>;
  vote(view: VoteView, attempt: Attempt): MaybePromise<VoteAnswer>;
}

/**
 * One row of a run's trajectory; arrays are indexed like `RunResult.agents`. Values
 * and reasoning are what went on the wire: an agent that abstains after proposing
 * before is shown with its previous value (ref), so `abstained` says who chose to.
 */
export interface TrajectoryRound {
  round: number;
  values: Proposal[];
  votes: VoteChoice[];
  /** Present when any agent gave public reasoning this round (as sent: cut to 500 characters). */
  reasoning?: string[];
  /** Present when any agent chose to abstain this round, or had every try fail. */
  abstained?: boolean[];
  /** Present when any agent reported a confidence this round. */
  confidence?: (number | null)[];
  /** Present in the round where a decision rule decided: the value it chose. */
  decided?: number;
}

export type Outcome = 'valid' | 'invalid' | 'none' | 'timeout' | 'escalated';
/** What ended the game: the vote, a rule, the circuit breaker, or the last round R. */
export type EndedBy = 'vote' | 'rule' | 'budget' | 'deadline';

export interface GameResult {
  agents: string[];
  roles: Role[];
  /** Honest initial values by agent id. */
  initial: Record<string, number>;
  /** Honest final values by agent id. */
  final: Record<string, number>;
  rounds: number;
  stoppedByVote: boolean;
  endedBy: EndedBy;
  outcome: Outcome;
  /** Honest agents agree on one of their initial values (null when they do not agree). */
  strictValid: boolean | null;
  /** Honest agents agree on a value within [min, max] of their initial values (null when they do not agree). */
  rangeValid: boolean | null;
  trajectory: TrajectoryRound[];
  /** Agent decisions made (proposals + votes, retries included). */
  decisions: number;
  /** Answers that failed validation (each counts once per failed try). */
  invalidAnswers: number;
  /** Answers replaced by the fallback after every try failed. */
  fallbacks: number;
}
