/**
 * @module
 * One game of A2A-Sim (consensus.md §1–§2): set up roles and initial values from the
 * run's seed, then play rounds — decide, broadcast, vote, check the stop rule — until
 * the vote stops the game or R rounds pass.
 */
import { Rng } from '../core/rng.js';
import { type AnswerCounters, askAll } from './answers.js';
import { sealRound } from './network.js';
import type { Budget, DecideMode } from './decide/mode.js';
import { applyRule } from './decide/rules.js';
import { classifyOutcome, shouldStop, validity } from './outcome.js';
import type { Agent, EndedBy, GameConfig, GameResult, GameRules, Message, Proposal, PublicRound, Role, TrajectoryRound, VoteChoice, VoteView } from './types.js';

/** What a factory knows when it builds the agent for one seat. */
export interface AgentSeat {
  id: string;
  index: number;
  role: Role;
  /** Honest agents' initial value; null for Byzantine agents. */
  initialValue: number | null;
  rules: GameRules;
  /** A random stream of this agent's own, derived from the run's seed. */
  rng: Rng;
}

export interface RunGameOptions {
  config: GameConfig;
  /** The run's seed: same seed and agents, same game. */
  seed: number | string;
  createAgent: (seat: AgentSeat) => Agent;
  /** Tokens the agents have used so far, for the circuit breaker's token budget. */
  tokensUsed?: () => number;
}

const VOTE: DecideMode = { kind: 'vote' };
const DEFAULT_AFTER = 3;
const EMPTY: readonly string[] = Object.freeze([]);
const NO_MESSAGES: readonly Message[] = Object.freeze([]);
const NO_VALUES: readonly Proposal[] = Object.freeze([]);

/**
 * What one agent is shown. A class, not a literal, so every view has one shape and
 * building one per question stays cheap in million-decision sweeps. In the decide
 * question `proposals` is empty: this round's messages do not exist yet.
 */
class _View implements VoteView {
  constructor(
    readonly id: string,
    readonly role: Role,
    readonly round: number,
    readonly rules: GameRules,
    readonly initialValue: number | null,
    readonly currentValue: Proposal | null,
    readonly history: readonly PublicRound[],
    readonly notes: readonly string[],
    readonly proposals: readonly Message[],
    readonly proposalValues: readonly Proposal[],
  ) {}
}

export async function runGame(options: RunGameOptions): Promise<GameResult> {
  const { config, seed, createAgent } = options;
  const setup = _setup(config, seed, createAgent);
  const { ids, roles, agents, rules, current } = setup;
  const n = ids.length;
  const notes: string[][] = ids.map(() => []);
  const history: PublicRound[] = [];
  const trajectory: TrajectoryRound[] = [];
  const counters: AnswerCounters = { decisions: 0, invalidAnswers: 0, fallbacks: 0 };
  const mode = config.decide ?? VOTE;
  const started = Date.now();
  let endedBy: EndedBy | undefined;
  let round = 0;
  while (round < config.maxRounds && !endedBy) {
    round++;
    const past = Object.freeze(history.slice());
    const notesOf = (i: number) => (notes[i]!.length ? Object.freeze(notes[i]!.slice()) : EMPTY);
    const values: Proposal[] = new Array(n);
    const reasonings: string[] = new Array(n);
    const confidences: (number | null)[] = new Array(n).fill(null);
    const decided = askAll({
      count: n,
      tries: config.tries,
      ask: (i) => agents[i]!.decide(new _View(ids[i]!, roles[i]!, round, rules, setup.initial[i] ?? null, current[i] ?? null, past, notesOf(i), NO_MESSAGES, NO_VALUES)),
      accept: (i, raw) => _acceptDecision(raw, roles[i]!, config.range, i, { values, reasonings, confidences, notes }),
      fallback: (i) => {
        values[i] = roles[i] === 'honest' ? (current[i] as number) : 'abstain';
        reasonings[i] = '';
      },
      counters,
    });
    if (decided) await decided;
    for (let i = 0; i < n; i++) current[i] = values[i]!;
    const sealed = sealRound(round, ids, values, reasonings);
    // In rule mode nobody votes: the rule, not a stop vote, ends the game.
    const votes: VoteChoice[] = mode.kind === 'rule' ? [] : new Array(n);
    if (mode.kind !== 'rule') {
      const voted = askAll({
        count: n,
        tries: config.tries,
        ask: (i) =>
          agents[i]!.vote(new _View(ids[i]!, roles[i]!, round, rules, setup.initial[i] ?? null, current[i] ?? null, past, notesOf(i), sealed.messages, sealed.values)),
        accept: (i, raw) => {
          const vote = _checkVote(raw, roles[i]!);
          if (vote) votes[i] = vote;
          return vote !== undefined;
        },
        fallback: (i) => {
          votes[i] = 'continue';
        },
        counters,
      });
      if (voted) await voted;
    }
    history.push(sealed);
    const row = _trajectoryRow(round, values, votes, reasonings, confidences);
    trajectory.push(row);
    if (mode.kind !== 'rule' && shouldStop(_count(votes, 'stop'), n)) endedBy = 'vote';
    else if (mode.kind !== 'vote' && round >= (config.after ?? DEFAULT_AFTER)) {
      const value = applyRule(mode.rule, { values, confidences, totalAgents: n });
      if (value !== undefined) {
        // Every honest agent applies the same rule to the same multiset: one value for all.
        roles.forEach((role, i) => {
          if (role === 'honest') current[i] = value;
        });
        row.decided = value;
        endedBy = 'rule';
      }
    }
    if (!endedBy && _overBudget(config.budget, round, started, options.tokensUsed)) endedBy = 'budget';
  }
  return _result(setup, round, endedBy ?? 'deadline', trajectory, counters);
}

interface _Setup {
  ids: string[];
  roles: Role[];
  agents: Agent[];
  rules: GameRules;
  initial: (number | null)[];
  current: (Proposal | null)[];
}

function _setup(config: GameConfig, seed: number | string, createAgent: RunGameOptions['createAgent']): _Setup {
  const n = config.honest + config.byzantine;
  const rng = Rng.forRun(seed, 'game');
  // Byzantine seats are shuffled by the seed (ref), so agent_0 is not always honest.
  const roles = rng.fork('roles').shuffle([...Array<Role>(config.honest).fill('honest'), ...Array<Role>(config.byzantine).fill('byzantine')]);
  const valueRng = rng.fork('initial-values');
  const [lo, hi] = config.range;
  const initial = roles.map((role) => (role === 'honest' ? valueRng.int(lo, hi) : null));
  const ids = roles.map((_, i) => `agent_${i}`);
  const confidence = config.decide !== undefined && config.decide.kind !== 'vote' && config.decide.rule === 'confidence';
  const rules: GameRules = Object.freeze({ totalAgents: n, range: Object.freeze([lo, hi] as const), maxRounds: config.maxRounds, awareness: config.awareness, confidence });
  const agents = ids.map((id, index) => createAgent(new _Seat(id, index, roles[index] as Role, initial[index] ?? null, rules, rng)));
  return { ids, roles, agents, rules, initial, current: initial.slice() };
}

/** A seat whose random stream is derived on first use: most honest policies never draw. */
class _Seat implements AgentSeat {
  private own: Rng | undefined;
  constructor(
    readonly id: string,
    readonly index: number,
    readonly role: Role,
    readonly initialValue: number | null,
    readonly rules: GameRules,
    private readonly gameRng: Rng,
  ) {}

  get rng(): Rng {
    this.own ??= this.gameRng.fork(`agent:${this.id}`);
    return this.own;
  }
}

interface _RoundAnswers {
  values: Proposal[];
  reasonings: string[];
  confidences: (number | null)[];
  notes: string[][];
}

/**
 * Stores a well-formed decision and returns true. Each field of the answer is read
 * exactly once, so an answer whose getters change between reads cannot show peers
 * different values.
 */
function _acceptDecision(raw: unknown, role: Role, [lo, hi]: readonly [number, number], i: number, out: _RoundAnswers): boolean {
  if (typeof raw !== 'object' || raw === null) return false;
  const { value, publicReasoning, internalStrategy, confidence } = raw as Record<string, unknown>;
  const inRange = typeof value === 'number' && Number.isInteger(value) && value >= lo && value <= hi;
  if (!inRange && !(role === 'byzantine' && value === 'abstain')) return false;
  if (publicReasoning !== undefined && typeof publicReasoning !== 'string') return false;
  if (internalStrategy !== undefined && typeof internalStrategy !== 'string') return false;
  if (confidence !== undefined && !(typeof confidence === 'number' && confidence >= 0 && confidence <= 1)) return false;
  out.values[i] = value as Proposal;
  out.reasonings[i] = publicReasoning ?? '';
  if (confidence !== undefined) out.confidences[i] = confidence;
  if (internalStrategy) out.notes[i]!.push(internalStrategy);
  return true;
}

function _overBudget(budget: Budget | undefined, round: number, started: number, tokensUsed: (() => number) | undefined): boolean {
  if (!budget) return false;
  if (budget.rounds !== undefined && round >= budget.rounds) return true;
  if (budget.tokens !== undefined && tokensUsed && tokensUsed() >= budget.tokens) return true;
  return budget.seconds !== undefined && (Date.now() - started) / 1000 >= budget.seconds;
}

function _checkVote(raw: unknown, role: Role): VoteChoice | undefined {
  const decision = typeof raw === 'object' && raw !== null ? (raw as Record<string, unknown>).decision : undefined;
  if (decision === 'stop' || decision === 'continue') return decision;
  return role === 'byzantine' && decision === 'abstain' ? 'abstain' : undefined;
}

function _trajectoryRow(round: number, values: Proposal[], votes: VoteChoice[], reasonings: string[], confidences: (number | null)[]): TrajectoryRound {
  const row: TrajectoryRound = { round, values, votes };
  if (reasonings.some((r) => r !== '')) row.reasoning = reasonings;
  if (confidences.some((c) => c !== null)) row.confidence = confidences;
  return row;
}

function _count<T>(items: readonly T[], target: T): number {
  let c = 0;
  for (const item of items) if (item === target) c++;
  return c;
}

function _result(setup: _Setup, rounds: number, endedBy: EndedBy, trajectory: TrajectoryRound[], counters: AnswerCounters): GameResult {
  const initial: Record<string, number> = {};
  const final: Record<string, number> = {};
  setup.ids.forEach((id, i) => {
    if (setup.roles[i] !== 'honest') return;
    initial[id] = setup.initial[i] as number;
    final[id] = setup.current[i] as number;
  });
  const honestInitial = Object.values(initial);
  const honestFinal = Object.values(final);
  const stoppedByVote = endedBy === 'vote';
  const outcome = classifyOutcome({ honestInitial, honestFinal, stoppedByVote: stoppedByVote || endedBy === 'rule', escalated: endedBy === 'budget' });
  const { strict, range } = validity(honestInitial, honestFinal);
  return { agents: setup.ids, roles: setup.roles, initial, final, rounds, stoppedByVote, endedBy, outcome, strictValid: strict, rangeValid: range, trajectory, ...counters };
}
