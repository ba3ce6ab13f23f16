/**
 * @module
 * A fast structural check compiled from a JSON Schema — the one the zod schema
 * generates (`z.toJSONSchema`), so the shape exists once, as the schema. A path
 * verifier checks every receipt on every path, and zod's generality cost more there
 * than the rest of the checks; the compiled check is plain closures. It says yes only
 * to values the schema accepts, and the caller asks zod when it says no (for the
 * message). The subset compiled is what the receipt schema uses; any other keyword
 * throws at compile time, so a schema change cannot make the check silently weaker.
 * String lengths count UTF-16 code units and patterns run without the `u` flag, as
 * zod does.
 */

type Check = (value: unknown) => boolean;
type Schema = Record<string, unknown>;

const KNOWN = new Set([
  'type',
  'const',
  'enum',
  'pattern',
  'minLength',
  'maxLength',
  'minimum',
  'maximum',
  'anyOf',
  'items',
  'minItems',
  'maxItems',
  'properties',
  'required',
  'additionalProperties',
  'description',
  '$schema',
  'title',
]);

/** The check of `schema`: true only for values it accepts. */
export function compileShape(schema: Schema): Check {
  for (const key of Object.keys(schema))
    if (!KNOWN.has(key))
      throw new Error(
        `compileShape: keyword ${key} is not supported; extend the compiler or keep the schema to its subset.`,
      );
  const checks: Check[] = [];
  if (schema.anyOf !== undefined) {
    const options = (schema.anyOf as Schema[]).map(compileShape);
    checks.push((v) => options.some((c) => c(v)));
  }
  if (schema.const !== undefined) {
    if (schema.type !== undefined && !_constFits(schema.const, schema.type as string))
      throw new Error(`compileShape: const ${JSON.stringify(schema.const)} is not of type ${schema.type}.`);
    checks.push((v) => v === schema.const);
  }
  if (schema.enum !== undefined) {
    const allowed = new Set(schema.enum as unknown[]);
    checks.push((v) => allowed.has(v));
  }
  // A const, or an enum of values of the declared type, with no other constraint already implies the type.
  const onlyValues = Object.keys(schema).every(
    (k) => k === 'type' || k === 'const' || k === 'enum' || k === 'description' || k === 'title',
  );
  const fixed =
    onlyValues &&
    (schema.const !== undefined ||
      (schema.enum !== undefined && (schema.enum as unknown[]).every((e) => _hasType(e, schema.type))));
  if (schema.type !== undefined && !fixed) checks.push(..._typed(schema.type as string, schema));
  if (checks.length === 1) return checks[0] as Check;
  return (v) => {
    for (const c of checks) if (!c(v)) return false;
    return true;
  };
}

function _constFits(value: unknown, type: string): boolean {
  return type === 'integer'
    ? Number.isSafeInteger(value)
    : type === 'number'
      ? typeof value === 'number' && Number.isFinite(value)
      : _hasType(value, type);
}

function _hasType(value: unknown, type: unknown): boolean {
  return type === 'string' ? typeof value === 'string' : type === 'null' ? value === null : false;
}

function _typed(type: string, schema: Schema): Check[] {
  switch (type) {
    case 'null':
      return [(v) => v === null];
    case 'number':
    case 'integer':
      return [_number(type === 'integer', schema.minimum as number | undefined, schema.maximum as number | undefined)];
    case 'string':
      return [_string(schema)];
    case 'array':
      return [_array(schema)];
    case 'object':
      return [_object(schema)];
    default:
      throw new Error(`compileShape: type ${type} is not supported.`);
  }
}

function _number(integer: boolean, min = Number.NEGATIVE_INFINITY, max = Number.POSITIVE_INFINITY): Check {
  return (v) =>
    typeof v === 'number' && (integer ? Number.isSafeInteger(v) : Number.isFinite(v)) && v >= min && v <= max;
}

function _string(schema: Schema): Check {
  const min = (schema.minLength as number | undefined) ?? 0;
  const max = (schema.maxLength as number | undefined) ?? Number.POSITIVE_INFINITY;
  const pattern = schema.pattern === undefined ? undefined : new RegExp(schema.pattern as string);
  return (v) =>
    typeof v === 'string' && v.length >= min && v.length <= max && (pattern === undefined || pattern.test(v));
}

function _array(schema: Schema): Check {
  const items = schema.items === undefined ? undefined : compileShape(schema.items as Schema);
  const min = (schema.minItems as number | undefined) ?? 0;
  const max = (schema.maxItems as number | undefined) ?? Number.POSITIVE_INFINITY;
  return (v) => {
    if (!Array.isArray(v) || v.length < min || v.length > max) return false;
    if (items) for (const item of v) if (!items(item)) return false;
    return true;
  };
}

function _object(schema: Schema): Check {
  if (schema.additionalProperties !== false)
    throw new Error('compileShape: only closed objects (additionalProperties: false) are supported.');
  const required = new Set((schema.required as string[] | undefined) ?? []);
  const properties = new Map(
    Object.entries((schema.properties ?? {}) as Record<string, Schema>).map(
      ([k, s]) => [k, { check: compileShape(s), required: required.has(k) }] as const,
    ),
  );
  for (const key of required)
    if (!properties.has(key)) throw new Error(`compileShape: required member ${key} has no schema.`);
  return (v) => {
    if (v === null || typeof v !== 'object' || Array.isArray(v)) return false;
    const proto = Object.getPrototypeOf(v);
    if (proto !== Object.prototype && proto !== null) return false;
    const record = v as Record<string, unknown>;
    let requiredSeen = 0;
    for (const key in record) {
      if (!Object.hasOwn(record, key)) return false; // an inherited member: not a plain parsed record
      const property = properties.get(key);
      if (!property?.check(record[key])) return false;
      if (property.required) requiredSeen++;
    }
    return requiredSeen === required.size;
  };
}
