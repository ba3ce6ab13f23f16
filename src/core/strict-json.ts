/**
 * @module
 * A strict replacement for `JSON.parse`: the same RFC 8259 grammar, but an object that
 * names the same key twice is an error instead of "last one wins". Signed records must
 * have exactly one reading; with duplicate keys, two parsers can disagree about what
 * was signed (attest.md §2). Errors name the line and column and what to do.
 */
import { WitnessError } from './errors.js';

export interface StrictJsonOptions {
  /** What is being parsed, for error messages (e.g. "receipt.json"). */
  what?: string;
  /** Deepest nesting accepted; deeper input is refused instead of overflowing the stack. */
  maxDepth?: number;
  /**
   * Refuse a number not spelled as RFC 8785 writes it (`10.0`, `1e1`, `-0`, or more
   * digits than a double holds): evidence whose number two readers could read as two
   * values. The message then says "not in its canonical form".
   */
  canonicalNumbers?: boolean;
}

/**
 * Parses JSON text, refusing duplicate object keys, with `INVALID_INPUT` errors.
 * @example parseStrictJson('{"a":1}') // {a: 1}
 * @example parseStrictJson('{"a":1,"a":2}') // throws: duplicate key "a"
 */
export function parseStrictJson(text: string, options: StrictJsonOptions = {}): unknown {
  const parser = new _Parser(
    text,
    options.what ?? 'JSON text',
    options.maxDepth ?? 512,
    options.canonicalNumbers ?? false,
  );
  parser.skipSpace();
  const value = parser.value(0);
  parser.skipSpace();
  if (parser.pos < text.length) parser.fail('unexpected text after the JSON value');
  return value;
}

// RFC 8259 tokens; strings and numbers are decoded by JSON.parse once matched, so the
// escapes and number conversions are exactly the standard ones.
// biome-ignore lint/suspicious/noControlCharactersInRegex: RFC 8259 forbids raw U+0000–U+001F inside strings; the class excludes them.
const STRING = /"(?:[^"\\\u0000-\u001f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*"/y;
const NUMBER = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;

class _Parser {
  pos = 0;
  constructor(
    private readonly text: string,
    private readonly what: string,
    private readonly maxDepth: number,
    private readonly canonicalNumbers: boolean,
  ) {}

  value(depth: number): unknown {
    if (depth > this.maxDepth) this.fail(`nesting deeper than ${this.maxDepth} levels`);
    const ch = this.text[this.pos];
    if (ch === '{') return this.object(depth);
    if (ch === '[') return this.array(depth);
    if (ch === '"') return this.string();
    if (ch === 't') return this.literal('true', true);
    if (ch === 'f') return this.literal('false', false);
    if (ch === 'n') return this.literal('null', null);
    if (ch === '-' || (ch !== undefined && ch >= '0' && ch <= '9')) return this.number();
    return this.fail(
      ch === undefined ? 'the text ends where a value was expected' : `unexpected character ${JSON.stringify(ch)}`,
    );
  }

  object(depth: number): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    const seen = new Set<string>();
    this.pos++;
    this.skipSpace();
    if (this.text[this.pos] === '}') {
      this.pos++;
      return out;
    }
    for (;;) {
      this.skipSpace();
      if (this.text[this.pos] !== '"') this.fail('expected a quoted object key');
      const keyAt = this.pos;
      const key = this.string();
      if (seen.has(key))
        this.fail(`duplicate key ${JSON.stringify(key)}; each key may appear once — remove the repeated one`, keyAt);
      seen.add(key);
      this.skipSpace();
      this.expect(':');
      this.skipSpace();
      // defineProperty keeps "__proto__" an ordinary own key, as JSON.parse does.
      Object.defineProperty(out, key, {
        value: this.value(depth + 1),
        enumerable: true,
        writable: true,
        configurable: true,
      });
      this.skipSpace();
      if (this.text[this.pos] === ',') {
        this.pos++;
        continue;
      }
      this.expect('}');
      return out;
    }
  }

  array(depth: number): unknown[] {
    const out: unknown[] = [];
    this.pos++;
    this.skipSpace();
    if (this.text[this.pos] === ']') {
      this.pos++;
      return out;
    }
    for (;;) {
      this.skipSpace();
      out.push(this.value(depth + 1));
      this.skipSpace();
      if (this.text[this.pos] === ',') {
        this.pos++;
        continue;
      }
      this.expect(']');
      return out;
    }
  }

  string(): string {
    return JSON.parse(this.match(STRING, 'a malformed string (unescaped control character or bad escape)')) as string;
  }

  number(): number {
    const at = this.pos;
    const token = this.match(NUMBER, 'a malformed number');
    const value = JSON.parse(token) as number;
    // JSON.stringify writes a number as RFC 8785 does (ECMAScript's shortest round trip).
    if (this.canonicalNumbers && JSON.stringify(value) !== token)
      this.fail(`the number ${token} is not in its canonical form (${JSON.stringify(value)})`, at);
    return value;
  }

  literal(word: string, value: boolean | null): boolean | null {
    if (!this.text.startsWith(word, this.pos)) this.fail(`unexpected text; did you mean ${word}?`);
    this.pos += word.length;
    return value;
  }

  match(pattern: RegExp, problem: string): string {
    pattern.lastIndex = this.pos;
    const found = pattern.exec(this.text);
    if (!found) this.fail(problem);
    this.pos += found[0].length;
    return found[0];
  }

  expect(ch: string): void {
    if (this.text[this.pos] !== ch) this.fail(`expected ${JSON.stringify(ch)}`);
    this.pos++;
  }

  skipSpace(): void {
    while (this.pos < this.text.length) {
      const ch = this.text[this.pos];
      if (ch !== ' ' && ch !== '\t' && ch !== '\n' && ch !== '\r') return;
      this.pos++;
    }
  }

  fail(problem: string, at = this.pos): never {
    const before = this.text.slice(0, at);
    const line = before.split('\n').length;
    const column = at - before.lastIndexOf('\n');
    throw new WitnessError(
      'INVALID_INPUT',
      `${this.what} is not valid JSON at line ${line}, column ${column}: ${problem}.`,
      {
        data: { line, column, offset: at },
      },
    );
  }
}
