/**
 * @module
 * The one check for text that crosses an input boundary (tool arguments, HTTP bodies,
 * evidence files, CLI values): it must be well-formed UTF-16, i.e. hold no lone
 * surrogate. A lone surrogate cannot be written as UTF-8 or as RFC 8785 canonical JSON,
 * so a value that holds one would fail late — after something was stored — instead of
 * at the boundary, before anything is.
 */
import { WitnessError } from './errors.js';

/** Where the first lone surrogate of `text` is, or -1 when the text is well formed. */
export function loneSurrogateIndex(text: string): number {
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit < 0xd800 || unit > 0xdfff) continue;
    if (unit <= 0xdbff) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        i++;
        continue;
      }
    }
    return i;
  }
  return -1;
}

/**
 * Throws `INVALID_INPUT` naming `what` when `text` holds a lone surrogate.
 * @example checkWellFormedText('héllo', 'body') // returns
 * @example checkWellFormedText('\ud800', 'body') // throws: body holds a lone surrogate at index 0
 */
export function checkWellFormedText(text: string, what: string): void {
  const at = loneSurrogateIndex(text);
  if (at < 0) return;
  const unit = text.charCodeAt(at).toString(16).toUpperCase();
  throw new WitnessError(
    'INVALID_INPUT',
    `${what} holds a lone surrogate (U+${unit} at index ${at}), which is not valid Unicode text. Send well-formed UTF-8/UTF-16 text.`,
  );
}

/**
 * Checks every string (keys included) inside a JSON-like value, naming the path of the
 * first bad one: for parsed records whose every field will be stored or signed.
 */
export function checkWellFormedValue(value: unknown, what: string): void {
  if (typeof value === 'string') {
    checkWellFormedText(value, what);
    return;
  }
  if (Array.isArray(value)) {
    for (const [i, item] of value.entries()) checkWellFormedValue(item, `${what}[${i}]`);
    return;
  }
  if (value !== null && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) {
      checkWellFormedText(key, `a key of ${what}`);
      checkWellFormedValue(item, `${what}.${key}`);
    }
  }
}
