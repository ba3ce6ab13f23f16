/**
 * @module
 * The network of the game (consensus.md §1 threat model). It, not the agents, builds
 * every message: the sender id comes from the engine's own record of who answered,
 * each answer's fields are read exactly once, and one immutable message object is
 * delivered to every peer. So no agent implementation can spoof a sender or send
 * different payloads to different peers, whatever it returns or mutates later.
 */
import type { Message, Proposal, PublicRound } from './types.js';

/** Reasoning longer than this is cut on the wire (ref: 500 characters). */
export const WIRE_REASONING_LIMIT = 500;
/** Characters of reasoning kept per agent in the shared summary line (ref: 47). */
export const SUMMARY_REASONING_LIMIT = 47;

/**
 * A delivered message. Its fields are private and exposed through getters, so no
 * receiver can change what the others see; unlike `Object.freeze` on a literal
 * (≈ 200 ns each here), building one costs about as much as a plain object.
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
export function sealRound(round: number, ids: readonly string[], values: readonly Proposal[], reasonings: readonly string[]): PublicRound {
  const messages: Message[] = new Array(ids.length);
  for (let i = 0; i < ids.length; i++) {
    const reasoning = reasonings[i] ?? '';
    messages[i] = new _Message(round, ids[i] as string, values[i] as Proposal, reasoning.length > WIRE_REASONING_LIMIT ? reasoning.slice(0, WIRE_REASONING_LIMIT) : reasoning);
  }
  return Object.freeze({ round, messages: Object.freeze(messages), values: Object.freeze(values.slice()) });
}

/**
 * The shared history line of a round (consensus.md §2 step 4):
 * `Round r: agent_0 value: V | Reasoning: <first 47 chars>...; agent_1 …`.
 */
export function summarizeRound(publicRound: PublicRound): string {
  const parts = publicRound.messages.map(
    (m) => `${m.from} value: ${m.value} | Reasoning: ${m.reasoning.slice(0, SUMMARY_REASONING_LIMIT)}...`,
  );
  return `Round ${publicRound.round}: ${parts.join('; ')}`;
}
