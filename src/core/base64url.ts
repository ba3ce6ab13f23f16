/**
 * @module
 * Strict base64url: one text per byte string. Node's decoder ignores the unused low
 * bits of the last character (and stray characters), so two different texts can
 * decode to the same signature; a log line could then be edited without breaking its
 * receipt. Verifiers decode through here and treat any other spelling as invalid.
 */

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

/**
 * True when `text` is unpadded base64url whose unused trailing bits are zero — the
 * only text of its bytes — without decoding it (a verifier checks every nonce and
 * signature of a path).
 */
export function isCanonicalBase64url(text: string): boolean {
  if (text.length % 4 === 1 || !/^[A-Za-z0-9_-]*$/.test(text)) return false;
  const spare = (text.length * 6) % 8; // bits of the last character that carry no data
  return (ALPHABET.indexOf(text.at(-1) ?? 'A') & ((1 << spare) - 1)) === 0;
}

/** The bytes of `text`, or undefined unless `text` is exactly their unpadded base64url form. */
export function decodeBase64urlStrict(text: string): Buffer | undefined {
  return isCanonicalBase64url(text) ? Buffer.from(text, 'base64url') : undefined;
}
