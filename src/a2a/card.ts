/**
 * @module
 * Signed Agent Cards (A2A v1.0 §8.4; attest.md §2). A signature is a JWS (flattened,
 * detached payload) over the RFC 8785 form of the card without `signatures`, with a
 * protected header holding `alg` (EdDSA), `kid` and `typ`. The card is served exactly
 * as signed, so what a client fetches is what the signature covers.
 *
 * Verification trusts only the caller's own key directory (the attest key directory
 * format): a `jku`, `jwk` or `x5u` carried by the card is never used — that was the bug
 * of A2A issue #2096. The result is a list of reason codes, never a bare boolean.
 */
import { AgentCard, canonicalizeAgentCard } from '@a2a-js/sdk';
import type { KeyDirectory } from '../attest/key-directory.js';
import type { SigningKey } from '../attest/keys.js';
import { decodeBase64urlStrict } from '../core/base64url.js';
import { canonicalize } from '../core/canonical-json.js';
import { signEd25519, verifyEd25519 } from '../core/ed25519.js';
import { WitnessError } from '../core/errors.js';
import type { Problem } from '../core/problem.js';
import { parseStrictJson } from '../core/strict-json.js';
import { ATTESTED_RESULTS_EXTENSION } from './metadata.js';

/** A card as JSON (the A2A v1.0 JSON form), with or without `signatures`. */
export type CardJson = Record<string, unknown> & { signatures?: CardSignature[] };
export interface CardSignature {
  protected: string;
  signature: string;
  header?: Record<string, unknown>;
}

export type CardReasonCode =
  | 'CARD_MALFORMED'
  | 'CARD_UNSIGNED'
  | 'CARD_UNKNOWN_KEY'
  | 'CARD_KEY_NOT_VALID'
  | 'CARD_WRONG_DEPLOYER'
  | 'CARD_BAD_SIGNATURE';
export type CardReason = Problem<CardReasonCode>;
export interface CardVerifyResult {
  ok: boolean;
  reasons: CardReason[];
  /** The key whose signature verified. */
  kid?: string;
  /** The deployer that key belongs to in the caller's directory. */
  deployer?: string;
}

export interface BuildCardOptions {
  /** Base URL of the agent, e.g. http://127.0.0.1:4100 */
  baseUrl: string;
  name: string;
  description?: string;
  /** The organisation (deployer id) that runs the agent; checked against the signing key's deployer. */
  deployer: string;
  version?: string;
}

export const JSONRPC_PATH = '/a2a/jsonrpc';
/**
 * The HTTP+JSON binding's routes (A2A v1.0 §11.3), at the agent's base URL as the
 * spec's examples have them (`POST /message:send`, `GET /tasks/{id}`, …), each also
 * under a `/{tenant}` prefix; the path alone, without the query.
 */
export const REST_ROUTE = /^(\/[^/]+)?\/(message:(send|stream)|tasks(\/.*)?|extendedAgentCard)$/;
export const CARD_PATH = '/.well-known/agent-card.json';

/**
 * The agent's card: the JSON-RPC endpoint declared for v1.0 and, through the SDK's
 * compat layer, v0.3; the HTTP+JSON binding for v1.0. JSON-RPC comes first, the one
 * clients pick when they have no preference.
 */
export function buildAgentCard(options: BuildCardOptions): CardJson {
  const url = `${options.baseUrl}${JSONRPC_PATH}`;
  return {
    name: options.name,
    description:
      options.description ??
      'A Witness child agent: answers a delegated task with an attested artifact (its receipt and delegation-edge evidence in the artifact metadata).',
    supportedInterfaces: [
      { url, protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
      { url, protocolBinding: 'JSONRPC', protocolVersion: '0.3' },
      { url: options.baseUrl, protocolBinding: 'HTTP+JSON', protocolVersion: '1.0' },
    ],
    provider: { organization: options.deployer, url: options.baseUrl },
    version: options.version ?? '1.0.0',
    capabilities: {
      // SendStreamingMessage and SubscribeToTask: the SDK serves them once the card says so.
      streaming: true,
      extensions: [
        {
          uri: ATTESTED_RESULTS_EXTENSION,
          description: 'Results carry a Witness release receipt and delegation-edge evidence (docs/a2a.md).',
        },
      ],
    },
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: [
      {
        id: 'answer-with-evidence',
        name: 'Answer with evidence',
        description:
          'Answers a task from the evidence an MCP tool returns; the answer is released with a signed receipt.',
        tags: ['attested'],
      },
    ],
  };
}

/** The bytes every card signature covers: RFC 8785 of the card without `signatures`. */
export function cardPayload(card: CardJson): string {
  const { signatures: _omit, ...rest } = card;
  return canonicalize(rest);
}

/**
 * Signs `card` with `key` and returns it with the signature appended. Refuses a card
 * whose canonical form differs from the A2A SDK's (`canonicalizeAgentCard`, which drops
 * default-valued fields), so SDK-based verifiers read the same bytes.
 */
export function signAgentCard(card: CardJson, key: SigningKey): CardJson {
  const payload = cardPayload(card);
  if (payload !== canonicalizeAgentCard(AgentCard.fromJSON(card))) {
    throw new WitnessError(
      'USAGE',
      'The card has fields the A2A v1.0 schema drops or empty/default values; a signature over it would not verify in other A2A SDKs. Remove empty and unknown fields.',
    );
  }
  const header = { alg: 'EdDSA', kid: key.kid, typ: 'JOSE' };
  const protectedB64 = Buffer.from(JSON.stringify(header), 'utf8').toString('base64url');
  const input = `${protectedB64}.${Buffer.from(payload, 'utf8').toString('base64url')}`;
  const signature = signEd25519(key.privateKey, Buffer.from(input, 'ascii'));
  return { ...card, signatures: [...(card.signatures ?? []), { protected: protectedB64, signature }] };
}

/** Parses card JSON text strictly (duplicate keys refused); a bad card is `INVALID_INPUT`. */
export function parseCardText(text: string, what = 'the Agent Card'): CardJson {
  const value = parseStrictJson(text, { what });
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw new WitnessError('INVALID_INPUT', `${what} is not a JSON object.`);
  return value as CardJson;
}

/**
 * Verifies the card's signatures against `directory` at time `now`. Valid when at least
 * one signature verifies by a key the directory trusts now for the card's
 * `provider.organization`.
 */
export function verifyAgentCard(card: unknown, directory: KeyDirectory, now: number = Date.now()): CardVerifyResult {
  const shape = _shapeProblem(card);
  if (shape) return { ok: false, reasons: [{ code: 'CARD_MALFORMED', message: shape }] };
  const c = card as CardJson;
  const signatures = c.signatures ?? [];
  if (signatures.length === 0)
    return {
      ok: false,
      reasons: [
        {
          code: 'CARD_UNSIGNED',
          message: 'The card carries no signatures; an unsigned card proves nothing about who runs the agent.',
        },
      ],
    };
  const organization = (c.provider as { organization?: unknown } | undefined)?.organization;
  let payload: string;
  try {
    payload = Buffer.from(cardPayload(c), 'utf8').toString('base64url');
  } catch (error) {
    return {
      ok: false,
      reasons: [
        { code: 'CARD_MALFORMED', message: `The card has no canonical JSON form: ${(error as Error).message}` },
      ],
    };
  }
  const reasons: CardReason[] = [];
  for (const [i, sig] of signatures.entries()) {
    const problem = _signatureProblem(sig, i, payload, organization, directory, now);
    if (typeof problem !== 'string' && 'kid' in problem)
      return { ok: true, reasons: [], kid: problem.kid, deployer: problem.deployer };
    reasons.push(typeof problem === 'string' ? { code: 'CARD_MALFORMED', message: problem } : problem);
  }
  return { ok: false, reasons };
}

/** Does the card declare `capabilities.streaming` (SendStreamingMessage, SubscribeToTask)? */
export function declaresStreaming(card: CardJson): boolean {
  return (card.capabilities as { streaming?: unknown } | undefined)?.streaming === true;
}

/**
 * The deployer a card's agent answers for: the one `check` found your directory trusts
 * the card's key for, or — when the card did not verify — the `provider.organization` it names.
 */
export function cardDeployer(card: unknown, check: CardVerifyResult): string {
  return (
    check.deployer ??
    String(((card as CardJson | null)?.provider as { organization?: unknown } | undefined)?.organization)
  );
}

function _shapeProblem(card: unknown): string | undefined {
  if (card === null || typeof card !== 'object' || Array.isArray(card)) return 'The card is not a JSON object.';
  const c = card as Record<string, unknown>;
  if (typeof c.name !== 'string' || !Array.isArray(c.supportedInterfaces))
    return 'The card lacks name or supportedInterfaces; it is not an A2A v1.0 Agent Card.';
  if (c.signatures !== undefined && !Array.isArray(c.signatures))
    return 'card.signatures must be an array of {protected, signature, header?}.';
  return undefined;
}

function _signatureProblem(
  sig: unknown,
  i: number,
  payload: string,
  organization: unknown,
  directory: KeyDirectory,
  now: number,
): string | CardReason | { kid: string; deployer: string } {
  const s = sig as Partial<CardSignature> | null;
  if (!s || typeof s.protected !== 'string' || typeof s.signature !== 'string')
    return `signatures[${i}] is not {protected, signature, header?}.`;
  let header: Record<string, unknown>;
  const headerBytes = decodeBase64urlStrict(s.protected); // one text per header, as for every signature Witness checks
  if (!headerBytes) return `signatures[${i}].protected is not unpadded base64url in its one canonical spelling.`;
  try {
    header = parseStrictJson(headerBytes.toString('utf8'), { what: `signatures[${i}].protected` }) as Record<
      string,
      unknown
    >;
  } catch (error) {
    return `signatures[${i}].protected is not base64url JSON: ${(error as Error).message}`;
  }
  if (header === null || typeof header !== 'object') return `signatures[${i}].protected is not a JSON object.`;
  if (header.alg !== 'EdDSA' && header.alg !== 'Ed25519')
    return `signatures[${i}] uses alg ${JSON.stringify(header.alg)}; this verifier accepts EdDSA (Ed25519) only.`;
  if (typeof header.kid !== 'string') return `signatures[${i}] has no kid in its protected header.`;
  // jku / jwk / x5u in the header are deliberately ignored: the directory is the only trust root.
  const key = directory.get(header.kid);
  if (!key)
    return {
      code: 'CARD_UNKNOWN_KEY',
      message: `signatures[${i}]: key ${header.kid} is not in your key directory; keys or URLs named by the card are never trusted. Add the agent operator's public key with: witness keys add`,
    };
  if (now < key.notBefore || now >= key.notAfter || (key.revokedAt !== undefined && now >= key.revokedAt)) {
    return {
      code: 'CARD_KEY_NOT_VALID',
      message: `signatures[${i}]: key ${header.kid} is not valid now (${new Date(now).toISOString()}): outside its window or revoked.`,
    };
  }
  if (!verifyEd25519(key.key, Buffer.from(`${s.protected}.${payload}`, 'ascii'), s.signature)) {
    return {
      code: 'CARD_BAD_SIGNATURE',
      message: `signatures[${i}] by ${header.kid} does not verify over the card: the card was changed after signing, or signed by another key.`,
    };
  }
  if (organization !== key.deployer) {
    return {
      code: 'CARD_WRONG_DEPLOYER',
      message: `signatures[${i}]: key ${header.kid} belongs to ${key.deployer}, but the card names provider.organization ${JSON.stringify(organization)}.`,
    };
  }
  return { kid: key.kid, deployer: key.deployer };
}

/** Fetches a card (v1.0: header `A2A-Version: 1.0`). `url` is the agent's base URL or the card URL itself. */
export async function fetchAgentCard(url: string, options: { timeoutMs?: number } = {}): Promise<CardJson> {
  const cardUrl = url.endsWith('.json') ? url : `${url.replace(/\/+$/, '')}${CARD_PATH}`;
  let response: Response;
  try {
    response = await fetch(cardUrl, {
      headers: { 'A2A-Version': '1.0', Accept: 'application/json' },
      signal: AbortSignal.timeout(options.timeoutMs ?? 10_000),
    });
  } catch (cause) {
    throw new WitnessError(
      'IO',
      `Cannot fetch the Agent Card at ${cardUrl}: ${(cause as Error).message}. Is the agent running?`,
      { cause },
    );
  }
  const text = await response.text();
  if (!response.ok)
    throw new WitnessError(
      'IO',
      `The Agent Card at ${cardUrl} answered HTTP ${response.status}; expected 200 with the card.`,
    );
  return parseCardText(text, `the Agent Card at ${cardUrl}`);
}
