import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { newSigningKey, writeKeyFile } from '../../src/attest/keys.js';
import { NOTE_TYPE, noteVerifierKey } from '../../src/attest/tlog/note.js';
import { memoryIo } from '../../src/cli/io.js';
import { runMain } from '../../src/cli/main.js';

const dir = mkdtempSync(join(tmpdir(), 'witness-anchor-cli-'));
const key = newSigningKey('log-operator');
writeKeyFile(join(dir, 'log.key.json'), key);
const pub = Buffer.from(key.publicKey, 'base64url');

describe('witness anchor', () => {
  it('vkey prints the note verifier key of a key file under a name, or its cosigner key', async () => {
    const io = memoryIo(dir);
    expect(await runMain(['anchor', 'vkey', '--key', 'log.key.json', '--name', 'example.com/log'], io)).toBe(0);
    expect(io.out).toBe(`${noteVerifierKey('example.com/log', pub)}\n`);
    const co = memoryIo(dir);
    expect(await runMain(['anchor', 'vkey', '--key', 'log.key.json', '--name', 'w.example/w1', '--cosigner'], co)).toBe(
      0,
    );
    expect(co.out).toBe(`${noteVerifierKey('w.example/w1', pub, NOTE_TYPE.cosignatureV1)}\n`);
  });
  it('vkey refuses a name with a space (exit 2, one line)', async () => {
    const io = memoryIo(dir);
    expect(await runMain(['anchor', 'vkey', '--key', 'log.key.json', '--name', 'a b'], io)).toBe(2);
    expect(io.err).toMatch(/not a note key name/);
  });
  it('serve without a log refuses to start (exit 2) and says what to give', async () => {
    const io = memoryIo(dir);
    expect(
      await runMain(['anchor', 'serve', '--key', 'log.key.json', '--name', 'w.example/w1', '--state', 'w.db'], io),
    ).toBe(2);
    expect(io.err).toMatch(/--log ORIGIN\+HASH\+KEY/);
  });
  it('serve --help shows an example', async () => {
    const io = memoryIo(dir);
    await runMain(['anchor', 'serve', '--help'], io);
    expect(io.out).toMatch(/Example:\n {2}\$ witness anchor serve --key witness\.key\.json/);
  });
});
