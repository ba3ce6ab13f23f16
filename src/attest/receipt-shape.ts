/**
 * @module
 * A hand-written check of the receipt shape, for the verifier's hot path: it accepts
 * only values `ReceiptSchema` also accepts (a property test holds it to that), and
 * when it says no, zod runs to say why. A path verifier parses every receipt on every
 * path; the schema library's generality cost more than the rest of the checks.
 */
import type { Receipt } from './receipt.js';

const KEYS = new Set(['v', 'type', 'output_sha256', 'output_len', 'deployer', 'instance', 'key_id', 'issued_at', 'not_after', 'nonce', 'parent', 'depth', 'construction', 'cosigners', 'ancestry_root', 'signatures']);
const HEX64 = /^[0-9a-f]{64}$/;
const NAME = /^[\x21-\x7e]{1,128}$/;
const KEY_ID = /^ed25519:[0-9a-f]{16}$/;
const SIG = /^[A-Za-z0-9_-]{86}$/;
const NONCE = /^[A-Za-z0-9_-]{22,86}$/;
const TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const CONSTRUCTIONS = new Set(['none', 'chain', 'merkle', 'dag']);

/** True only for a value that `ReceiptSchema` accepts unchanged; false means "ask zod". */
export function hasReceiptShape(value: unknown): value is Receipt {
  if (!_plain(value)) return false;
  const r = value as Record<string, unknown>;
  let count = 0;
  for (const key in r) {
    if (!Object.hasOwn(r, key) || !KEYS.has(key)) return false;
    count++;
  }
  const expected = r.ancestry_root === undefined ? KEYS.size - 1 : KEYS.size;
  if (count !== expected) return false;
  return (
    r.v === 1 &&
    (r.type === 'output' || r.type === 'edge') &&
    _match(HEX64, r.output_sha256) &&
    _int(r.output_len, Number.MAX_SAFE_INTEGER) &&
    _match(NAME, r.deployer) &&
    typeof r.instance === 'string' &&
    r.instance.length >= 1 &&
    r.instance.length <= 256 &&
    _match(KEY_ID, r.key_id) &&
    _match(TIME, r.issued_at) &&
    _match(TIME, r.not_after) &&
    _match(NONCE, r.nonce) &&
    (r.parent === null || _match(HEX64, r.parent)) &&
    _int(r.depth, 4096) &&
    CONSTRUCTIONS.has(r.construction as string) &&
    Array.isArray(r.cosigners) &&
    r.cosigners.length <= 16 &&
    r.cosigners.every(_name) &&
    (r.ancestry_root === undefined || _match(HEX64, r.ancestry_root)) &&
    Array.isArray(r.signatures) &&
    r.signatures.length >= 1 &&
    r.signatures.length <= 16 &&
    r.signatures.every(_signature)
  );
}

function _name(value: unknown): boolean {
  return _match(NAME, value);
}

function _signature(value: unknown): boolean {
  if (!_plain(value)) return false;
  const s = value as Record<string, unknown>;
  return Object.keys(s).length === 3 && s.alg === 'Ed25519' && _match(KEY_ID, s.key_id) && _match(SIG, s.sig);
}

function _plain(value: unknown): boolean {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

function _match(pattern: RegExp, value: unknown): boolean {
  return typeof value === 'string' && pattern.test(value);
}

function _int(value: unknown, max: number): boolean {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0 && value <= max;
}
