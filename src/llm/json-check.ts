/**
 * @module
 * A small JSON Schema checker for model answers: the keywords structured-output
 * schemas use (type, enum, const, minimum, maximum, minLength, maxLength, required,
 * properties, additionalProperties, anyOf, oneOf, items). A model whose server
 * ignored the schema is caught here, and its answer counts as invalid (retried).
 */
import type { JsonSchema } from './types.js';

/** The first violation of `schema` by `value`, as `path: problem`, or undefined. */
export function checkJson(value: unknown, schema: JsonSchema, path = '$'): string | undefined {
  if ('const' in schema && value !== schema.const) return `${path}: must be ${JSON.stringify(schema.const)}`;
  if (Array.isArray(schema.enum) && !schema.enum.includes(value as never))
    return `${path}: must be one of ${JSON.stringify(schema.enum)}`;
  for (const key of ['anyOf', 'oneOf'] as const) {
    const options = schema[key];
    if (Array.isArray(options) && !options.some((s) => checkJson(value, s as JsonSchema, path) === undefined))
      return `${path}: matches none of the allowed forms`;
  }
  const type = schema.type;
  if (type !== undefined) {
    const types = Array.isArray(type) ? type : [type];
    if (!types.some((t) => _isType(value, String(t)))) return `${path}: must be ${types.join(' or ')}`;
  }
  if (typeof value === 'number') return _checkNumber(value, schema, path);
  if (typeof value === 'string') return _checkString(value, schema, path);
  if (Array.isArray(value)) return _checkArray(value, schema, path);
  if (typeof value === 'object' && value !== null) return _checkObject(value as Record<string, unknown>, schema, path);
  return undefined;
}

function _isType(value: unknown, type: string): boolean {
  switch (type) {
    case 'integer':
      return typeof value === 'number' && Number.isInteger(value);
    case 'number':
      return typeof value === 'number' && Number.isFinite(value);
    case 'string':
      return typeof value === 'string';
    case 'boolean':
      return typeof value === 'boolean';
    case 'null':
      return value === null;
    case 'array':
      return Array.isArray(value);
    case 'object':
      return typeof value === 'object' && value !== null && !Array.isArray(value);
    default:
      return false;
  }
}

function _checkNumber(value: number, schema: JsonSchema, path: string): string | undefined {
  if (typeof schema.minimum === 'number' && value < schema.minimum) return `${path}: must be ≥ ${schema.minimum}`;
  if (typeof schema.maximum === 'number' && value > schema.maximum) return `${path}: must be ≤ ${schema.maximum}`;
  return undefined;
}

function _checkString(value: string, schema: JsonSchema, path: string): string | undefined {
  if (typeof schema.minLength !== 'number' && typeof schema.maxLength !== 'number') return undefined;
  // JSON Schema counts code points, not UTF-16 units: an emoji is one character.
  const length = [...value].length;
  if (typeof schema.minLength === 'number' && length < schema.minLength)
    return `${path}: must have at least ${schema.minLength} characters`;
  if (typeof schema.maxLength === 'number' && length > schema.maxLength)
    return `${path}: must have at most ${schema.maxLength} characters`;
  return undefined;
}

function _checkArray(value: unknown[], schema: JsonSchema, path: string): string | undefined {
  const items = schema.items;
  if (typeof items !== 'object' || items === null) return undefined;
  for (let i = 0; i < value.length; i++) {
    const problem = checkJson(value[i], items as JsonSchema, `${path}[${i}]`);
    if (problem) return problem;
  }
  return undefined;
}

function _checkObject(value: Record<string, unknown>, schema: JsonSchema, path: string): string | undefined {
  const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
  for (const name of (schema.required ?? []) as string[]) {
    if (!(name in value)) return `${path}.${name}: is required`;
  }
  for (const [name, field] of Object.entries(value)) {
    const sub = properties[name];
    if (sub) {
      const problem = checkJson(field, sub, `${path}.${name}`);
      if (problem) return problem;
    } else if (schema.additionalProperties === false) {
      return `${path}.${name}: is not allowed`;
    }
  }
  return undefined;
}
