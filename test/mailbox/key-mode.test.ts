/**
 * The mailbox refuses to serve with a signing key that other users can read (the
 * rule `attest` applies to deployer keys): whoever can read the key can sign
 * receipts, so such a key vouches for nothing.
 */
import { chmodSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createRuntime, verifyMailbox } from '../../src/mailbox/index.js';
import { cli, makeMailbox } from './helpers.js';

describe('signing key permissions', () => {
  for (const mode of [0o644, 0o640, 0o604]) {
    it(`serving refuses a key with mode ${mode.toString(8)}, naming chmod 600`, async () => {
      const mb = await makeMailbox(['a']);
      chmodSync(mb.keyPath, mode);
      await expect(createRuntime({ dir: mb.dir })).rejects.toThrow(`chmod 600 ${mb.keyPath}`);
    });
  }

  it('serve exits 2 with one line naming the fix', async () => {
    const mb = await makeMailbox(['a']);
    chmodSync(mb.keyPath, 0o644);
    const { err } = await cli(['mailbox', 'serve', '--dir', mb.dir, '--http', '--port', '0'], 2);
    expect(err).toBe(
      `witness: The mailbox signing key ${mb.keyPath} can be read by other users; run: chmod 600 ${mb.keyPath}\n`,
    );
  });

  it('serves with a 0600 key', async () => {
    const mb = await makeMailbox(['a']);
    await (await createRuntime({ dir: mb.dir })).store.close();
  });

  it('verify still checks receipts with a loose key, and warns that it vouches for less', async () => {
    const mb = await makeMailbox(['a']);
    chmodSync(mb.keyPath, 0o644);
    const report = await verifyMailbox(mb.dir);
    expect(report.ok).toBe(true);
    expect(report.warnings.join('\n')).toMatch(/can be read by other users.*chmod 600/);
  });
});
