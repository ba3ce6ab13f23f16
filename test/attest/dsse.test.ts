import { describe, expect, it } from 'vitest';
import { exportDsse, IN_TOTO_PAYLOAD_TYPE, pae, verifyDsse } from '../../src/attest/dsse.js';
import type { SigningKey } from '../../src/attest/keys.js';
import { signEd25519 } from '../../src/core/ed25519.js';
import { MemoryNonceStore } from '../../src/attest/nonce-store.js';
import { codes, keysFor, NOW, signerAt, trust } from './helpers.js';

const [key, other] = keysFor('org-a', 'org-b') as [SigningKey, SigningKey];
const { directory } = trust([key, other]);
const output = Buffer.from('released');
const receipt = await signerAt(key, NOW).releaseOutput(output);

describe('DSSE export', () => {
  it('encodes PAE as the DSSE specification example does', () => {
    expect(pae('http://example.com/HelloWorld', Buffer.from('hello world')).toString()).toBe(
      'DSSEv1 29 http://example.com/HelloWorld 11 hello world',
    );
  });
  it('wraps an in-toto Statement whose subject digest is the output SHA-256', () => {
    const envelope = exportDsse([receipt], key, { name: 'report.txt' });
    const statement = JSON.parse(Buffer.from(envelope.payload, 'base64').toString());
    expect(envelope.payloadType).toBe(IN_TOTO_PAYLOAD_TYPE);
    expect(statement._type).toBe('https://in-toto.io/Statement/v1');
    expect(statement.subject).toEqual([{ name: 'report.txt', digest: { sha256: receipt.output_sha256 } }]);
    expect(statement.predicate.path).toEqual([receipt]);
  });
  it('verifies an exported envelope against the output', async () => {
    expect(
      codes(
        await verifyDsse(exportDsse([receipt], key), output, {
          directory,
          now: NOW,
          nonceStore: new MemoryNonceStore(),
        }),
      ),
    ).toEqual([]);
  });
  it('reports BAD_SIGNATURE when the payload was changed after signing', async () => {
    const envelope = exportDsse([receipt], key);
    const statement = JSON.parse(Buffer.from(envelope.payload, 'base64').toString());
    statement.subject[0].name = 'other.txt';
    const tampered = { ...envelope, payload: Buffer.from(JSON.stringify(statement)).toString('base64') };
    expect(codes(await verifyDsse(tampered, output, { directory, now: NOW }))).toEqual(['BAD_SIGNATURE']);
  });
  it('refuses another spelling of the same bytes (NON_CANONICAL) and members no reader checks (MALFORMED)', async () => {
    const envelope = exportDsse([receipt], key);
    const sig = envelope.signatures[0]!.sig;
    const lastBits = (b64: string) => {
      // Flip an unused low bit of the last data character: Node's decoder ignores it.
      const body = b64.replace(/=+$/, '');
      const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
      const at = alphabet.indexOf(body.at(-1)!);
      return `${body.slice(0, -1)}${alphabet[at ^ 1]}${b64.slice(body.length)}`;
    };
    const variants: Array<[unknown, string]> = [
      [{ ...envelope, signatures: [{ keyid: key.kid, sig: `${sig}!!` }] }, 'NON_CANONICAL'],
      // The payload's length decides whether it is padded: one of these two applies to any payload.
      envelope.payload.endsWith('=')
        ? [{ ...envelope, payload: lastBits(envelope.payload) }, 'NON_CANONICAL']
        : [{ ...envelope, payload: `${envelope.payload}=` }, 'NON_CANONICAL'],
      [{ ...envelope, signatures: [{ keyid: key.kid, sig: lastBits(sig) }] }, 'NON_CANONICAL'],
      [{ ...envelope, approved_by: 'security-team' }, 'MALFORMED'],
      [{ ...envelope, signatures: [{ ...envelope.signatures[0], note: 'x' }] }, 'MALFORMED'],
    ];
    for (const [variant, code] of variants) {
      expect(Buffer.from((variant as typeof envelope).payload, 'base64')).toEqual(
        Buffer.from(envelope.payload, 'base64'),
      );
      expect(codes(await verifyDsse(variant, output, { directory, now: NOW }))).toEqual([code]);
    }
  });
  it('refuses to export with a key that did not sign the receipt', () => {
    expect(() => exportDsse([receipt], other)).toThrow(/did not sign this receipt/);
  });
  it('does not consume the nonce of the receipt inside an envelope whose signature fails', async () => {
    const nonceStore = new MemoryNonceStore();
    const envelope = exportDsse([receipt], key);
    const zeroed = { ...envelope, signatures: [{ keyid: key.kid, sig: Buffer.alloc(64).toString('base64') }] };
    expect(codes(await verifyDsse(zeroed, output, { directory, now: NOW, nonceStore }))).toEqual(['BAD_SIGNATURE']);
    expect(codes(await verifyDsse(envelope, output, { directory, now: NOW, nonceStore }))).toEqual([]);
    expect(codes(await verifyDsse(envelope, output, { directory, now: NOW, nonceStore }))).toEqual(['REPLAY']);
  });
  it('does not consume the nonce when the statement subject is not the output', async () => {
    const nonceStore = new MemoryNonceStore();
    const envelope = exportDsse([receipt], key);
    const statement = JSON.parse(Buffer.from(envelope.payload, 'base64').toString());
    statement.subject[0].digest.sha256 = '0'.repeat(64);
    const payload = Buffer.from(JSON.stringify(statement));
    const resigned = {
      ...envelope,
      payload: payload.toString('base64'),
      signatures: [
        {
          keyid: key.kid,
          sig: Buffer.from(signEd25519(key.privateKey, pae(IN_TOTO_PAYLOAD_TYPE, payload)), 'base64url').toString(
            'base64',
          ),
        },
      ],
    };
    expect(codes(await verifyDsse(resigned, output, { directory, now: NOW, nonceStore }))).toEqual(['OUTPUT_MISMATCH']);
    expect(codes(await verifyDsse(envelope, output, { directory, now: NOW, nonceStore }))).toEqual([]);
  });
  it('refuses a statement with a duplicate key as NON_CANONICAL', async () => {
    const envelope = exportDsse([receipt], key);
    const text = Buffer.from(envelope.payload, 'base64')
      .toString()
      .replace('{"_type":', '{"predicateType":"x","_type":');
    const payload = Buffer.from(text);
    const resigned = {
      ...envelope,
      payload: payload.toString('base64'),
      signatures: [
        {
          keyid: key.kid,
          sig: Buffer.from(signEd25519(key.privateKey, pae(IN_TOTO_PAYLOAD_TYPE, payload)), 'base64url').toString(
            'base64',
          ),
        },
      ],
    };
    expect(codes(await verifyDsse(resigned, output, { directory, now: NOW }))).toEqual(['NON_CANONICAL']);
  });
  it('reports a non-envelope as MALFORMED', async () => {
    expect(codes(await verifyDsse({ payload: 1 }, output, { directory, now: NOW }))).toEqual(['MALFORMED']);
  });
});
