import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { newSigningKey } from '../../src/attest/keys.js';
import { checkLogAgainstCheckpoint } from '../../src/attest/tlog/check.js';
import { checkpointFor, parseCheckpoint } from '../../src/attest/tlog/checkpoint.js';
import { cosignatureVerifier, cosigner } from '../../src/attest/tlog/cosignature.js';
import {
  NOTE_TYPE,
  noteSigner,
  noteVerifierKey,
  openNote,
  parseNoteVerifierKey,
  signatureLines,
  signNote,
} from '../../src/attest/tlog/note.js';
import { isWitnessError } from '../../src/core/errors.js';
import { leafHash, rootOfHashes } from '../../src/core/tlog/merkle.js';

const ORIGIN = 'example.com/log';
const logKey = newSigningKey('log-operator');
const otherKey = newSigningKey('someone-else');
const pub = (k: { publicKey: string }) => Buffer.from(k.publicKey, 'base64url');
const VKEY = noteVerifierKey(ORIGIN, pub(logKey));

function problem(fn: () => unknown): unknown {
  try {
    fn();
  } catch (e) {
    if (isWitnessError(e, 'INVALID_INPUT')) return e.data?.problem;
    throw e;
  }
  return 'accepted';
}

describe('signed notes (c2sp.org/signed-note)', () => {
  const note = signNote('hello\nworld\n', [noteSigner(logKey, ORIGIN)]);
  const verifier = parseNoteVerifierKey(VKEY);
  it('signs a note that opens with its verifier key, and whose key id is SHA-256(name ‖ LF ‖ 0x01 ‖ key)[:4]', () => {
    const opened = openNote(note, [verifier]);
    expect(opened.text).toBe('hello\nworld\n');
    expect(opened.verified.map((s) => s.name)).toEqual([ORIGIN]);
    const id = createHash('sha256')
      .update(`${ORIGIN}\n`)
      .update(Buffer.from([1]))
      .update(pub(logKey))
      .digest()
      .subarray(0, 4)
      .toString('hex');
    expect(VKEY).toBe(`${ORIGIN}+${id}+${Buffer.concat([Buffer.from([1]), pub(logKey)]).toString('base64')}`);
    expect(note).toMatch(/^hello\nworld\n\n— example\.com\/log [A-Za-z0-9+/]+=*\n$/);
  });
  it('refuses a note whose text changed after signing (BAD_SIGNATURE)', () => {
    expect(problem(() => openNote(note.replace('world', 'World'), [verifier]))).toBe('BAD_SIGNATURE');
  });
  it('ignores signatures by unknown keys but refuses a note no known key signed (UNVERIFIED)', () => {
    const both = `${note}${signatureLines('hello\nworld\n', [noteSigner(otherKey, 'other.example/k')])}`;
    const opened = openNote(both, [verifier]);
    expect(opened.unverified.map((s) => s.name)).toEqual(['other.example/k']);
    expect(problem(() => openNote(note, [parseNoteVerifierKey(noteVerifierKey(ORIGIN, pub(otherKey)))]))).toBe(
      'UNVERIFIED',
    );
  });
  it('reads strictly: control characters, a missing final newline or blank line, bad base64, too many lines are MALFORMED', () => {
    const line = note.slice(note.indexOf('— '));
    for (const bad of [
      note.replace('hello', 'hel\rlo'),
      note.replace('hello', 'hel\tlo'),
      note.slice(0, -1),
      note.replace('\n\n', '\n'),
      note.replace(/ ([A-Za-z0-9+/]+=*)\n$/, ' $1==\n'),
      note.replace('— ', '-- '),
      `hello\nworld\n\n${line.repeat(101)}`,
      Buffer.concat([Buffer.from('h\xffi\n\n', 'latin1'), Buffer.from(line)]),
    ]) {
      expect(
        problem(() => openNote(bad, [verifier])),
        JSON.stringify(bad.toString()),
      ).toBe('MALFORMED');
    }
  });
  it('refuses to sign, under a note key, text that reads as a cosignature message', () => {
    expect(() => signNote('cosignature/v1\ntime 1\nx\n', [noteSigner(logKey, ORIGIN)])).toThrow(/cosignature/);
  });
  it('reads a verifier key whose base64 holds "+" (only the first two "+" separate)', () => {
    let vkey = '';
    for (let i = 0; i < 500 && !vkey.split('+')[3]; i++) vkey = noteVerifierKey(ORIGIN, pub(newSigningKey('k')));
    expect(vkey.split('+').length).toBeGreaterThan(3);
    expect(parseNoteVerifierKey(vkey).name).toBe(ORIGIN);
  });
  it('refuses a verifier key whose hash does not match its name and key', () => {
    const [name, id] = VKEY.split('+');
    const key = VKEY.slice(`${name}+${id}+`.length); // base64 may hold "+"
    expect(parseNoteVerifierKey(`${name}+${id}+${key}`).name).toBe(name);
    expect(() => parseNoteVerifierKey(`${name}+00000000+${key}`)).toThrow(/hash does not match/);
    expect(() => parseNoteVerifierKey(`other.example+${id}+${key}`)).toThrow(/hash does not match/);
  });
});

describe('checkpoints and cosignatures', () => {
  const hashes = Array.from({ length: 5 }, (_, i) => leafHash(Buffer.from(`line ${i}\n`)));
  const text = checkpointFor(ORIGIN, 5, rootOfHashes(hashes), logKey);
  it('writes origin, size, base64 root, and reads them back when the log key verifies it', () => {
    expect(text.split('\n').slice(0, 3)).toEqual([ORIGIN, '5', rootOfHashes(hashes).toString('base64')]);
    const cp = parseCheckpoint(text, [VKEY]);
    expect(cp).toMatchObject({ origin: ORIGIN, size: 5, extensions: [] });
    expect(cp.root.equals(rootOfHashes(hashes))).toBe(true);
  });
  it('refuses a size with a leading zero or a root that is not 32 bytes', () => {
    const signer = noteSigner(logKey, ORIGIN);
    expect(
      problem(() =>
        parseCheckpoint(signNote(`${ORIGIN}\n05\n${rootOfHashes(hashes).toString('base64')}\n`, [signer]), [VKEY]),
      ),
    ).toBe('MALFORMED');
    expect(problem(() => parseCheckpoint(signNote(`${ORIGIN}\n5\nAAAA\n`, [signer]), [VKEY]))).toBe('MALFORMED');
  });
  it('refuses a checkpoint signed only by a key not named as its origin', () => {
    const other = checkpointFor('other.example/log', 5, rootOfHashes(hashes), noteSigner(logKey, 'other.example/log'));
    const body = other.slice(0, other.indexOf('\n\n') + 1).replace('other.example/log', ORIGIN);
    const signedByOther = signNote(body, [noteSigner(logKey, 'other.example/log')]);
    expect(
      problem(() => parseCheckpoint(signedByOther, [VKEY, noteVerifierKey('other.example/log', pub(logKey))])),
    ).toBe('UNVERIFIED');
  });
  it('adds a timestamped cosignature/v1 that verifies under its 0x04 key and binds its time', () => {
    const witness = cosigner(otherKey, 'witness.example/w1', { clock: () => 1_679_315_147 });
    const body = text.slice(0, text.indexOf('\n\n') + 1);
    const cosigned = text + signatureLines(body, [witness]);
    const cp = parseCheckpoint(cosigned, [VKEY, witness.verifierKey]);
    expect(cp.cosignatures).toHaveLength(1);
    expect(cp.cosignatures[0]).toMatchObject({ name: 'witness.example/w1', timestamp: 1_679_315_147 });
    expect(parseNoteVerifierKey(witness.verifierKey).type).toBe(NOTE_TYPE.cosignatureV1);
    // The same key under type 0x01 is another key id: an Ed25519 note key cannot pass for the cosigner.
    expect(parseNoteVerifierKey(noteVerifierKey('witness.example/w1', pub(otherKey))).keyId).not.toBe(witness.keyId);
    // Another timestamp in the signature bytes breaks it.
    const line = cosigned.slice(cosigned.lastIndexOf('— '));
    const raw = Buffer.from(line.split(' ')[2] as string, 'base64');
    raw[11] = (raw[11] as number) ^ 1;
    const forged = cosigned.replace(line, `— witness.example/w1 ${raw.toString('base64')}\n`);
    expect(
      problem(() => parseCheckpoint(forged, [VKEY, cosignatureVerifier('witness.example/w1', pub(otherKey))])),
    ).toBe('BAD_SIGNATURE');
  });
});

describe('checkLogAgainstCheckpoint', () => {
  type Edit = 'append' | 'truncate' | 'rollback' | 'edit' | 'reorder' | 'fork' | 'none';
  it('accepts exactly the append-only extensions, and says TRUNCATED or INCONSISTENT otherwise', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.uint8Array({ maxLength: 6 }), { minLength: 1, maxLength: 40 }),
        fc.nat(),
        fc.constantFrom<Edit>('append', 'truncate', 'rollback', 'edit', 'reorder', 'fork', 'none'),
        fc.array(fc.uint8Array({ minLength: 7, maxLength: 9 }), { minLength: 1, maxLength: 5 }),
        fc.nat(),
        async (entries, pickSize, edit, extra, pick) => {
          const size = pickSize % (entries.length + 1);
          const cp = parseCheckpoint(
            checkpointFor(ORIGIN, size, rootOfHashes(entries.slice(0, size).map(leafHash)), logKey),
            [VKEY],
          );
          let log: Uint8Array[] = [...entries];
          // `extra` entries are 7–9 bytes, entries at most 6: a replacement always differs.
          if (edit === 'append') log.push(...extra);
          if (edit === 'truncate' && size > 0) log = log.slice(0, pick % size);
          if (edit === 'rollback' && size > 0) log = [...log.slice(0, pick % size), ...extra, ...entries];
          if (edit === 'edit' && size > 0) log[pick % size] = extra[0] as Uint8Array;
          if (edit === 'fork' && size > 0)
            log = [...log.slice(0, pick % size), ...extra.slice(0, 1), ...log.slice((pick % size) + 1), ...extra];
          if (edit === 'reorder' && size > 1) {
            const i = pick % (size - 1);
            if (Buffer.compare(log[i] as Uint8Array, log[i + 1] as Uint8Array) !== 0)
              [log[i], log[i + 1]] = [log[i + 1] as Uint8Array, log[i] as Uint8Array];
          }
          const isExtension =
            log.length >= size && log.slice(0, size).every((e, i) => Buffer.compare(e, entries[i] as Uint8Array) === 0);
          async function* stream() {
            for (const e of log) yield leafHash(e);
          }
          const result = await checkLogAgainstCheckpoint(pick % 2 ? stream() : log.map(leafHash), cp);
          if (isExtension) expect(result).toEqual({ ok: true, logSize: log.length });
          else if (log.length < size)
            expect(result).toMatchObject({ ok: false, code: 'TRUNCATED', firstMissing: log.length });
          else expect(result).toMatchObject({ ok: false, code: 'INCONSISTENT', size });
        },
      ),
      { numRuns: 300 },
    );
  });

  it('with several checkpoints of one log, the first changed entry lies in the range it names (exact when two kept sizes are one apart), and no matching prefix is past it', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.uint8Array({ maxLength: 6 }), { minLength: 1, maxLength: 40 }),
        fc.array(fc.nat(), { minLength: 1, maxLength: 6 }),
        fc.nat(),
        fc.uint8Array({ minLength: 7, maxLength: 9 }),
        fc.constantFrom('edit', 'truncate', 'fork'),
        async (entries, picks, pick, replacement, edit) => {
          const heads = picks.map((p) => {
            const size = p % (entries.length + 1);
            return parseCheckpoint(
              checkpointFor(ORIGIN, size, rootOfHashes(entries.slice(0, size).map(leafHash)), logKey),
              [VKEY],
            );
          });
          const at = pick % entries.length;
          let log: Uint8Array[] = [...entries];
          if (edit === 'edit') log[at] = replacement;
          if (edit === 'truncate') log = log.slice(0, at);
          if (edit === 'fork') log = [...log.slice(0, at), replacement];
          // The true first difference: `at` (an edit or a fork), or past the end of the cut log.
          const result = await checkLogAgainstCheckpoint(log.map(leafHash), heads);
          const covered = heads.filter((h) => h.size > at);
          if (covered.length === 0) return void expect(result.ok).toBe(true);
          // Only checkpoints past the log's end cover the change: the prefix they sign cannot be checked.
          if (covered.every((h) => h.size > log.length)) {
            const kept = heads.filter((h) => h.size <= at).map((h) => h.size);
            return void expect(result).toMatchObject({
              ok: false,
              code: 'TRUNCATED',
              firstMissing: log.length,
              intact: Math.max(0, ...kept),
            });
          }
          if (result.ok || result.code !== 'INCONSISTENT')
            throw new Error(`expected INCONSISTENT, got ${JSON.stringify(result)}`);
          expect(result.firstChanged.from).toBeLessThanOrEqual(at);
          expect(result.firstChanged.to).toBeGreaterThanOrEqual(at);
          expect(result.size).toBe(Math.min(...covered.map((h) => h.size)));
          if (heads.some((h) => h.size === at)) expect(result.firstChanged.from).toBe(at);
        },
      ),
      { numRuns: 300 },
    );
  });
});
