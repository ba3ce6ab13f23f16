/**
 * @module
 * Agent names. A name becomes a file name (`inbox/<name>.jsonl`), so it is checked
 * against one strict ASCII pattern (mailbox.md §1): no path separators, no dot-dot
 * escape, no NUL, and no Unicode lookalikes that would let `аlice` (Cyrillic а)
 * pass for `alice`. Names are unique regardless of case: on a case-insensitive file
 * system (macOS, Windows) `alice` and `Alice` would share one inbox file.
 */
import { WitnessError } from '../core/errors.js';

export const AGENT_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;
export const AGENT_NAME_RULE = '1–64 ASCII letters, digits, "_", "." or "-", starting with a letter or digit';

/** Why `name` is not a valid agent name, or undefined when it is. */
export function agentNameProblem(name: unknown): string | undefined {
  if (typeof name !== 'string') return 'an agent name must be a string';
  if (name.length === 0) return 'the agent name is empty';
  if (name.length > 64) return `the agent name has ${name.length} characters; at most 64 are allowed`;
  if (name.includes('\0')) return 'the agent name contains a NUL character';
  if (name.includes('/') || name.includes('\\'))
    return `the agent name ${JSON.stringify(name)} contains a path separator`;
  if (/[^\x20-\x7e]/.test(name))
    return `the agent name ${JSON.stringify(name)} contains a non-ASCII or control character (lookalike letters are refused)`;
  if (!AGENT_NAME_PATTERN.test(name)) return `the agent name ${JSON.stringify(name)} is not ${AGENT_NAME_RULE}`;
  return undefined;
}

/** Throws INVALID_INPUT naming the rule when `name` is not a valid agent name. */
export function assertAgentName(name: unknown, what = 'agent name'): string {
  const problem = agentNameProblem(name);
  if (problem) throw new WitnessError('INVALID_INPUT', `Invalid ${what}: ${problem}. Use ${AGENT_NAME_RULE}.`);
  return name as string;
}

/** The registered name that `name` equals or differs from only in case, if any. */
export function sameNameAs(names: Iterable<string>, name: string): string | undefined {
  const folded = name.toLowerCase(); // ASCII-only names: toLowerCase is the whole case folding
  for (const other of names) if (other.toLowerCase() === folded) return other;
  return undefined;
}
