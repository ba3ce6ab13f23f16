import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ATTACKS, formatMatrix, runMatrix } from '../../src/attest/testing/index.js';
import { REASON_CODES } from '../../src/attest/reasons.js';

// attest.md §7 as a regression suite: every cell of the adversary matrix, run with
// fresh real keys through the real signer, co-signer and verifier.
const cells = await runMatrix();
const cell = (attack: string, construction: string) =>
  cells.find((c) => c.attack === attack && c.construction === construction);

describe('adversary matrix', () => {
  for (const c of cells) {
    const want = c.expected === 'accepted' ? 'accepts' : `rejects with ${c.expected}`;
    it(`${want}: ${c.title}, under ${c.construction}`, () => {
      expect({ verdict: c.verdict, reasons: c.reasons, asExpected: c.asExpected }).toMatchObject({
        verdict: c.expected === 'accepted' ? 'accepted' : 'rejected',
        asExpected: true,
      });
      if (c.expected !== 'accepted') expect(c.reasons).toContain(c.expected);
    });
  }
  it('accepts the child-key-only forgery under chain and merkle: their documented limit', () => {
    expect(cell('compromise-child', 'chain')?.verdict).toBe('accepted');
    expect(cell('compromise-child', 'merkle')?.verdict).toBe('accepted');
  });
  it('rejects the child-key-only forgery under dag for want of the parent co-signature', () => {
    expect(cell('compromise-child', 'dag')?.reasons).toEqual(['COSIGNATURE_MISSING']);
  });
  it('mutates every receipt field at least once', () => {
    const fields = [
      'output_sha256',
      'output_len',
      'key_id',
      'deployer',
      'instance',
      'nonce',
      'issued_at',
      'not_after',
      'parent',
      'depth',
      'construction',
      'type',
      'cosigners',
      'ancestry_root',
    ];
    for (const f of fields)
      expect(
        ATTACKS.some((a) => a.id.startsWith(`f-${f}`)),
        f,
      ).toBe(true);
  });
  it('has a rejection case for every reason code', () => {
    const expected = new Set(cells.map((c) => c.expected));
    for (const code of Object.keys(REASON_CODES)) expect(expected.has(code as never), code).toBe(true);
  });
  it('prints one row per attack and one column per construction', () => {
    const table = formatMatrix(cells).split('\n');
    expect(table[0]).toMatch(/^attack\s+chain\s+merkle\s+dag$/);
    expect(table).toHaveLength(ATTACKS.length + 2);
    expect(table.find((l) => l.startsWith('child key only: claims a parent'))).toMatch(
      /accepted\s+accepted\s+rejected COSIGNATURE_MISSING/,
    );
  });
});

describe('where the matrix lives', () => {
  it('is not part of the public agent-witness/attest API, only of agent-witness/attest/testing', async () => {
    const api = await import('../../src/attest/index.js');
    expect(Object.keys(api).filter((name) => /matrix|attack|forge/i.test(name))).toEqual([]);
    const pkg = JSON.parse(readFileSync(join(import.meta.dirname, '..', '..', 'package.json'), 'utf8')) as {
      exports: Record<string, { default: string }>;
    };
    expect(pkg.exports['./attest/testing']?.default).toBe('./dist/attest/testing/index.js');
  });
});
