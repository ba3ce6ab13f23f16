/**
 * @module
 * One game of A2A-Sim (consensus.md §1–§2; ref: main.py `run_round`): set up roles
 * and initial values from the run's seed, then play rounds — decide, broadcast, add
 * the round to the shared history, vote, check the stop rule — until the vote stops
 * the game or R rounds pass. An agent that makes no new proposal (a Byzantine
 * abstention, or every try failed) is shown with its previous value; only one that
 * never proposed is shown as abstained (ref).
 */
import { Rng } from '../core/rng.js';
import { type AnswerCounters, type AskOptions, askAll } from './answers.js';
import { sealRound } from './network.js';
import { acceptDecision, broadcast, checkVote, failedReasoning, type RoundAnswers, type Wire } from './round.js';
import type { Budget, DecideMode } from './decide/mode.js';
import { applyRule } from './decide/rules.js';
import { classifyOutcome, shouldStop, validity } from './outcome.js';
import type {
  Agent,
  EndedBy,
  GameConfig,
  GameResult,
  GameRules,
  Message,
  Note,
  Proposal,
  PublicRound,
  Role,
  TrajectoryRound,
  VoteChoice,
  VoteView,
} from './types.js';

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
const EMPTY: readonly Note[] = Object.freeze([]);
const NO_MESSAGES: readonly Message[] = Object.freeze([]);
const NO_VALUES: readonly Proposal[] = Object.freeze([]);
const NO_HISTORY: readonly PublicRound[] = Object.freeze([]);

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
    readonly notes: readonly Note[],
    readonly proposals: readonly Message[],
    readonly proposalValues: readonly Proposal[],
  ) {}
}

export async function runGame(options: RunGameOptions): Promise<GameResult> {
  const { config, seed, createAgent } = options;
  const setup = _setup(config, seed, createAgent);
  const { ids, roles, shown } = setup;
  const n = ids.length;
  const notes = new Array<Note[] | undefined>(n);
  const history: PublicRound[] = [];
  const trajectory: TrajectoryRound[] = [];
  const counters: AnswerCounters = { decisions: 0, invalidAnswers: 0, fallbacks: 0 };
  const mode = config.decide ?? VOTE;
  const started = Date.now();
  const now: _Now = { round: 0, past: NO_HISTORY, answers: undefined!, sealed: undefined!, votes: [] };
  const questions = _questions(setup, config, notes, now, counters);
  let endedBy: EndedBy | undefined;
  let round = 0;
  while (round < config.maxRounds && !endedBy) {
    now.round = ++round;
    const answers: RoundAnswers = {
      round,
      values: new Array(n),
      reasonings: new Array(n),
      confidences: undefined,
      notes,
    };
    now.answers = answers;
    const decided = askAll(questions.decide);
    if (decided) await decided;
    const wire = broadcast(answers, shown);
    const sealed = sealRound(round, ids, wire.values, wire.reasonings);
    // The round's line joins the shared history before the vote (ref: main.py run_round).
    history.push(sealed);
    now.sealed = sealed;
    now.past = Object.freeze(history.slice());
    // In rule mode nobody votes: the rule, not a stop vote, ends the game.
    let votes: VoteChoice[] = [];
    if (mode.kind !== 'rule') {
      now.votes = votes = new Array(n);
      const voted = askAll(questions.vote);
      if (voted) await voted;
    }
    const row = _trajectoryRow(round, wire, votes, answers.confidences);
    trajectory.push(row);
    if (mode.kind !== 'rule' && shouldStop(_count(votes, 'stop'), n)) endedBy = 'vote';
    else if (mode.kind !== 'vote' && round >= (config.after ?? DEFAULT_AFTER)) {
      const value = applyRule(mode.rule, { values: wire.values, confidences: answers.confidences, totalAgents: n });
      if (value !== undefined) {
        // Every honest agent applies the same rule to the same multiset: one value for all.
        roles.forEach((role, i) => {
          if (role === 'honest') shown[i] = value;
        });
        row.decided = value;
        endedBy = 'rule';
      }
    }
    if (!endedBy && _overBudget(config.budget, round, started, options.tokensUsed)) endedBy = 'budget';
  }
  return _result(setup, round, endedBy ?? 'deadline', trajectory, counters);
}

/** The round a game is in, as its questions read it (set by the game loop). */
interface _Now {
  round: number;
  /** The history a proposal sees is the one the previous round's vote saw: one snapshot per round. */
  past: readonly PublicRound[];
  answers: RoundAnswers;
  /** This round's line, already in `past` when the vote is asked. */
  sealed: PublicRound;
  votes: VoteChoice[];
}

/**
 * The two questions of a round, built once per game and reading the round from `now`
 * (a sweep of millions of rounds builds no closures per round). Each is asked, and its
 * answers settled, before the game loop moves `now` on. A vote's answers fill
 * `now.votes`; synchronous agents answer without a promise.
 */
function _questions(
  setup: _Setup,
  config: GameConfig,
  notes: (Note[] | undefined)[],
  now: _Now,
  counters: AnswerCounters,
): { decide: AskOptions; vote: AskOptions } {
  const { ids, roles, agents, rules, shown } = setup;
  const notesOf = (i: number) => {
    const own = notes[i];
    return own?.length ? Object.freeze(own.slice()) : EMPTY;
  };
  const view = (i: number, proposals: readonly Message[], values: readonly Proposal[]) =>
    new _View(
      ids[i]!,
      roles[i]!,
      now.round,
      rules,
      setup.initial[i] ?? null,
      shown[i] ?? null,
      now.past,
      notesOf(i),
      proposals,
      values,
    );
  const count = ids.length;
  const tries = config.tries;
  return {
    decide: {
      count,
      tries,
      ask: (i, attempt) => agents[i]!.decide(view(i, NO_MESSAGES, NO_VALUES), attempt),
      accept: (i, raw) => acceptDecision(raw, roles[i]!, config.range, i, now.answers),
      fallback: (i, note) => {
        now.answers.values[i] = 'abstain';
        now.answers.reasonings[i] = failedReasoning(tries);
        if (note) {
          notes[i] ??= [];
          notes[i].push({ round: now.round, text: note });
        }
      },
      counters,
    },
    vote: {
      count,
      tries,
      ask: (i, attempt) => agents[i]!.vote(view(i, now.sealed.messages, now.sealed.values), attempt),
      accept: (i, raw) => {
        const vote = checkVote(raw, roles[i]!);
        if (vote) now.votes[i] = vote;
        return vote !== undefined;
      },
      fallback: (i) => {
        now.votes[i] = 'continue';
      },
      counters,
    },
  };
}

interface _Setup {
  ids: string[];
  roles: Role[];
  agents: Agent[];
  rules: GameRules;
  initial: (number | null)[];
  /** Each agent's value as last shown on the wire (its initial value at first); null: never proposed. */
  shown: (number | null)[];
}

function _setup(config: GameConfig, seed: number | string, createAgent: RunGameOptions['createAgent']): _Setup {
  const n = config.honest + config.byzantine;
  const rng = Rng.forRun(seed, 'game');
  // Byzantine seats are shuffled by the seed (ref), so agent_0 is not always honest.
  const roles = rng
    .fork('roles')
    .shuffle(new Array<Role>(n).fill('honest', 0, config.honest).fill('byzantine', config.honest));
  const valueRng = rng.fork('initial-values');
  const [lo, hi] = config.range;
  const initial = roles.map((role) => (role === 'honest' ? valueRng.int(lo, hi) : null));
  const ids = roles.map((_, i) => _agentId(i));
  const confidence =
    config.decide !== undefined && config.decide.kind !== 'vote' && config.decide.rule === 'confidence';
  const rules: GameRules = Object.freeze({
    totalAgents: n,
    range: Object.freeze([lo, hi] as const),
    maxRounds: config.maxRounds,
    awareness: config.awareness,
    confidence,
  });
  const agents = ids.map((id, index) =>
    createAgent(new _Seat(id, index, roles[index] as Role, initial[index] ?? null, rules, rng)),
  );
  return { ids, roles, agents, rules, initial, shown: initial.slice() };
}

const _ids: string[] = [];

/** `agent_<i>`, the same string every game: a sweep does not build N of them per run. */
function _agentId(i: number): string {
  for (let k = _ids.length; k <= i; k++) _ids.push(`agent_${k}`);
  return _ids[i]!;
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

function _overBudget(
  budget: Budget | undefined,
  round: number,
  started: number,
  tokensUsed: (() => number) | undefined,
): boolean {
  if (!budget) return false;
  if (budget.rounds !== undefined && round >= budget.rounds) return true;
  if (budget.tokens !== undefined && tokensUsed && tokensUsed() >= budget.tokens) return true;
  return budget.seconds !== undefined && (Date.now() - started) / 1000 >= budget.seconds;
}

function _trajectoryRow(
  round: number,
  wire: Wire,
  votes: VoteChoice[],
  confidences: (number | null)[] | undefined,
): TrajectoryRound {
  const row: TrajectoryRound = { round, values: wire.values, votes };
  if (wire.reasonings.some((r) => r !== '')) row.reasoning = wire.reasonings;
  if (wire.abstained) row.abstained = wire.abstained;
  if (confidences?.some((c) => c !== null)) row.confidence = confidences;
  return row;
}

function _count<T>(items: readonly T[], target: T): number {
  let c = 0;
  for (const item of items) if (item === target) c++;
  return c;
}

function _result(
  setup: _Setup,
  rounds: number,
  endedBy: EndedBy,
  trajectory: TrajectoryRound[],
  counters: AnswerCounters,
): GameResult {
  const initial: Record<string, number> = {};
  const final: Record<string, number> = {};
  // The same values, in the same (seat) order, as Object.values of the two records.
  const honestInitial: number[] = [];
  const honestFinal: number[] = [];
  const { ids, roles } = setup;
  for (let i = 0; i < ids.length; i++) {
    if (roles[i] !== 'honest') continue;
    const start = setup.initial[i] as number;
    const end = setup.shown[i] as number;
    initial[ids[i]!] = start;
    final[ids[i]!] = end;
    honestInitial.push(start);
    honestFinal.push(end);
  }
  const stoppedByVote = endedBy === 'vote';
  const outcome = classifyOutcome({
    honestInitial,
    honestFinal,
    stoppedByVote: stoppedByVote || endedBy === 'rule',
    escalated: endedBy === 'budget',
  });
  const { strict, range } = validity(honestInitial, honestFinal);
  return {
    agents: setup.ids,
    roles: setup.roles,
    initial,
    final,
    rounds,
    stoppedByVote,
    endedBy,
    outcome,
    strictValid: strict,
    rangeValid: range,
    trajectory,
    ...counters,
  };
}
