/**
 * @module
 * Filling a prompt pack's templates: every `{{name}}` replaced by its value, and a line
 * that holds nothing but a variable whose value is empty left out (so `{{cues}}` costs
 * no blank line when no cue is on). A template is split at its variables once and kept:
 * every LLM call fills four templates, and scanning them with regular expressions each
 * time was a tenth of the engine's CPU per call (bench/llm.ts).
 */
import type { TemplateVariable } from './pack.js';

const VARIABLE = /\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}/g;
const LONE_VARIABLE = /^[ \t]*\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}[ \t]*(?:\r?\n|$)/gm;

/** Packs hold a few dozen templates; past this many (a library caller's own), the kept splits start over. */
const MAX_KEPT = 256;
/** Lone lines per template the split follows (one bit each); a template with more is filled by scanning. */
const MAX_LONE = 30;

type Variables = Readonly<Record<TemplateVariable, string>>;

/** A template's lone-variable lines, and its text split at the variables for each set of lines left out. */
interface _Split {
  lone: { start: number; end: number; name: string }[];
  /** By which lone lines are kept (bit i: line i): the texts between variables, and the variables. */
  parts: Map<number, { texts: string[]; names: string[] }>;
}

const _splits = new Map<string, _Split>();

/**
 * Replaces every `{{name}}`; the loader has already refused unknown names. A line that
 * holds nothing but a variable whose value is empty is left out. The same text as
 * removing those lines with LONE_VARIABLE, then replacing with VARIABLE, in one pass each.
 */
export function fillTemplate(template: string, variables: Variables): string {
  const split = _splitOf(template);
  if (!split) return _fillByScanning(template, variables);
  let kept = 0;
  for (let i = 0; i < split.lone.length; i++) if (variables[split.lone[i]!.name as TemplateVariable]) kept |= 1 << i;
  const { texts, names } = split.parts.get(kept) ?? _splitAt(split, template, kept);
  let out = texts[0]!;
  for (let i = 0; i < names.length; i++) out += `${variables[names[i] as TemplateVariable] ?? ''}${texts[i + 1]}`;
  return out;
}

function _fillByScanning(template: string, variables: Variables): string {
  return template
    .replace(LONE_VARIABLE, (line, name: string) => (variables[name as TemplateVariable] ? line : ''))
    .replace(VARIABLE, (_, name: string) => variables[name as TemplateVariable] ?? '');
}

function _splitOf(template: string): _Split | undefined {
  let split = _splits.get(template);
  if (split) return split;
  const lone = Array.from(template.matchAll(LONE_VARIABLE), (m) => ({
    start: m.index,
    end: m.index + m[0].length,
    name: m[1]!,
  }));
  if (lone.length > MAX_LONE) return undefined;
  if (_splits.size >= MAX_KEPT) _splits.clear();
  split = { lone, parts: new Map() };
  _splits.set(template, split);
  return split;
}

/** The template without the lone lines not `kept`, split at its variables (as the second replace finds them). */
function _splitAt(split: _Split, template: string, kept: number): { texts: string[]; names: string[] } {
  let text = '';
  let from = 0;
  split.lone.forEach((line, i) => {
    if (kept & (1 << i)) return;
    text += template.slice(from, line.start);
    from = line.end;
  });
  text += template.slice(from);
  const texts: string[] = [];
  const names: string[] = [];
  let at = 0;
  for (const m of text.matchAll(VARIABLE)) {
    texts.push(text.slice(at, m.index));
    names.push(m[1]!);
    at = m.index + m[0].length;
  }
  texts.push(text.slice(at));
  const parts = { texts, names };
  split.parts.set(kept, parts);
  return parts;
}
