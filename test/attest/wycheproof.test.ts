import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { addKey, emptyDirectory, KeyDirectory } from '../../src/attest/key-directory.js';
import { keyIdFor, verifyEd25519 } from '../../src/core/ed25519.js';

// The verifier checks every receipt signature with core's verifyEd25519 (cached
// KeyObjects, never throws): these are the vectors through that exact function.
interface WycheproofCase {
  tcId: number;
  comment: string;
  msg: string;
  sig: string;
  result: 'valid' | 'invalid';
}
interface WycheproofFile {
  numberOfTests: number;
  testGroups: Array<{ publicKey: { pk: string }; tests: WycheproofCase[] }>;
}

const file = JSON.parse(
  readFileSync(join(import.meta.dirname, '..', 'fixtures', 'vectors', 'wycheproof', 'ed25519_test.json'), 'utf8'),
) as WycheproofFile;
const cases = file.testGroups.flatMap((g) => g.tests.map((t) => ({ ...t, pk: g.publicKey.pk })));

describe('Wycheproof Ed25519 vectors', () => {
  it('holds all 151 cases the file declares', () => {
    expect(cases).toHaveLength(151);
    expect(file.numberOfTests).toBe(151);
  });
  it('gives the expected result for every case, with keys loaded through a verifier key directory', () => {
    // The verifier's path: public key → directory entry → cached KeyObject → verifyEd25519.
    let dirFile = emptyDirectory();
    for (const pk of new Set(cases.map((c) => c.pk))) {
      const x = Buffer.from(pk, 'hex').toString('base64url');
      dirFile = addKey(
        dirFile,
        { kty: 'OKP', crv: 'Ed25519', kid: keyIdFor(x), x, deployer: 'wycheproof' },
        { notBefore: 0, notAfter: 4e12 },
      );
    }
    const directory = new KeyDirectory(dirFile);
    const wrong = cases.filter((t) => {
      const key = directory.get(keyIdFor(Buffer.from(t.pk, 'hex').toString('base64url')));
      const ok = key !== undefined && verifyEd25519(key.key, Buffer.from(t.msg, 'hex'), Buffer.from(t.sig, 'hex'));
      return ok !== (t.result === 'valid');
    });
    expect(wrong.map((t) => `tcId ${t.tcId} (${t.comment})`)).toEqual([]);
  });
  it('accepts the same signatures when they arrive as base64url text, as in receipts', () => {
    for (const t of cases.filter((c) => c.result === 'valid')) {
      expect(
        verifyEd25519(
          Buffer.from(t.pk, 'hex'),
          Buffer.from(t.msg, 'hex'),
          Buffer.from(t.sig, 'hex').toString('base64url'),
        ),
        `tcId ${t.tcId}`,
      ).toBe(true);
    }
  });
});
