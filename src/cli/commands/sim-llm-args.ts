/**
 * @module
 * Parsers of the model-backed options of `witness sim` (sim-llm.ts): each turns one
 * argument into a value or a one-line error naming what is wrong.
 */
import { InvalidArgumentError } from 'commander';
import { BYZANTINE_STRATEGIES, HONEST_POLICIES } from '../../sim/agents/policy/policies.js';
import type { AgentKind } from '../../sim/experiment/schema.js';
import { PROMPT_CUES, type PromptCue } from '../../sim/prompts/pack.js';

export interface AgentSpec {
  kind: AgentKind;
  /** Policy or strategy name for `policy:NAME`. */
  name?: string;
}

/** `llm`, `embedded`, `policy` or `policy:NAME` (NAME checked against the role's policies). */
export function agentSpec(role: 'honest' | 'byzantine') {
  const table = role === 'honest' ? HONEST_POLICIES : BYZANTINE_STRATEGIES;
  return (text: string): AgentSpec => {
    const [kind, name, extra] = text.trim().split(':');
    if (kind === 'llm' || kind === 'embedded') {
      if (name !== undefined) throw new InvalidArgumentError(`"${text}": only policy takes a name (policy:NAME).`);
      return { kind };
    }
    if (kind !== 'policy' || extra !== undefined)
      throw new InvalidArgumentError(`"${text}" is not llm, embedded or policy:NAME.`);
    if (name !== undefined && !(name in table))
      throw new InvalidArgumentError(
        `unknown ${role === 'honest' ? 'honest policy' : 'Byzantine strategy'} "${name}"; choose one of: ${Object.keys(table).join(', ')}.`,
      );
    return name ? { kind, name } : { kind };
  };
}

export function modelList(text: string): string[] {
  const names = text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (names.length === 0) throw new InvalidArgumentError('is empty; give a model name or a GGUF file.');
  return names;
}

export function endpointList(text: string, previous: string[] | undefined): string[] {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new InvalidArgumentError(
      `"${text}" is not a URL; give the server's base URL, e.g. http://127.0.0.1:8000/v1.`,
    );
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new InvalidArgumentError(`"${text}" must start with http:// or https://.`);
  return [...(previous ?? []), text.replace(/\/+$/, '')];
}

export function temperature(option: string) {
  return (text: string): number => {
    const t = Number(text);
    if (text.trim() === '' || !Number.isFinite(t) || t < 0 || t > 2)
      throw new InvalidArgumentError(`${option} "${text}" must be a number from 0 to 2.`);
    return t;
  };
}

/** A number checked by `ok`, or `off` (the field is not sent; commander turns a null into ''). */
export function samplingValue(option: string, ok: (n: number) => boolean, what: string) {
  return (text: string): number | 'off' => {
    if (text.trim() === 'off') return 'off';
    const n = Number(text);
    if (text.trim() === '' || !Number.isFinite(n) || !ok(n))
      throw new InvalidArgumentError(`${option} "${text}" must be ${what}, or off.`);
    return n;
  };
}

/** `rounds-left,agent-count`: cues from PROMPT_CUES, no repeats. */
export function cueList(text: string): PromptCue[] {
  const names = text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const bad = names.find((n) => !(PROMPT_CUES as readonly string[]).includes(n));
  if (bad !== undefined || names.length === 0)
    throw new InvalidArgumentError(`"${bad ?? text}" is not a prompt cue; choose from: ${PROMPT_CUES.join(', ')}.`);
  return [...new Set(names)] as PromptCue[];
}

export function positiveNumber(option: string) {
  return (text: string): number => {
    const n = Number(text);
    if (text.trim() === '' || !Number.isFinite(n) || n <= 0)
      throw new InvalidArgumentError(`${option} "${text}" must be a positive number.`);
    return n;
  };
}
