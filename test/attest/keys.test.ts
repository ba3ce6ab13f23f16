/**
 * The one key-file format and its one reader: Ed25519 and HMAC keys, the mailbox's
 * legacy files, and every check readKeyFile makes (permissions, schema, and that the
 * secret, the public key and the key id agree).
 */
import { chmodSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { hmacKeyId, newHmacKey, newSigningKey, readKeyFile, signerFor, writeKeyFile } from '../../src/attest/index.js';
import { generateEd25519KeyPair, keyIdFor } from '../../src/core/ed25519.js';

const dir = mkdtempSync(join(tmpdir(), 'witness-keys-'));
let n = 0;
function file(content: unknown, mode = 0o600): string {
  const path = join(dir, `k${++n}.json`);
  writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content));
  chmodSync(path, mode);
  return path;
}

describe('key files', () => {
  it('round-trips an Ed25519 and an HMAC key through writeKeyFile and readKeyFile, written 0600', () => {
    for (const key of [newSigningKey('acme'), newHmacKey('acme')]) {
      const path = join(dir, `rt-${key.alg}.json`);
      writeKeyFile(path, key);
      expect(statSync(path).mode & 0o777).toBe(0o600);
      expect(readKeyFile(path, { hmac: true })).toEqual(key);
    }
  });

  it('refuses an HMAC key unless the caller accepts one (a receipt others verify needs a public key)', () => {
    const path = join(dir, 'hmac-only.json');
    writeKeyFile(path, newHmacKey('acme'));
    expect(() => readKeyFile(path)).toThrow(/holds an HMAC key .* needs an Ed25519 key/);
  });

  it('refuses a key others can read, unless a verifier asks to be warned instead', () => {
    const key = newSigningKey('acme');
    const path = join(dir, 'loose.json');
    writeKeyFile(path, key);
    chmodSync(path, 0o644);
    expect(() => readKeyFile(path)).toThrow(`chmod 600 ${path}`);
    const warnings: string[] = [];
    expect(readKeyFile(path, { onShared: (w) => warnings.push(w) }).kid).toBe(key.kid);
    expect(warnings).toEqual([
      expect.stringMatching(/can be read by other users, so any of them could have signed; run: chmod 600/),
    ]);
  });

  it('refuses an HMAC key file whose kid is not the id of its secret', () => {
    const key = newHmacKey('acme');
    const path = file({
      v: 1,
      kty: 'oct',
      alg: 'HS256',
      kid: hmacKeyId(newHmacKey('x').secret),
      k: key.secret,
      deployer: 'acme',
    });
    expect(() => readKeyFile(path, { hmac: true })).toThrow(/is not the id of its secret/);
  });

  it('refuses a member the format does not have', () => {
    const key = newSigningKey('acme');
    const path = file({
      v: 1,
      kty: 'OKP',
      crv: 'Ed25519',
      kid: key.kid,
      x: key.publicKey,
      d: key.privateKey,
      deployer: 'acme',
      extra: 1,
    });
    expect(() => readKeyFile(path)).toThrow(/not a Witness key file/);
  });

  it("reads the mailbox's legacy Ed25519 and HMAC files, with the same checks", () => {
    const pair = generateEd25519KeyPair();
    const ed = readKeyFile(
      file({
        alg: 'ed25519',
        kid: keyIdFor(pair.publicKey),
        publicKey: pair.publicKey,
        secret: pair.privateKey,
        created: '2026-01-01T00:00:00.000Z',
      }),
      { hmac: true },
    );
    expect(ed).toEqual({
      alg: 'ed25519',
      kid: keyIdFor(pair.publicKey),
      deployer: 'mailbox',
      publicKey: pair.publicKey,
      privateKey: pair.privateKey,
    });
    const secret = newHmacKey('x').secret;
    expect(
      readKeyFile(file({ alg: 'hmac-sha256', kid: hmacKeyId(secret), secret, created: '2026-01-01T00:00:00.000Z' }), {
        hmac: true,
      }).kid,
    ).toBe(hmacKeyId(secret));
    const other = generateEd25519KeyPair();
    const spliced = file({
      alg: 'ed25519',
      kid: keyIdFor(pair.publicKey),
      publicKey: pair.publicKey,
      secret: other.privateKey,
      created: '2026-01-01T00:00:00.000Z',
    });
    expect(() => readKeyFile(spliced, { hmac: true })).toThrow(
      /private key \(secret\) does not belong to the public key \(publicKey\)/,
    );
  });

  it('signs and verifies through one Signer for both algorithms; a signature by another key or of other bytes fails', () => {
    for (const [a, b] of [
      [newSigningKey('acme'), newSigningKey('acme')],
      [newHmacKey('acme'), newHmacKey('acme')],
    ] as const) {
      const signer = signerFor(a);
      const sig = signer.sign(Buffer.from('bytes'));
      expect(signer.verify(Buffer.from('bytes'), sig)).toBe(true);
      expect(signer.verify(Buffer.from('bytez'), sig)).toBe(false);
      expect(signerFor(b).verify(Buffer.from('bytes'), sig)).toBe(false);
      expect(signer.verify(Buffer.from('bytes'), `${sig}A`)).toBe(false);
    }
  });

  it('never overwrites an existing key file', () => {
    const path = join(dir, 'once.json');
    writeKeyFile(path, newSigningKey('acme'));
    const before = readFileSync(path, 'utf8');
    expect(() => writeKeyFile(path, newSigningKey('acme'))).toThrow(/already exists/);
    expect(readFileSync(path, 'utf8')).toBe(before);
  });
});
