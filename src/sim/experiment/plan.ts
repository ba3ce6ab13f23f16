/**
 * @module
 * From an experiment to the ordered list of runs. Each cell is one combination of
 * grid values; each run has a stable id (a hash of the cell, its index and the base
 * seed), its own seed (a hash of the cell without its paired axes, so cells that differ
 * only in the decision layer play the same games), and a place (`seq`) in the full
 * order — index-major, so raising `runs` appends — which shards split round-robin and
 * merges restore.
 */
import { canonicalize } from '../../core/canonical-json.js';
import { WitnessError } from '../../core/errors.js';
import { sha256Hex } from '../../core/hash.js';
import type { Budget } from '../decide/mode.js';
import type { Awareness } from '../types.js';
import type { AgentKind, Experiment, PairedAxis } from './schema.js';

export interface Cell {
  /** Who answers for the honest agents, and for the Byzantine ones unless `byzantineAgents` is set. */
  agents: AgentKind;
  honestPolicy: string;
  /** null when there are no Byzantine agents, or they are not rule-based (the strategy would not matter). */
  byzantineStrategy: string | null;
  /** Present only in mixed populations: the kind of the Byzantine agents. */
  byzantineAgents?: AgentKind;
  /** Present only when a model answers: its name (llm) or GGUF file (embedded). */
  model?: string;
  honest: number;
  byzantine: number;
  awareness: Awareness;
  range: [number, number];
  rounds: number;
  /** Present only when a rule takes part in deciding: `rule:NAME` or `hybrid:NAME`. */
  decide?: string;
  /** Present with `decide`: the round from which the rule decides. */
  after?: number;
  /** Present when the experiment sets a circuit breaker (it changes outcomes, so it is part of the cell). */
  budget?: Budget;
}

export interface PlannedRun {
  id: string;
  seq: number;
  cell: Cell;
  cellKey: string;
  index: number;
  seed: number;
}

export interface Shard {
  /** 1-based shard number. */
  index: number;
  count: number;
}

const _list = <T>(value: T | T[]): T[] => (Array.isArray(value) ? value : [value]);

/** Every distinct cell of the grid, in a stable order. */
export function expandCells(experiment: Experiment): Cell[] {
  const g = experiment.grid;
  const ranges: [number, number][] = Array.isArray(g.range[0])
    ? (g.range as [number, number][])
    : [g.range as [number, number]];
  const cells = new Map<string, Cell>();
  for (const agents of _list(g.agents))
    for (const model of g.model !== undefined ? _list(g.model) : [undefined])
      for (const honestPolicy of _list(g.honestPolicy))
        for (const byzantine of _list(g.byzantine))
          for (const strategy of _list(g.byzantineStrategy))
            for (const size of g.honest !== undefined ? _list(g.honest) : _list(g.total!))
              for (const awareness of _list(g.awareness))
                for (const range of ranges)
                  for (const rounds of _list(g.rounds))
                    for (const decide of _list(g.decide))
                      for (const after of decide === 'vote' ? [undefined] : _list(g.after)) {
                        const honest = g.honest !== undefined ? size : _honestFromTotal(size, byzantine);
                        const byzantineKind = g.byzantineAgents ?? agents;
                        // A policy name means nothing to model-backed honest agents: 'none', so it cannot split or rename their cells.
                        const policy = agents === 'policy' ? honestPolicy : 'none';
                        const cell: Cell = {
                          agents,
                          honestPolicy: policy,
                          byzantineStrategy: byzantine > 0 && byzantineKind === 'policy' ? strategy : null,
                          honest,
                          byzantine,
                          awareness,
                          range,
                          rounds,
                        };
                        // Added only when used, so rule-based cells keep their ids.
                        if (byzantineKind !== agents && byzantine > 0) cell.byzantineAgents = byzantineKind;
                        if (
                          model !== undefined &&
                          (agents !== 'policy' || (byzantine > 0 && byzantineKind !== 'policy'))
                        )
                          cell.model = model;
                        // Likewise only when a rule decides, so vote cells keep their ids.
                        if (decide !== 'vote') {
                          cell.decide = decide;
                          cell.after = after;
                        }
                        if (experiment.budget) cell.budget = experiment.budget;
                        cells.set(cellKey(cell), cell);
                      }
  return [...cells.values()];
}

function _honestFromTotal(total: number, byzantine: number): number {
  if (byzantine >= total) {
    throw new WitnessError(
      'INVALID_INPUT',
      `grid.byzantine: ${byzantine} Byzantine agents leave no honest agent among N = ${total}; b must be less than N.`,
    );
  }
  return total - byzantine;
}

/** A readable, unique label of a cell, e.g. `policy:plurality h=8 b=2:split may_exist [0,50] R=50`. */
export function cellKey(cell: Cell): string {
  const byzantineKind = cell.byzantineAgents ?? cell.agents;
  const who = (kind: AgentKind, policy: string | null) => (kind === 'policy' ? policy : `${kind}:${cell.model}`);
  const byz =
    cell.byzantine > 0
      ? `b=${cell.byzantine}:${byzantineKind === cell.agents && cell.agents !== 'policy' ? 'same' : who(byzantineKind, cell.byzantineStrategy)}`
      : 'b=0';
  const honest = cell.agents === 'policy' ? `policy:${cell.honestPolicy}` : who(cell.agents, null);
  const decide = cell.decide ? ` ${cell.decide}@${cell.after}` : '';
  const b = cell.budget;
  const budget = b
    ? ` budget(${[b.rounds && `${b.rounds} rounds`, b.tokens && `${b.tokens} tokens`, b.seconds && `${b.seconds} s`].filter(Boolean).join(', ')})`
    : '';
  return `${honest} h=${cell.honest} ${byz} ${cell.awareness} [${cell.range[0]},${cell.range[1]}] R=${cell.rounds}${decide}${budget}`;
}

/** All runs of the experiment (or of one shard of it), in `seq` order. */
export function planRuns(experiment: Experiment, shard?: Shard): PlannedRun[] {
  return [...eachPlannedRun(experiment, shard)];
}

/**
 * The same runs as `planRuns`, one at a time: a caller that only walks the plan (a
 * merge naming missing runs, a resume) holds one run, not 2 million.
 */
export function* eachPlannedRun(experiment: Experiment, shard?: Shard): Generator<PlannedRun> {
  yield* lazyPlan(experiment, shard);
}

/**
 * A plan that computes its runs when asked (a run is a hash of its cell, index and
 * seed, so the run at any `seq` is known without the others): resuming or checking a
 * 2-million-run sweep costs its cells, not its runs.
 */
export interface Plan extends Iterable<PlannedRun> {
  /** Runs in the plan (of this shard). */
  readonly length: number;
  /** Every seq of the plan is below this (the unsharded plan's length). */
  readonly end: number;
  /**
   * The run at `seq`, or undefined when no run of this plan (or shard) has it. `known`:
   * its id and seed, computed already by this plan's twin in another thread (a worker's
   * chunk), so the run costs no hash.
   */
  at(seq: number, known?: RunIdentity): PlannedRun | undefined;
  /** The cell of the run at `seq`, without computing the run (no hash); undefined as for `at`. */
  cellAt(seq: number): Cell | undefined;
  /**
   * Where a results line stands against this plan: one of its runs, another shard's,
   * a run of this experiment past `runs` (the file was written with a larger --runs),
   * a run whose id is this experiment's but whose seed is not (an older version's
   * seeds), or not this experiment's at all.
   */
  place(line: { id?: unknown; seq?: unknown; seed?: unknown }): RunPlace;
}

export type RunPlace = 'planned' | 'other-shard' | 'beyond' | 'stale-seed' | 'foreign';

/** What a run's hash gives: its id and its own seed. */
export type RunIdentity = Pick<PlannedRun, 'id' | 'seed'>;

export function lazyPlan(experiment: Experiment, shard?: Shard): Plan {
  const seed = canonicalize(experiment.seed);
  const paired = experiment.paired ?? DEFAULT_PAIRED;
  const cells = expandCells(experiment).map((cell) => {
    const json = canonicalize(cell);
    const games = canonicalize(gamesCell(cell, paired));
    // null: the cell is its own games cell (a vote cell by default), one hash a run.
    return { cell, key: cellKey(cell), json, games: games === json ? null : games };
  });
  const width = cells.length;
  const runs = experiment.runs;
  const total = width * runs;
  const first = shard ? shard.index - 1 : 0;
  const step = shard ? shard.count : 1;
  // Index-major: seq = index × cells + the cell's place, so a larger --runs appends runs
  // at the end and leaves every earlier seq (and line) as it was.
  const make = (seq: number, known?: RunIdentity): PlannedRun => {
    const c = cells[seq % width]!;
    const index = Math.floor(seq / width);
    if (known) return { id: known.id, seq, cell: c.cell, cellKey: c.key, index, seed: known.seed };
    // Exactly canonicalize({ cell, index, seed }) (keys in order), with the cell written once.
    const digest = sha256Hex(`witness/run/v1\0{"cell":${c.json},"index":${index},"seed":${seed}}`);
    // The run's own seed: 48 bits of the digest of its cell without the paired axes, so
    // cells that differ only there play the same games. A vote cell is its own games
    // cell: its seed is that of its id's digest, as before.
    const games =
      c.games === null ? digest : sha256Hex(`witness/run/v1\0{"cell":${c.games},"index":${index},"seed":${seed}}`);
    return {
      id: `r-${digest.slice(0, 16)}`,
      seq,
      cell: c.cell,
      cellKey: c.key,
      index,
      seed: Number.parseInt(games.slice(16, 28), 16),
    };
  };
  const inPlan = (seq: number) => Number.isInteger(seq) && seq >= 0 && seq < total && seq % step === first;
  return {
    length: total > first ? Math.ceil((total - first) / step) : 0,
    end: total,
    at: (seq, known) => (inPlan(seq) ? make(seq, known) : undefined),
    cellAt: (seq) => (inPlan(seq) ? cells[seq % width]!.cell : undefined),
    place(line) {
      const { id, seq } = line;
      if (typeof id !== 'string' || typeof seq !== 'number' || !Number.isInteger(seq) || seq < 0 || width === 0)
        return 'foreign';
      const run = make(seq);
      if (run.id !== id) return 'foreign';
      if (typeof line.seed === 'number' && line.seed !== run.seed) return 'stale-seed';
      if (seq >= total) return 'beyond';
      return seq % step === first ? 'planned' : 'other-shard';
    },
    *[Symbol.iterator]() {
      for (let seq = first; seq < total; seq += step) yield make(seq);
    },
  };
}

/** Axes that, by default, tell paired cells apart: the decision layer. */
export const DEFAULT_PAIRED: readonly PairedAxis[] = ['decide', 'after'];

/** The cell without its paired axes: what decides the games its runs play (seats, initial values, the seed). */
export function gamesCell(cell: Cell, paired: readonly PairedAxis[] = DEFAULT_PAIRED): Partial<Cell> {
  const games: Partial<Cell> = { ...cell };
  for (const axis of paired) delete games[axis];
  return games;
}

/**
 * The runs a sweep has left to play, handed out one at a time in plan order: a fresh
 * 2-million-run sweep holds the runs in flight, not a list of every run.
 */
export interface RunQueue {
  /** Runs the queue hands out in all. */
  readonly length: number;
  /** The next run left to play, or undefined once all were taken. */
  take(): PlannedRun | undefined;
}

/**
 * The plan's runs minus those `done` holds. `done.count` must be how many runs of this
 * plan it holds (the results file's finished runs are counted so), so that `length` is
 * known before the walk, as the progress line needs.
 */
export function runQueue(plan: Plan, done?: { has(run: PlannedRun): boolean; readonly count: number }): RunQueue {
  const runs = plan[Symbol.iterator]();
  const length = plan.length - (done?.count ?? 0);
  let taken = 0;
  return {
    length,
    take() {
      for (let next = runs.next(); !next.done; next = runs.next()) {
        if (done?.has(next.value)) continue;
        taken++;
        return next.value;
      }
      // A miscount would stop a sweep short and call it interrupted: say it is a bug instead.
      if (taken < length)
        throw new WitnessError(
          'INTERNAL',
          `The plan has ${taken} runs left to play, not the ${length} counted: the finished runs were miscounted.`,
        );
      return undefined;
    },
  };
}

/** Parses `i/n` (1 ≤ i ≤ n). */
export function parseShard(text: string): Shard {
  const m = /^(\d+)\/(\d+)$/.exec(text.trim());
  const index = m ? Number(m[1]) : Number.NaN;
  const count = m ? Number(m[2]) : Number.NaN;
  if (!m || count < 1 || index < 1 || index > count) {
    throw new WitnessError(
      'USAGE',
      `--shard "${text}" is not of the form i/n with 1 ≤ i ≤ n (e.g. --shard 2/4), auto (a SLURM array) or auto/N (a Kubernetes Indexed Job of N completions).`,
    );
  }
  return { index, count };
}
