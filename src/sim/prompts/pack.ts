/**
 * @module
 * Prompt packs (consensus.md §3): a folder of plain-text templates and JSON schemas
 * that say what the LLM agents are told, so wording can change without code.
 * Loading checks everything up front — every template and schema present for both
 * roles and both awareness variants, every `{{variable}}` known — so a typo fails
 * before the first request, naming the file. docs/prompts.md documents the format.
 * The stages follow the reference (bcg_agents.py): a system and a user message for
 * the proposal, another pair for the vote, and the notices a retry adds.
 */
import { existsSync, readFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { WitnessError } from '../../core/errors.js';
import { sha256Hex } from '../../core/hash.js';
import type { Awareness, Role } from '../types.js';

/** Template stages: the proposal's system and user messages, the vote's, and the notices retries append. */
export const STAGES = ['system', 'decide', 'vote-system', 'vote', 'decide-retry', 'vote-retry'] as const;
export type Stage = (typeof STAGES)[number];

/** Variables a template may use; docs/prompts.md explains each. */
export const TEMPLATE_VARIABLES = [
  'id',
  'role',
  'round',
  'max_rounds',
  'rounds_left',
  'total',
  'total_minus_one',
  'stop_needed',
  'lo',
  'hi',
  'initial_value',
  'current_value',
  'current_state',
  'history',
  'summary',
  'notes',
  'proposals',
  'cues',
  'attempt',
  'tries',
] as const;
export type TemplateVariable = (typeof TEMPLATE_VARIABLES)[number];

/** Extra cues our prompts can give that the reference's do not (off by default; `--prompt-cue`). */
export const PROMPT_CUES = ['rounds-left', 'agent-count'] as const;
export type PromptCue = (typeof PROMPT_CUES)[number];

const SamplingSchema = z.strictObject({
  temperature: z.number().min(0).max(2),
  maxTokens: z.number().int().min(1),
  /** Sent on every request (ref: vLLM's SamplingParams default, 1); null sends none. */
  topP: z.number().gt(0).max(1).nullable().default(1),
  /** Sent on every request (ref: no limit, -1); null sends none (servers that refuse the field). */
  topK: z.number().int().min(-1).nullable().default(-1),
});

export const PackManifestSchema = z.strictObject({
  name: z.string().min(1),
  version: z.number().int().optional(),
  description: z.string().optional(),
  limits: z
    .strictObject({
      historyRounds: z.number().int().min(0).default(3),
      historyReasoning: z.number().int().min(3).default(50),
      noteRounds: z.number().int().min(0).default(5),
      noteChars: z.number().int().min(0).default(400),
      proposalReasoning: z.number().int().min(0).default(200),
    })
    .prefault({}),
  empty: z
    .strictObject({ history: z.string(), summary: z.string(), notes: z.string(), proposals: z.string() })
    .partial()
    .prefault({}),
  /** Short texts the renderer puts together; each may use the template variables. */
  phrases: z
    .strictObject({
      currentValue: z.string().default('Your value at the moment: {{current_value}}'),
      noValueYet: z.string().default('You have not put forward a value so far.'),
      noReasoning: z.string().default('(none given)'),
      defaultReasoning: z.string().default('Moving my proposal.'),
    })
    .prefault({}),
  cues: z
    .strictObject({
      'rounds-left': z.string().default('{{rounds_left}} rounds remain after this one.'),
      'agent-count': z.string().default('There are {{total}} agents; {{stop_needed}} stop votes end the game.'),
    })
    .prefault({}),
  sampling: z
    .strictObject({ decide: SamplingSchema, vote: SamplingSchema })
    .prefault({ decide: { temperature: 0.5, maxTokens: 300 }, vote: { temperature: 0.3, maxTokens: 200 } }),
  /** When the confidence rule decides (consensus.md §8): the line added to the proposal question, and the field's schema. */
  confidence: z.strictObject({ instruction: z.string(), schema: z.record(z.string(), z.unknown()) }).prefault({
    instruction:
      'Also give "confidence": how sure you are, from 0 (a guess) to 1 (certain), that your value is the one the group should settle on.',
    schema: { type: 'number', minimum: 0, maximum: 1 },
  }),
});
export type PackManifest = z.output<typeof PackManifestSchema>;

export interface PromptPack {
  readonly manifest: PackManifest;
  readonly dir: string;
  /** SHA-256 over every file of the pack: changes whenever any wording changes. */
  readonly hash: string;
  template(stage: Stage, role: Role, awareness: Awareness): string;
  /** The schema text with `"{{lo}}"`/`"{{hi}}"` placeholders still in it. */
  schema(stage: 'decide' | 'vote', role: Role, awareness: Awareness): string;
}

/** The folder of the pack that ships with Witness (`prompts/default` at the package root). */
export const DEFAULT_PACK_DIR = fileURLToPath(new URL('../../../prompts/default/', import.meta.url));

const ROLES: readonly Role[] = ['honest', 'byzantine'];
const AWARENESS: readonly Awareness[] = ['may_exist', 'none_exist'];
const VARIABLE = /\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}/g;

/** Loads and checks a pack; the default pack when `dir` is omitted. */
export function loadPromptPack(dir: string = DEFAULT_PACK_DIR): PromptPack {
  const root = resolve(dir);
  if (!existsSync(join(root, 'pack.json'))) {
    throw new WitnessError(
      'NOT_FOUND',
      `${root} is not a prompt pack: it has no pack.json. See docs/prompts.md, or copy prompts/default as a start.`,
    );
  }
  const manifest = _manifest(join(root, 'pack.json'));
  const files = new Map<string, string>();
  const read = (name: string) => {
    if (!files.has(name)) files.set(name, readFileSync(join(root, name), 'utf8'));
    return files.get(name)!;
  };
  const find = (folder: string, stage: string, role: Role, awareness: Awareness, ext: string): string => {
    const candidates = [`${stage}.${role}.${awareness}.${ext}`, `${stage}.${role}.${ext}`, `${stage}.${ext}`].map(
      (f) => (folder ? `${folder}/${f}` : f),
    );
    const found = candidates.find((f) => existsSync(join(root, f)));
    if (!found)
      throw new WitnessError(
        'INVALID_INPUT',
        `Prompt pack ${root} has no ${stage} ${folder ? 'schema' : 'template'} for ${role} agents (${awareness}); add one of: ${candidates.join(', ')}.`,
      );
    return found;
  };
  const table = new Map<string, string>();
  for (const role of ROLES)
    for (const awareness of AWARENESS) {
      for (const stage of STAGES) {
        const name = find('', stage, role, awareness, 'txt');
        _checkVariables(read(name), join(root, name));
        table.set(`t:${stage}:${role}:${awareness}`, read(name));
      }
      for (const stage of ['decide', 'vote'] as const) {
        const name = find('schemas', stage, role, awareness, 'json');
        _checkSchema(read(name), join(root, name));
        table.set(`s:${stage}:${role}:${awareness}`, read(name));
      }
    }
  for (const [name, text] of [...Object.entries(manifest.phrases), ...Object.entries(manifest.cues)])
    _checkVariables(text, `${join(root, 'pack.json')} (${name})`);
  const all: [string, string][] = [...files.entries(), ['pack.json', readFileSync(join(root, 'pack.json'), 'utf8')]];
  const hash = sha256Hex(
    all
      .sort((a, b) => (a[0] < b[0] ? -1 : 1))
      .map(([n, t]) => `${n}\0${t}`)
      .join('\0'),
  );
  // A copy of the built-in pack that was edited but kept `"name": "default"` would be
  // recorded in results as the default pack: it takes its folder's name instead.
  const renamed = manifest.name === 'default' && root !== resolve(DEFAULT_PACK_DIR) && hash !== loadPromptPack().hash;
  return {
    manifest: renamed ? { ...manifest, name: basename(root) } : manifest,
    dir: root,
    hash,
    template: (stage, role, awareness) => table.get(`t:${stage}:${role}:${awareness}`)!,
    schema: (stage, role, awareness) => table.get(`s:${stage}:${role}:${awareness}`)!,
  };
}

function _manifest(path: string): PackManifest {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new WitnessError('INVALID_INPUT', `${path} is not valid JSON: ${(error as Error).message}.`);
  }
  const result = PackManifestSchema.safeParse(raw);
  if (!result.success) {
    const issues = result.error.issues.map((i) => `${[...i.path].join('.') || '(top level)'}: ${i.message}`).join('; ');
    throw new WitnessError('INVALID_INPUT', `${path} is not a valid pack manifest: ${issues}.`);
  }
  return result.data;
}

function _checkVariables(text: string, path: string): void {
  for (const match of text.matchAll(VARIABLE)) {
    if (!(TEMPLATE_VARIABLES as readonly string[]).includes(match[1]!)) {
      throw new WitnessError(
        'INVALID_INPUT',
        `${path} uses an unknown variable {{${match[1]}}}; known: ${TEMPLATE_VARIABLES.join(', ')}.`,
      );
    }
  }
}

function _checkSchema(text: string, path: string): void {
  try {
    const parsed: unknown = JSON.parse(text.replaceAll('"{{lo}}"', '0').replaceAll('"{{hi}}"', '1'));
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
      throw new Error('a schema must be a JSON object');
  } catch (error) {
    throw new WitnessError('INVALID_INPUT', `${path} is not a valid JSON schema file: ${(error as Error).message}.`);
  }
}
