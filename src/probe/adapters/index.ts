/**
 * @module
 * Every runtime `witness probe` knows, by name.
 */
import { WitnessError } from '../../core/errors.js';
import { BUILTIN_AGENTS, type BuiltinAgent } from '../agents/index.js';
import type { RuntimeAdapter } from '../types.js';
import { builtinAdapter } from './builtin.js';
import { claude } from './claude.js';
import { codex } from './codex.js';
import { command } from './command.js';
import { gemini } from './gemini.js';
import { opencode } from './opencode.js';
import { openhands } from './openhands.js';
import { qwen } from './qwen.js';

export const RUNTIME_ADAPTERS = ['opencode', 'qwen', 'openhands', 'claude', 'codex', 'gemini', 'command'] as const;
export const PROBE_TARGETS: readonly string[] = [...RUNTIME_ADAPTERS, ...BUILTIN_AGENTS];

export function adapterFor(name: string): RuntimeAdapter {
  const found = { opencode, qwen, openhands, claude, codex, gemini, command }[
    name as (typeof RUNTIME_ADAPTERS)[number]
  ];
  if (found) return found;
  if ((BUILTIN_AGENTS as readonly string[]).includes(name)) return builtinAdapter(name as BuiltinAgent);
  throw new WitnessError(
    'USAGE',
    `Unknown runtime ${JSON.stringify(name)}. Choose one of: ${PROBE_TARGETS.join(', ')}.`,
  );
}
