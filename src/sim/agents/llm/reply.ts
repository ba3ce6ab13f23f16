/**
 * @module
 * Reading a model's reply the way the reference does (consensus.md §2; ref:
 * vllm_agent.py `batch_generate_json`, main.py `_is_valid_decision_response` /
 * `_is_valid_vote_response`, bcg_agents.py `parse_decision_response` and the
 * `_decide_next_value_json` / `vote_to_terminate` loops). JSON is the whole reply or
 * else the first balanced `{…}` that parses. A proposal in a whole-round try needs a
 * value, a note of 3+ characters and reasoning of 10+; in a single follow-up the
 * reference's own looser checks apply. Out-of-range values are clamped, not refused.
 * A vote in a whole-round try must be exactly stop or continue (a Byzantine abstain is
 * retried); a single follow-up also takes a Byzantine abstain.
 */
import { InvalidAnswerError } from '../../answers.js';
import { pyStrip } from '../../network.js';
import type { Attempt, Decision, Role, VoteChoice } from '../../types.js';

/** The JSON object in a model's reply (ref: json.loads of the whole, else brace matching). */
export function parseModelJson(content: string): Record<string, unknown> {
  const text = pyStrip(content);
  const value = _parse(text) ?? _firstBalancedObject(text);
  if (value === undefined) throw new InvalidAnswerError(`reply is not JSON: ${JSON.stringify(text.slice(0, 80))}`);
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new InvalidAnswerError('reply is JSON but not an object');
  // The reference marks its own failures with an "error" field and treats any such reply as one.
  if ('error' in value) throw new InvalidAnswerError('reply has an "error" field');
  return value as Record<string, unknown>;
}

/**
 * From the first `{`, the first point where the braces balance and the text so far
 * parses. Like the reference, braces inside strings are counted too.
 */
function _firstBalancedObject(text: string): unknown {
  const start = text.indexOf('{');
  if (start < 0) return undefined;
  let depth = 0;
  for (let i = start; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 123) depth++;
    else if (c === 125 && --depth === 0) {
      const value = _parse(text.slice(start, i + 1));
      if (value !== undefined) return value;
    }
  }
  return undefined;
}

function _parse(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** Phrases the reader fills in where the reply left a field out. */
export interface ReplyPhrases {
  /** Public reasoning of a Byzantine value given without any (ref: a stock sentence). */
  defaultReasoning: string;
}

/** A proposal from a parsed reply, or InvalidAnswerError. */
export function readDecision(
  a: Record<string, unknown>,
  role: Role,
  range: readonly [number, number],
  attempt: Attempt,
  phrases: ReplyPhrases,
): Decision {
  if (attempt.phase === 'round') _checkRound(a);
  else _checkSingle(a, role);
  const note = typeof a.internal_strategy === 'string' ? a.internal_strategy : undefined;
  const said = a.public_reasoning;
  if (role === 'honest') {
    if (typeof a.value !== 'number' || !Number.isFinite(a.value))
      throw new InvalidAnswerError(`value ${JSON.stringify(a.value)} is not a number`);
    return _withConfidence(a, {
      value: _clamp(a.value, range),
      publicReasoning: typeof said === 'string' ? said : '',
      internalStrategy: note,
    });
  }
  if (a.value === 'abstain') {
    // Ref: an abstention in a single follow-up ends the tries as a failure; its note stays.
    if (attempt.phase === 'single')
      throw new InvalidAnswerError('abstained in a single follow-up', { final: true, note });
    return _withConfidence(a, {
      value: 'abstain',
      publicReasoning: typeof said === 'string' ? said : '',
      internalStrategy: note,
    });
  }
  // Ref: any other kind of value (a fraction, a string) is taken as an abstention with no reasoning.
  if (!Number.isInteger(a.value))
    return _withConfidence(a, { value: 'abstain', publicReasoning: '', internalStrategy: note });
  const publicReasoning = said === undefined ? phrases.defaultReasoning : typeof said === 'string' ? said : '';
  return _withConfidence(a, { value: _clamp(a.value as number, range), publicReasoning, internalStrategy: note });
}

/** A vote from a parsed reply, or InvalidAnswerError. */
export function readVote(a: Record<string, unknown>, role: Role, attempt: Attempt): VoteChoice {
  const d = a.decision;
  if (attempt.phase === 'round') {
    if (d === 'stop' || d === 'continue') return d;
    throw new InvalidAnswerError(`vote ${JSON.stringify(d)} is not "stop" or "continue"`);
  }
  const allowed = role === 'byzantine' ? ['stop', 'continue', 'abstain'] : ['stop', 'continue'];
  if (typeof d !== 'string' || !allowed.includes(pyStrip(d)))
    throw new InvalidAnswerError(`vote ${JSON.stringify(d)} is not one of ${allowed.join(', ')}`);
  return pyStrip(d) as VoteChoice;
}

/** Ref main.py `_is_valid_decision_response`: a value, a note of 3+ and reasoning of 10+ characters. */
function _checkRound(a: Record<string, unknown>): void {
  if (a.value === undefined || a.value === null) throw new InvalidAnswerError('no value');
  if (_length(a.internal_strategy) < 3) throw new InvalidAnswerError('internal_strategy shorter than 3 characters');
  if (_length(a.public_reasoning) < 10) throw new InvalidAnswerError('public_reasoning shorter than 10 characters');
}

/** Ref bcg_agents.py `_decide_next_value_json`: non-empty fields (honest); a note and an integer or abstain (Byzantine). */
function _checkSingle(a: Record<string, unknown>, role: Role): void {
  if (_length(a.internal_strategy) < 1) throw new InvalidAnswerError('internal_strategy empty');
  if (role === 'byzantine') {
    if (!Number.isInteger(a.value) && a.value !== 'abstain')
      throw new InvalidAnswerError(`value ${JSON.stringify(a.value)} is neither an integer nor "abstain"`);
    return;
  }
  if (a.value === undefined || a.value === null) throw new InvalidAnswerError('no value');
  if (_length(a.public_reasoning) < 1) throw new InvalidAnswerError('public_reasoning empty');
}

/** Characters (code points, as Python counts) after Python's strip; -1 for a non-string. */
function _length(value: unknown): number {
  if (typeof value !== 'string') return -1;
  return [...pyStrip(value)].length;
}

/** Ref: clamped into range, then cut to a whole number toward zero (Python `int`). */
function _clamp(value: number, [lo, hi]: readonly [number, number]): number {
  return Math.trunc(Math.max(lo, Math.min(hi, value)));
}

function _withConfidence(a: Record<string, unknown>, decision: Decision): Decision {
  if (typeof a.confidence === 'number') decision.confidence = a.confidence;
  return decision;
}
