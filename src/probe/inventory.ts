/**
 * @module
 * The preflight's shadowing check: the runtime's own tools — asked of
 * the runtime where it can list them without a model, else witness's table of
 * known built-ins per version — compared by normalised name with the mailbox's
 * tools as served. The report says which source was used and names every
 * built-in that shadows a mailbox tool, and the mailbox tool it shadows.
 */
import { TOOL_NAMES } from '../mailbox/index.js';
import { knownBuiltins } from './known-builtins.js';
import { type Clash, findClashes } from './shadowing.js';
import type { CheckName, Preflight, ProbeContext, RuntimeAdapter, Shadowing } from './types.js';

/** The mailbox's tools under the names the agent is told to call. */
export function servedTools(toolPrefix: string): string[] {
  return TOOL_NAMES.map((t) => `${toolPrefix}${t}`);
}

/** Asks the runtime when `ask` is set (it was found); otherwise, or when asking fails, falls back to the table and says why. */
export async function takeInventory(
  adapter: RuntimeAdapter,
  ctx: ProbeContext,
  runtime: Preflight['runtime'],
  ask: boolean,
): Promise<Shadowing> {
  let why = ask
    ? `${adapter.title} has no way to list its tools without a model`
    : 'the runtime was not found, so it could not be asked';
  if (ask && adapter.listTools) {
    try {
      const listing = await adapter.listTools(ctx);
      return _shadowing(ctx, {
        source: 'runtime',
        detail: listing.how,
        builtins: listing.builtins,
        ...(listing.mailbox ? { mailbox_tools: listing.mailbox } : {}),
      });
    } catch (error) {
      why = `${adapter.title} could not list its tools: ${(error as Error).message}`;
    }
  }
  const known = knownBuiltins(adapter.name, runtime.version);
  if (!known)
    return _shadowing(ctx, {
      source: 'none',
      detail: `${why}, and witness knows no built-ins of ${adapter.title}: shadowing was not checked`,
      builtins: [],
    });
  const { row, exact } = known;
  const version = exact
    ? `${adapter.title} ${runtime.version} (known for ≥ ${row.since})`
    : `${adapter.title} ≥ ${row.since}, the newest known (version ${runtime.version ?? 'unknown'})`;
  return _shadowing(ctx, {
    source: 'known',
    detail: `${why}; known built-ins of ${version}, from ${row.source}`,
    builtins: [...row.tools],
  });
}

function _shadowing(ctx: ProbeContext, found: Omit<Shadowing, 'clashes'>): Shadowing {
  return { ...found, clashes: findClashes(found.builtins, servedTools(ctx.toolPrefix), ctx) };
}

/** One warning for built-ins with the very name the agent is told to call, one for other spellings. */
export function shadowWarnings(title: string, shadowing: Shadowing, toolPrefix: string): string[] {
  const same = shadowing.clashes.filter((c) => c.same_name);
  const other = shadowing.clashes.filter((c) => !c.same_name);
  const warnings: string[] = [];
  if (same.length > 0) {
    const fix =
      toolPrefix === ''
        ? "Re-run with --tool-prefix mailbox_; in your own setup, keep the default prefix of 'witness mailbox install' (mailbox_)."
        : 'Serve the mailbox under another --tool-prefix.';
    warnings.push(
      `${title} has built-in tools named ${_names(same, false)}: with these tool names the model may call them instead of the mailbox's, and they report success without delivering anything. ${fix}`,
    );
  }
  if (other.length > 0) {
    warnings.push(
      `${title} has built-in tools that name a mailbox action in another spelling: ${_names(other, true)}. A prefix separates the names, not the meaning: a model may still call the built-in, which reports success without delivering anything; the verdicts come from the records either way.`,
    );
  }
  return warnings;
}

/** Which actions each check asks for: a clash on one of them is named in that check's reason. */
const CHECK_ACTIONS: Record<CheckName, readonly string[]> = {
  send: ['send', 'list-agents'],
  receive: ['read-inbox', 'wait'],
  control: ['read-inbox', 'wait'],
};

/** The note a check that did not pass gets when a built-in shadows a tool it asked for; empty when none does. */
export function shadowNote(check: CheckName, shadowing: Shadowing): string {
  const relevant = shadowing.clashes.filter((c) => CHECK_ACTIONS[check].includes(c.action));
  if (relevant.length === 0) return '';
  const from =
    shadowing.source === 'runtime' ? "in the runtime's own tool list" : "in witness's table of known built-ins";
  return `; note: built-in ${_names(relevant, true)} ${relevant.length === 1 ? 'shadows a mailbox tool' : 'shadow mailbox tools'} (${from}; see warnings)`;
}

function _names(clashes: Clash[], withTarget: boolean): string {
  return clashes.map((c) => (withTarget ? `${c.tool} (≈ ${c.shadows})` : c.tool)).join(', ');
}
