import { describe, expect, it } from 'vitest';
import { DOMAIN_TAGS, signedMessage } from '../../src/attest/index.js';
import { canonicalize } from '../../src/core/canonical-json.js';

describe('domain tags', () => {
  const tags = Object.values(DOMAIN_TAGS);

  it('gives each of the five signed record kinds its own tag', () => {
    expect(Object.keys(DOMAIN_TAGS).sort()).toEqual([
      'callLogLine',
      'delegationEdge',
      'mailboxIntent',
      'releaseReceipt',
      'resultsCheckpoint',
      'simulationRecord',
    ]);
    expect(new Set(tags).size).toBe(tags.length);
  });

  it('ends every tag in its only NUL, so no tag is a prefix of another or of a JSON text', () => {
    for (const tag of tags) {
      expect(tag.endsWith('\0')).toBe(true);
      expect(tag.indexOf('\0')).toBe(tag.length - 1);
    }
    for (const a of tags) for (const b of tags) if (a !== b) expect(b.startsWith(a)).toBe(false);
  });

  it('keeps the receipt and edge tags receipts were always signed with', () => {
    expect(DOMAIN_TAGS.releaseReceipt).toBe('witness/receipt/v1\0');
    expect(DOMAIN_TAGS.delegationEdge).toBe('witness/edge/v1\0');
  });

  it('signs the same record as different bytes for different kinds', () => {
    const record = { v: 1, seq: 1 };
    expect(signedMessage('simulationRecord', record).toString()).toBe(`witness/sim-record/v1\0${canonicalize(record)}`);
    expect(signedMessage('resultsCheckpoint', record).equals(signedMessage('simulationRecord', record))).toBe(false);
  });
});
