/**
 * @module
 * Prompts from the user's own checkout of the study's reference code (`--prompts
 * reference:PATH`; docs/prompts.md). One long-lived `python3` runs our bridge
 * (`python/reference_bridge.py`), which imports the checkout's `bcg_agents` with vllm
 * and torch stubbed and builds each question with the checkout's own agent methods,
 * from the state our renderer gets (the same history lines, notes and proposals). So
 * a researcher runs the paper's exact wording while none of it is in this package.
 * Requests and answers are JSON lines, answered in order; sampling stays the pack's.
 */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { WitnessError } from '../../core/errors.js';
import { sha256Hex } from '../../core/hash.js';
import type { ChatRequest, JsonSchema } from '../../llm/types.js';
import { pyStrip, referenceOrder, summarizeRound } from '../network.js';
import type { Attempt, Awareness, DecideView, VoteView } from '../types.js';
import type { PromptPack } from './pack.js';
import { type PromptStage, sampledRequest } from './render.js';

/** `--prompts` values with this prefix name a checkout of the reference, not a pack. */
export const REFERENCE_PREFIX = 'reference:';
export const BRIDGE_SCRIPT = fileURLToPath(new URL('../../../python/reference_bridge.py', import.meta.url));
/** History lines and notes sent per question: the reference keeps at most 15 summaries (main.py) and 5 notes. */
const SENT_ROUNDS = 15;

/** Prompts rendered outside this package; `name` and `hash` go into results and cassettes like a pack's. */
export interface ExternalPrompts {
  readonly name: string;
  readonly hash: string;
  readonly dir: string;
  /** The awareness variants the prompts exist for (a checkout older than the variants has only may_exist). */
  readonly awareness: readonly Awareness[];
  render(stage: PromptStage, view: DecideView | VoteView, attempt?: Attempt): Promise<ChatRequest>;
  close(): Promise<void>;
}

export interface ReferencePromptsOptions {
  /** Supplies the sampling of each stage (the reference's equals the default pack's). */
  pack: PromptPack;
  /** The interpreter; default `$WITNESS_PYTHON` or `python3`. */
  python?: string;
}

/** The folder holding the checkout's bcg_agents.py: PATH itself or its byzantine_consensus_game/. */
export function referenceFolder(path: string): string {
  const root = resolve(path);
  for (const dir of [root, join(root, 'byzantine_consensus_game')])
    if (existsSync(join(dir, 'bcg_agents.py'))) return dir;
  throw new WitnessError(
    'NOT_FOUND',
    `${root} is not a checkout of the reference: neither it nor its byzantine_consensus_game/ folder has bcg_agents.py. Clone github.com/leorugli/byzantine-consensus-llm-agents and give its path: --prompts reference:PATH.`,
  );
}

/** Starts the bridge on the checkout at `path`; resolves once the checkout has been imported and checked. */
export async function openReferencePrompts(path: string, options: ReferencePromptsOptions): Promise<ExternalPrompts> {
  const dir = referenceFolder(path);
  const python = options.python ?? process.env.WITNESS_PYTHON ?? 'python3';
  const bridge = new _Bridge(spawn(python, [BRIDGE_SCRIPT, dir], { stdio: ['pipe', 'pipe', 'pipe'] }), python, dir);
  const awareness = await bridge.ready;
  const hash = _hash(dir);
  return {
    name: 'reference',
    hash,
    dir,
    awareness,
    render: async (stage, view, attempt) => {
      const answer = await bridge.ask(
        _request(stage, view, attempt),
        `the ${stage} prompt of ${view.id} in round ${view.round}`,
      );
      return sampledRequest(options.pack, stage, view.role, answer.system, answer.user, answer.schema);
    },
    close: () => bridge.close(),
  };
}

/** SHA-256 over our bridge and every Python file of the checkout folder: other code, other hash. */
function _hash(dir: string): string {
  const files = readdirSync(dir)
    .filter((f) => f.endsWith('.py') && statSync(join(dir, f)).isFile())
    .sort();
  const parts = [
    `bridge\0${readFileSync(BRIDGE_SCRIPT, 'utf8')}`,
    ...files.map((f) => `${f}\0${readFileSync(join(dir, f), 'utf8')}`),
  ];
  return sha256Hex(parts.join('\0'));
}

/** The agent's state as the bridge sets it on the checkout's agent. */
function _request(
  stage: PromptStage,
  view: DecideView | VoteView,
  attempt: Attempt | undefined,
): Record<string, unknown> {
  const { rules } = view;
  const request: Record<string, unknown> = {
    stage,
    // Whole-round tries send the first prompt; the single follow-ups are the reference's own retry loop.
    attempt: attempt?.phase === 'single' ? attempt.number : 1,
    id: view.id,
    role: view.role,
    awareness: rules.awareness,
    range: rules.range,
    round: view.round,
    max_rounds: rules.maxRounds,
    initial_value: view.initialValue,
    current_value: typeof view.currentValue === 'number' ? view.currentValue : null,
    history: view.history.slice(-SENT_ROUNDS).map((r) => summarizeRound(r)),
    notes: view.notes
      .filter((n) => pyStrip(n.text) !== '')
      .slice(-SENT_ROUNDS)
      .map((n) => [n.round, n.text]),
  };
  if (stage === 'vote' && 'proposals' in view) {
    const messages = view.proposals;
    request.own_reasoning = messages.find((m) => m.from === view.id)?.reasoning ?? '';
    request.proposals = referenceOrder(messages.map((m) => m.from))
      .map((i) => messages[i]!)
      .filter((m) => m.from !== view.id && m.value !== 'abstain')
      .map((m) => [m.from, m.value, m.reasoning]);
  }
  return request;
}

interface _Answer {
  system: string;
  user: string;
  schema: JsonSchema;
}

interface _Waiter {
  what: string;
  resolve: (answer: _Answer) => void;
  reject: (error: Error) => void;
}

/** The python3 child: a first line saying ready (or why not), then one answer line per request, in order. */
class _Bridge {
  /** Resolves with the awareness variants the checkout has. */
  readonly ready: Promise<Awareness[]>;
  private readonly waiting: _Waiter[] = [];
  private failure: WitnessError | undefined;
  private stderr = '';
  private onReady: ((line: string) => void) | undefined;

  constructor(
    private readonly child: ChildProcessWithoutNullStreams,
    python: string,
    private readonly dir: string,
  ) {
    this.ready = new Promise((resolveReady, rejectReady) => {
      this.onReady = (line) => {
        const first = _json(line);
        if (first?.ready === true)
          resolveReady(Array.isArray(first.awareness) ? (first.awareness as Awareness[]) : ['may_exist', 'none_exist']);
        else
          rejectReady(
            this._fail(
              `The reference checkout at ${dir} cannot be used: ${first?.error ?? line}. Check that it is the study's code (byzantine_consensus_game/ with bcg_agents.py).`,
              'INVALID_INPUT',
            ),
          );
      };
      child.on('error', (error: NodeJS.ErrnoException) => {
        const message =
          error.code === 'ENOENT'
            ? `${python} was not found: --prompts reference: runs the checkout's own code with Python 3. Install python3, or set WITNESS_PYTHON to an interpreter.`
            : `${python} could not be started: ${error.message}.`;
        rejectReady(this._fail(message, error.code === 'ENOENT' ? 'NOT_FOUND' : 'IO'));
      });
      // 'close', not 'exit': every line the bridge wrote has been read by then.
      child.on('close', (code) =>
        rejectReady(
          this._fail(`The reference prompt bridge (${python}) stopped with status ${code}${this._stderrTail()}.`, 'IO'),
        ),
      );
    });
    this.ready.catch(() => {});
    // A write after the child died fails here; 'close' reports it to whoever waits.
    child.stdin.on('error', () => {});
    child.stderr.on('data', (chunk: Buffer) => {
      this.stderr = (this.stderr + chunk.toString('utf8')).slice(-2000);
    });
    createInterface({ input: child.stdout }).on('line', (line) => this._line(line));
  }

  async ask(request: Record<string, unknown>, what: string): Promise<_Answer> {
    await this.ready;
    if (this.failure) throw this.failure;
    return new Promise((resolveAnswer, reject) => {
      this.waiting.push({ what, resolve: resolveAnswer, reject });
      this.child.stdin.write(`${JSON.stringify(request)}\n`);
    });
  }

  async close(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise<void>((done) => this.child.once('close', () => done()));
    this.child.stdin.end();
    await exited;
  }

  private _line(line: string): void {
    if (this.onReady) {
      const ready = this.onReady;
      this.onReady = undefined;
      ready(line);
      return;
    }
    const waiter = this.waiting.shift();
    if (!waiter) return;
    const answer = _json(line);
    if (
      answer &&
      typeof answer.system === 'string' &&
      typeof answer.user === 'string' &&
      typeof answer.schema === 'object' &&
      answer.schema !== null
    ) {
      waiter.resolve(answer as unknown as _Answer);
    } else {
      waiter.reject(
        new WitnessError(
          'INVALID_INPUT',
          `The reference checkout at ${this.dir} could not build ${waiter.what}: ${answer?.error ?? line}.`,
        ),
      );
    }
  }

  /** Records why the bridge is unusable and fails every question still waiting. */
  private _fail(message: string, code: 'INVALID_INPUT' | 'NOT_FOUND' | 'IO'): WitnessError {
    this.failure ??= new WitnessError(code, message);
    for (const w of this.waiting.splice(0)) w.reject(this.failure);
    return this.failure;
  }

  private _stderrTail(): string {
    const tail = this.stderr.trim().split('\n').at(-1);
    return tail ? ` (${tail})` : '';
  }
}

function _json(line: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(line);
    return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
