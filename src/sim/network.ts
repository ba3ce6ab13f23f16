/**
 * @module
 * The network of the game (consensus.md §1 threat model). It, not the agents, builds
 * every message: the sender id comes from the engine's own record of who answered,
 * each answer's fields are read exactly once, and one immutable message object is
 * delivered to every peer. So no agent implementation can spoof a sender or send
 * different payloads to different peers, whatever it returns or mutates later.
 */
import type { Message, Proposal, PublicRound } from './types.js';

/** Reasoning longer than this is cut on the wire (ref: a2a_sim.py `A2AMessage`, 500 characters). */
export const WIRE_REASONING_LIMIT = 500;
/** Reasoning longer than this is cut in the shared summary line (ref: main.py `_update_round_summaries`, 50). */
export const SUMMARY_REASONING_LIMIT = 50;
/** What replaces the end of a cut reasoning; the cut keeps the whole within its limit. */
export const CUT_MARK = '...';

/**
 * A delivered message. Its fields are private and exposed through getters, so no
 * receiver can change what the others see; unlike `Object.freeze` on a literal
 * (≈ 200 ns each here), building one costs about as much as a plain object. It is not
 * extensible: an own `value` or `from` defined on it would hide the getters from every
 * agent that reads the message after (≈ 30 ns a message).
 */
class _Message implements Message {
  readonly #round: number;
  readonly #from: string;
  readonly #value: Proposal;
  readonly #reasoning: string;

  constructor(round: number, from: string, value: Proposal, reasoning: string) {
    this.#round = round;
    this.#from = from;
    this.#value = value;
    this.#reasoning = reasoning;
    Object.preventExtensions(this);
  }

  get round(): number {
    return this.#round;
  }
  get from(): string {
    return this.#from;
  }
  get value(): Proposal {
    return this.#value;
  }
  get reasoning(): string {
    return this.#reasoning;
  }
  toJSON(): Message {
    return { round: this.#round, from: this.#from, value: this.#value, reasoning: this.#reasoning };
  }
}

/** Seals one round's messages: sender ids from `ids`, one immutable message per sender. */
export function sealRound(
  round: number,
  ids: readonly string[],
  values: readonly Proposal[],
  reasonings: readonly string[],
): PublicRound {
  const messages: Message[] = new Array(ids.length);
  for (let i = 0; i < ids.length; i++) {
    const reasoning = reasonings[i] ?? '';
    messages[i] = new _Message(
      round,
      ids[i] as string,
      values[i] as Proposal,
      cutText(reasoning, WIRE_REASONING_LIMIT),
    );
  }
  return Object.freeze({ round, messages: Object.freeze(messages), values: Object.freeze(values.slice()) });
}

/**
 * `text` as is when it fits in `limit` characters, else its start and "..." in exactly
 * `limit` (ref). Characters are code points, as Python counts them, so a cut never
 * splits a surrogate pair.
 */
export function cutText(text: string, limit: number): string {
  if (text.length <= limit) return text;
  // Every history line cuts each reasoning: counting code points in place costs a
  // fraction of spreading the text into an array of them (bench/llm.ts).
  if (!_isCount(limit) || limit < CUT_MARK.length) return _cutByPoints(text, limit);
  const head = _indexAfter(text, limit - CUT_MARK.length, 0);
  return _indexAfter(text, CUT_MARK.length, head) < text.length ? `${text.slice(0, head)}${CUT_MARK}` : text;
}

/** The first `limit` characters (code points) of `text`, like Python's `text[:limit]`. */
export function headOf(text: string, limit: number): string {
  if (text.length <= limit) return text;
  return _isCount(limit) ? text.slice(0, _indexAfter(text, limit, 0)) : Array.from(text).slice(0, limit).join('');
}

/** cutText by its definition, for limits the in-place count does not cover (below the mark's length, fractions). */
function _cutByPoints(text: string, limit: number): string {
  const points = Array.from(text);
  return points.length > limit ? `${points.slice(0, limit - CUT_MARK.length).join('')}${CUT_MARK}` : text;
}

function _isCount(n: number): boolean {
  return Number.isSafeInteger(n) && n >= 0;
}

/**
 * The index in `text` just past `count` code points from `start` (or its length when
 * fewer are left). A high surrogate followed by a low one is one code point, anything
 * else one each, as the string iterator (Array.from) counts them.
 */
function _indexAfter(text: string, count: number, start: number): number {
  let i = start;
  for (let n = 0; n < count && i < text.length; n++) {
    const unit = text.charCodeAt(i);
    i += unit >= 0xd800 && unit <= 0xdbff && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00 ? 2 : 1;
  }
  return i;
}

/** What Python's `str.isspace` calls space: JavaScript's trim adds U+FEFF and lacks U+001C–U+001F and U+0085. */
const PY_SPACE = '\\t\\n\\v\\f\\r\\x1c-\\x20\\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000';
const PY_STRIP = new RegExp(`^[${PY_SPACE}]+|[${PY_SPACE}]+$`, 'g');

/** `text` trimmed like Python's `text.strip()`, which the reference applies to notes, replies and votes. */
export function pyStrip(text: string): string {
  return text.replace(PY_STRIP, '');
}

/**
 * Indices of `ids` in the reference's order: ids compared as strings, so agent_10
 * comes before agent_2 (ref: main.py sorts the agents' ids; it matters from N = 11).
 */
export function referenceOrder(ids: readonly string[]): number[] {
  return ids.map((_, i) => i).sort((a, b) => (ids[a]! < ids[b]! ? -1 : ids[a]! > ids[b]! ? 1 : 0));
}

/**
 * The shared history line of a round (consensus.md §2 step 4; ref: main.py
 * `_update_round_summaries`): `Round r: agent_0 value: V | Reasoning: <reasoning>; …`,
 * agents in the reference's order, each reasoning cut to 47 characters and "..." when
 * longer than 50, the reasoning part left out when empty, and `value: ABSTAINED` for
 * an agent that has never proposed.
 */
export function summarizeRound(publicRound: PublicRound, limit: number = SUMMARY_REASONING_LIMIT): string {
  const kept = _summaries.get(publicRound);
  if (kept?.limit === limit) return kept.line;
  const line = _summarize(publicRound, limit);
  if (_isSealed(publicRound)) _summaries.set(publicRound, { limit, line });
  return line;
}

/**
 * History lines of sealed rounds. Every agent's every prompt holds the last rounds'
 * lines, so a game of N agents asked twice a round would build each line 2N times per
 * round it is shown in; a sealed round cannot change, so its line is built once.
 */
const _summaries = new WeakMap<PublicRound, { limit: number; line: string }>();

function _summarize(publicRound: PublicRound, limit: number): string {
  const { messages } = publicRound;
  const parts = referenceOrder(messages.map((m) => m.from)).map((i) => {
    const m = messages[i]!;
    const reasoning = cutText(m.reasoning, limit);
    return `${m.from} value: ${m.value === 'abstain' ? 'ABSTAINED' : m.value}${reasoning ? ` | Reasoning: ${reasoning}` : ''}`;
  });
  return `Round ${publicRound.round}: ${parts.join('; ')}`;
}

/** A round as sealRound makes it: frozen, its messages frozen and each one ours (no setter, private fields). */
function _isSealed(publicRound: PublicRound): boolean {
  const { messages } = publicRound;
  if (!Object.isFrozen(publicRound) || !Object.isFrozen(messages)) return false;
  for (const m of messages) if (!(m instanceof _Message)) return false;
  return true;
}
