/**
 * Every key-file mix-up gets one sentence naming the file and what it holds: a public
 * key or a key directory where a signing key file belongs, a key file where a key
 * directory belongs — never "run chmod 600" for a file that holds no secret, nor a
 * schema path such as "d: Invalid input".
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cli, sign, workspace } from './cli-helpers.js';

async function withPublicKey() {
  const cwd = await workspace();
  expect((await cli(cwd, 'keys', 'public', 'parent.key.json', '-o', 'parent.pub.json')).code).toBe(0);
  return cwd;
}

describe('key-file mix-ups', () => {
  it('attest sign --key PUBLIC.json says the file holds only a public key (exit 2)', async () => {
    const cwd = await withPublicKey();
    const r = await cli(cwd, 'attest', 'sign', '--key', 'parent.pub.json', '--output', 'answer.txt');
    expect(r.code).toBe(2);
    expect(r.err).toMatch(
      new RegExp(
        `^witness: ${join(cwd, 'parent.pub.json')} holds only the public key ed25519:[0-9a-f]{16}; signing needs the key file with its private key \\(member "d"\\), the one \`witness keys new\` wrote\\.\\n$`,
      ),
    );
  });

  it('attest sign --key DIRECTORY.json says it is a key directory, not a key file (exit 2)', async () => {
    const cwd = await workspace();
    const r = await cli(cwd, 'attest', 'sign', '--key', 'trusted.json', '--output', 'answer.txt');
    expect(r.code).toBe(2);
    expect(r.err).toBe(
      `witness: ${join(cwd, 'trusted.json')} is a key directory (the public keys a verifier trusts), not a key file; give the key file \`witness keys new\` wrote.\n`,
    );
  });

  for (const [file, holds] of [
    ['parent.key.json', 'signing key file'],
    ['parent.pub.json', 'public key file'],
  ] as const) {
    it(`verify --keys ${file} says it is a ${holds}, not a key directory (exit 2)`, async () => {
      const cwd = await withPublicKey();
      await sign(cwd, 'r.json', '--key', 'parent.key.json', '--output', 'answer.txt');
      const r = await cli(cwd, 'verify', 'r.json', '--output', 'answer.txt', '--keys', file);
      expect(r.code).toBe(2);
      expect(r.err).toMatch(
        new RegExp(
          `^witness: ${join(cwd, file)} is a ${holds} \\(ed25519:[0-9a-f]{16}\\), not a key directory; trust it in one with: witness keys add FILE --dir DIR.json, and give that directory\\.\\n$`,
        ),
      );
    });
  }

  it('a folder where a key file belongs is named as one (exit 2)', async () => {
    const cwd = await workspace();
    const r = await cli(cwd, 'attest', 'sign', '--key', '.', '--output', 'answer.txt');
    expect(r.code).toBe(2);
    expect(r.err).toBe(`witness: The key file ${cwd} is a directory; give a file.\n`);
  });
});
