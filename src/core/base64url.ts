/**
 * @module
 * Strict base64url: one text per byte string. Node's decoder ignores the unused low
 * bits of the last character (and stray characters), so two different texts can
 * decode to the same signature; a log line could then be edited without breaking its
 * receipt. Verifiers decode through here and treat any other spelling as invalid.
 */

/** The bytes of `text`, or undefined unless `text` is exactly their unpadded base64url form. */
export function decodeBase64urlStrict(text: string): Buffer | undefined {
  if (!/^[A-Za-z0-9_-]*$/.test(text)) return undefined;
  const bytes = Buffer.from(text, 'base64url');
  return bytes.toString('base64url') === text ? bytes : undefined;
}
