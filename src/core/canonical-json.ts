/**
 * @module
 * RFC 8785 JSON Canonicalization Scheme (JCS). The ONE canonical form that signing,
 * hashing and verification go through. Numbers use ECMAScript's Number-to-String
 * (RFC 8785 §3.2.2.3 adopts it), object keys sort by UTF-16 code units (§3.2.3),
 * strings use JSON's minimal escaping (§3.2.2.2). Values JCS cannot express — lone
 * surrogates, NaN, ±Infinity, BigInt, undefined inside arrays, non-plain objects —
 * throw `NOT_CANONICALIZABLE` instead of being silently altered.
 */
import { WitnessError } from './errors.js';

// A high surrogate not followed by a low one, or a low one not preceded by a high one.
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** The canonical JSON text of `value`. @example canonicalize({b: 1, a: [true]}) // '{"a":[true],"b":1}' */
export function canonicalize(value: unknown): string {
  return _located(
    () => _write(value, undefined),
    () => _write(value, []),
  );
}

/** The canonical form as UTF-8 bytes, what gets hashed and signed. */
export function canonicalBytes(value: unknown): Buffer {
  return Buffer.from(canonicalize(value), 'utf8');
}

/**
 * The canonical text of an object with and without one member, from one pass: what a
 * signed record needs (its digest covers the whole record, its signatures the record
 * without the signatures member). JCS sorts members, so the second text is the first
 * with one member's text left out. Equal to `canonicalize(value)` and to
 * `canonicalize` of a copy without `key`.
 * @example canonicalizeWithout({b: 1, sig: 'x'}, 'sig') // {full: '{"b":1,"sig":"x"}', without: '{"b":1}'}
 */
export function canonicalizeWithout(value: Record<string, unknown>, key: string): { full: string; without: string } {
  return _located(
    () => _forms(value, key, undefined),
    () => _forms(value, key, []),
  );
}

function _forms(
  value: Record<string, unknown>,
  key: string,
  path: _Path | undefined,
): { full: string; without: string } {
  const record = _plainRecord(value, path);
  let full = '';
  let without = '';
  for (const name of _sortedKeys(record)) {
    const item = record[name];
    if (item === undefined) continue;
    const text = _member(name, item, path);
    full += (full ? ',' : '') + text;
    if (name !== key) without += (without ? ',' : '') + text;
  }
  return { full: `{${full}}`, without: `{${without}}` };
}

// `path` is a stack of keys and indexes, turned into text only for an error message.
// The first pass runs without one (`undefined`: nothing to push and pop on every
// member); only a value that cannot be written is walked again, with the path, to
// say where.
type _Path = (string | number)[];

/** Thrown by a pass without a path: "walk again, with one". */
const _AGAIN = Symbol('canonical-json: locate the failure');

function _located<T>(fast: () => T, located: () => T): T {
  try {
    return fast();
  } catch (error) {
    if (error !== _AGAIN) throw error;
    return located(); // throws the WitnessError naming the path
  }
}

function _write(value: unknown, path: _Path | undefined): string {
  if (value === null) return 'null';
  switch (typeof value) {
    case 'boolean':
      return value ? 'true' : 'false';
    case 'number':
      if (!Number.isFinite(value)) _fail(path, `number ${value} is not finite`);
      return String(value);
    case 'string':
      return _string(value, path);
    case 'object':
      return Array.isArray(value) ? _array(value, path) : _object(value as object, path);
    default:
      return _fail(path, `${typeof value} has no JSON form`);
  }
}

// Printable ASCII without '"' and '\\': JSON escapes nothing in it, so the text is its own canonical form.
const PLAIN = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;

function _string(value: string, path: _Path | undefined): string {
  if (PLAIN.test(value)) return `"${value}"`; // ids, digests, times: most strings of a signed record
  if (LONE_SURROGATE.test(value)) _fail(path, 'string holds a lone UTF-16 surrogate');
  // JSON.stringify's escaping is exactly RFC 8785's once lone surrogates are excluded.
  return JSON.stringify(value);
}

function _array(value: readonly unknown[], path: _Path | undefined): string {
  let out = '[';
  for (let i = 0; i < value.length; i++) {
    path?.push(i);
    if (value[i] === undefined) _fail(path, 'undefined has no JSON form');
    out += (i ? ',' : '') + _write(value[i], path);
    path?.pop();
  }
  return `${out}]`;
}

function _object(value: object, path: _Path | undefined): string {
  const record = _plainRecord(value, path);
  let out = '{';
  // Undefined members are absent, as in JSON.stringify: parsed JSON never holds them.
  for (const key of _sortedKeys(record)) {
    const item = record[key];
    if (item === undefined) continue;
    out += (out.length > 1 ? ',' : '') + _member(key, item, path);
  }
  return `${out}}`;
}

/** `"key":value`, with `key` on the path while the value is written (for error messages). */
function _member(key: string, item: unknown, path: _Path | undefined): string {
  path?.push(key);
  const text = `${_string(key, path)}:${_write(item, path)}`;
  path?.pop();
  return text;
}

/**
 * Own keys in UTF-16 code-unit order (RFC 8785 §3.2.3; `<` on strings compares code
 * units). An insertion sort: records have a few dozen keys at most, where it beats
 * `Array.prototype.sort` by a third.
 */
function _sortedKeys(record: Record<string, unknown>): string[] {
  const keys = Object.keys(record);
  if (keys.length > 32) return keys.sort();
  for (let i = 1; i < keys.length; i++) {
    const key = keys[i] as string;
    let j = i - 1;
    while (j >= 0 && (keys[j] as string) > key) {
      keys[j + 1] = keys[j] as string;
      j--;
    }
    keys[j + 1] = key;
  }
  return keys;
}

function _plainRecord(value: object, path: _Path | undefined): Record<string, unknown> {
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) {
    _fail(path, `a ${value.constructor?.name ?? 'non-plain'} object has no canonical JSON form`);
  }
  return value as Record<string, unknown>;
}

function _fail(path: _Path | undefined, reason: string): never {
  if (path === undefined) throw _AGAIN;
  const where = `$${path.map((p) => (typeof p === 'number' ? `[${p}]` : `.${p}`)).join('')}`;
  throw new WitnessError('NOT_CANONICALIZABLE', `Cannot canonicalize ${where}: ${reason}.`, { data: { path: where } });
}
