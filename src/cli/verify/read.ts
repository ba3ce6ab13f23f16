/**
 * @module
 * Reading what `witness verify` was given, once, and deciding what it is: a folder is
 * recognised by its manifest (mailbox.json), a file by the type it declares in its
 * parsed JSON — the whole document, or the first line of a JSONL file — and a file
 * written before types were declared by its exact shape. Then the options given are
 * checked against the kind: one that does not apply is a usage error naming it.
 */
import { closeSync, existsSync, openSync, readSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { readNamedFile, statNamedFile } from '../../attest/files.js';
import { parseJsonText } from '../../attest/index.js';
import { WitnessError } from '../../core/errors.js';
import { pickProblem } from '../../core/problem.js';
import { parseStrictJson } from '../../core/strict-json.js';
import { ARTIFACT_KINDS } from './kinds.js';
import { type Artifact, type ArtifactKind, OPTION_FLAGS, type OptionName, type Outcome } from './types.js';

/** Larger files are read as JSONL, by their first line (see _large). */
const WHOLE_DOCUMENT_BYTES = 256 * 1024 * 1024;
/** The most of a JSONL artifact's first line read to learn its type (a results line is a few KB). */
const FIRST_LINE_BYTES = 16 * 1024 * 1024;

/** A kind found, with the type the artifact declares (for a legacy artifact, the type its kind declares now), or the outcome of an artifact that is none. */
export type Recognised =
  | { kind: ArtifactKind; type: string; legacy: boolean; artifact: Artifact }
  | { outcome: Outcome; artifact?: Artifact };

/** Reads `path` and finds its kind; evidence that cannot be read as JSON, or declares no known type, is an invalid outcome (exit 1). */
export function recognise(path: string, name: string, kinds: readonly ArtifactKind[] = ARTIFACT_KINDS): Recognised {
  if (_isFolder(path)) return _folder(path, name, kinds);
  const size = statNamedFile(path, 'evidence file').size;
  if (size > WHOLE_DOCUMENT_BYTES) return _large(path, name, size, kinds);
  const text = readNamedFile(path, 'evidence file').toString('utf8');
  const whole = parseJsonText(text, name);
  if (!whole.ok) {
    // Not one JSON document: a JSONL artifact declares its type on its first line.
    const first = _firstLine(text);
    if (first !== undefined && kinds.some((k) => k.form === 'jsonl'))
      return _match({ path, name, form: 'jsonl', value: first }, kinds);
    return {
      outcome: {
        ok: false,
        summary: 'invalid:',
        problems: whole.reasons.map(pickProblem),
        details: {},
      },
    };
  }
  return _match({ path, name, form: 'json', value: whole.value }, kinds);
}

/** Refuses an option given that the kind does not use, and names the ones it needs and lacks (USAGE, exit 2). */
export function checkOptions(kind: ArtifactKind, given: (name: OptionName) => boolean): void {
  const names = Object.keys(OPTION_FLAGS) as OptionName[];
  const refused = names.filter((n) => given(n) && !kind.uses.includes(n));
  if (refused.length > 0) {
    const why = [...new Set(refused.map((n) => kind.why?.[n]).filter(Boolean))].join('; ');
    const uses = [...kind.uses.map((n) => OPTION_FLAGS[n]), '--json'];
    const one = refused.length === 1;
    throw new WitnessError(
      'USAGE',
      `${_list(refused.map((n) => OPTION_FLAGS[n]))} ${one ? 'does' : 'do'} not apply to ${kind.what}${why ? ` (${why})` : ''}; drop ${one ? 'it' : 'them'}. Only ${_list(uses)} do.`,
    );
  }
  const missing = (kind.requires ?? []).filter((n) => !given(n));
  if (missing.length > 0)
    throw new WitnessError(
      'USAGE',
      `witness verify needs ${_list(missing.map((n) => `${OPTION_FLAGS[n]} <file>`))} for ${kind.what}.`,
    );
}

function _match(artifact: Artifact, kinds: readonly ArtifactKind[]): Recognised {
  const declared = kinds.filter((k) => k.form === artifact.form && _declares(artifact.value, k));
  const [kind] = declared;
  if (kind && declared.length === 1)
    return { kind, type: _declared(artifact.value, kind) as string, legacy: false, artifact };
  const legacy =
    declared.length === 0 ? kinds.filter((k) => k.form === artifact.form && k.legacy?.(artifact.value)) : [];
  const [old] = legacy;
  if (old && legacy.length === 1) return { kind: old, type: old.declared.values[0] as string, legacy: true, artifact };
  if (declared.length === 0) _refusePartOfFolder(artifact, kinds);
  const known = kinds
    .filter((k) => k.form === artifact.form)
    .map((k) => `${k.what} (${k.declared.field}: ${k.declared.values.map((v) => JSON.stringify(v)).join(' or ')})`);
  const message =
    declared.length > 1
      ? `${artifact.name} declares the types of more than one kind of artifact; it must be one.`
      : `${artifact.name} is not a Witness artifact: it declares none of the types this verifier knows — ${known.join('; ')}.`;
  return {
    outcome: { ok: false, summary: 'invalid:', problems: [{ code: 'MALFORMED', message }], details: {} },
    artifact,
  };
}

/**
 * A file of an evidence folder given alone (`witness verify mb/calls.jsonl`): its
 * records are checked against the folder's other files, never by themselves, so the
 * answer is the command to run, not a verdict on the file (USAGE, exit 2).
 */
function _refusePartOfFolder(artifact: Artifact, kinds: readonly ArtifactKind[]): void {
  let [path, name] = [artifact.path, artifact.name];
  // A mailbox's files sit at most one folder down (inbox/NAME.jsonl).
  for (let up = 0; up < 2; up++) {
    [path, name] = [dirname(path), dirname(name)];
    for (const kind of kinds.filter((k) => k.form === 'dir' && k.manifest)) {
      const manifest = join(path, kind.manifest as string);
      if (!existsSync(manifest) || !_declaresInFile(manifest, kind)) continue;
      throw new WitnessError(
        'USAGE',
        `${artifact.name} is one of the files of ${kind.what} (${name}), whose files are checked together, not one by one. Verify the folder: witness verify ${name}`,
      );
    }
  }
}

function _declaresInFile(manifest: string, kind: ArtifactKind): boolean {
  try {
    return _declares(parseStrictJson(readNamedFile(manifest, 'manifest').toString('utf8'), { what: manifest }), kind);
  } catch {
    return false;
  }
}

function _declares(value: unknown, kind: ArtifactKind): boolean {
  return _declared(value, kind) !== undefined;
}

/** The type `value` declares in the kind's field, if it is one of the kind's. */
function _declared(value: unknown, kind: ArtifactKind): string | undefined {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
  // `receipt.type`: a signed results line declares its type in its receipt.
  const declared = kind.declared.field
    .split('.')
    .reduce<unknown>(
      (v, key) => (v !== null && typeof v === 'object' ? (v as Record<string, unknown>)[key] : undefined),
      value,
    );
  return typeof declared === 'string' && kind.declared.values.includes(declared) ? declared : undefined;
}

function _folder(path: string, name: string, kinds: readonly ArtifactKind[]): Recognised {
  for (const kind of kinds.filter((k) => k.form === 'dir' && k.manifest)) {
    const manifest = join(path, kind.manifest as string);
    if (!existsSync(manifest)) continue;
    let value: unknown;
    try {
      value = parseStrictJson(readNamedFile(manifest, 'manifest').toString('utf8'), { what: manifest });
    } catch (error) {
      return {
        outcome: {
          ok: false,
          summary: 'invalid:',
          problems: [{ code: 'CORRUPT', message: (error as Error).message, at: kind.manifest as string }],
          details: {},
        },
      };
    }
    const type = _declared(value, kind);
    if (type !== undefined) return { kind, type, legacy: false, artifact: { path, name, form: 'dir', value } };
  }
  const manifests = kinds.filter((k) => k.form === 'dir').map((k) => `${k.what} (${k.manifest})`);
  throw new WitnessError(
    'USAGE',
    `The evidence ${name} is a folder, but not one this verifier knows (${manifests.join(', ')}); give an evidence file or such a folder.`,
  );
}

/**
 * A file too large to be one JSON document read whole (a V8 string holds ~512 MB): a
 * JSONL artifact, known by its first line — a 2-million-run results file is ~2.5 GB,
 * and its verifier reads it as a stream.
 */
function _large(path: string, name: string, size: number, kinds: readonly ArtifactKind[]): Recognised {
  const first = _firstLine(_firstLineText(path, FIRST_LINE_BYTES));
  if (first !== undefined && kinds.some((k) => k.form === 'jsonl'))
    return _match({ path, name, form: 'jsonl', value: first }, kinds);
  const message = `${name} is ${size} bytes, more than a JSON evidence document may be (${WHOLE_DOCUMENT_BYTES} bytes), and its first line is not a JSON object: it is no JSONL artifact either (each declares its type on its first line).`;
  return { outcome: { ok: false, summary: 'invalid:', problems: [{ code: 'MALFORMED', message }], details: {} } };
}

/** The file's start up to and including its first newline, read `limit` bytes at most (a file without one gives no line). */
function _firstLineText(path: string, limit: number): string {
  const fd = openSync(path, 'r');
  try {
    const buffer = Buffer.alloc(limit);
    let filled = 0;
    for (let n = -1; n !== 0 && filled < limit; filled += n) {
      n = readSync(fd, buffer, filled, Math.min(1 << 20, limit - filled), null);
      const nl = buffer.subarray(filled, filled + n).indexOf(0x0a);
      if (nl >= 0) return buffer.toString('utf8', 0, filled + nl + 1);
    }
    return '';
  } finally {
    closeSync(fd);
  }
}

function _isFolder(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false; // missing or unreadable: readNamedFile says which, naming the role
  }
}

/** The first line's JSON object, if the text has more than one line and the first is one. */
function _firstLine(text: string): unknown {
  const end = text.indexOf('\n');
  if (end < 0) return undefined;
  try {
    const value = parseStrictJson(text.slice(0, end));
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

function _list(items: readonly string[]): string {
  return items.length <= 1 ? (items[0] ?? '') : `${items.slice(0, -1).join(', ')} and ${items.at(-1)}`;
}
