/**
 * Interop with Go's golang.org/x/mod/sumdb/note and sumdb/tlog (Debian's
 * golang-go and golang-golang-x-mod-dev; .ci/run installs them): Go checks our notes,
 * checkpoints and proofs, and signs notes and makes proofs that ours must accept. Both
 * directions have a negative case: one flipped byte is refused on both sides.
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newSigningKey } from '../../src/attest/keys.js';
import { checkpointFor, parseCheckpoint } from '../../src/attest/tlog/checkpoint.js';
import { noteVerifierKey, openNote, parseNoteVerifierKey } from '../../src/attest/tlog/note.js';
import {
  consistencyProofOfHashes,
  inclusionProofOfHashes,
  leafHash,
  rootOfHashes,
  verifyConsistency,
  verifyInclusion,
} from '../../src/core/tlog/merkle.js';

const GO_SOURCE = join(import.meta.dirname, '..', 'fixtures', 'tlog-go', 'main.go');
const ORIGIN = 'witness.test/log';
const N = 13;
const leaves = Array.from({ length: N }, (_, i) => Buffer.from(`entry ${i}\n`));
const hashes = leaves.map(leafHash);
const key = newSigningKey('log-operator');
const vkey = noteVerifierKey(ORIGIN, Buffer.from(key.publicKey, 'base64url'));

type Hash = string; // base64, as Go's tlog.Hash marshals
interface Inclusion {
  index: number;
  size: number;
  proof: Hash[];
  root: Hash;
}
interface Consistency {
  old: number;
  new: number;
  proof: Hash[];
  oldRoot: Hash;
  newRoot: Hash;
}
interface Answer {
  notesOk: boolean[];
  noteErrors: string[];
  checkpointOk: boolean[];
  inclusionOk: boolean[];
  consistencyOk: boolean[];
  vkey: string;
  note: string;
  roots: Hash[];
  inclusion: Inclusion[];
  consistency: Consistency[];
}

const b64 = (b: Buffer) => b.toString('base64');
const unb64 = (s: string) => Buffer.from(s, 'base64');
function flip(b: Buffer, at = 0): Buffer {
  const c = Buffer.from(b);
  c[at] = (c[at] as number) ^ 1;
  return c;
}

const note = checkpointFor(ORIGIN, N, rootOfHashes(hashes), key);
const flippedNote = note.replace(`\n${N}\n`, `\n${N - 1}\n`);
const inclusion: Inclusion[] = [0, 5, 12].map((index) => ({
  index,
  size: N,
  proof: inclusionProofOfHashes(hashes, index).map(b64),
  root: b64(rootOfHashes(hashes)),
}));
const badInclusion: Inclusion = {
  ...(inclusion[1] as Inclusion),
  proof: (inclusion[1] as Inclusion).proof.map((p, i) => (i === 0 ? b64(flip(unb64(p))) : p)),
};
const consistency: Consistency[] = [1, 4, 7, 8].map((old) => ({
  old,
  new: N,
  proof: consistencyProofOfHashes(hashes, old).map(b64),
  oldRoot: b64(rootOfHashes(hashes.slice(0, old))),
  newRoot: b64(rootOfHashes(hashes)),
}));
const badConsistency: Consistency = {
  ...(consistency[2] as Consistency),
  oldRoot: b64(flip(unb64((consistency[2] as Consistency).oldRoot), 31)),
};

let dir: string;
let answer: Answer;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'witness-tlog-go-'));
  copyFileSync(GO_SOURCE, join(dir, 'main.go'));
  const request = {
    vkey,
    notes: [note, flippedNote],
    leaves: leaves.map(b64),
    inclusion: [...inclusion, badInclusion],
    consistency: [...consistency, badConsistency],
  };
  const run = spawnSync('go', ['run', '.'], {
    cwd: dir,
    input: JSON.stringify(request),
    encoding: 'utf8',
    env: { ...process.env, GOPATH: '/usr/share/gocode', GO111MODULE: 'off', GOCACHE: join(dir, 'cache'), GOFLAGS: '' },
    timeout: 240_000,
  });
  if (run.error || run.status !== 0)
    throw new Error(
      `go run failed (is golang-go with golang-golang-x-mod-dev installed?): ${run.error?.message ?? ''} ${run.stderr}`,
    );
  answer = JSON.parse(run.stdout) as Answer;
}, 300_000);

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('Go verifies what Witness writes', () => {
  it('computes the same roots for every size', () => {
    expect(answer.roots).toEqual(hashes.map((_, i) => b64(rootOfHashes(hashes.slice(0, i + 1)))));
  });
  it("opens our checkpoint note with our verifier key text, and finds its root is Go's", () => {
    expect(answer.notesOk[0]).toBe(true);
    expect(answer.checkpointOk[0]).toBe(true);
  });
  it('refuses our note with one byte changed', () => {
    expect(answer.notesOk[1]).toBe(false);
    expect(answer.noteErrors[1]).toMatch(/invalid signature/);
  });
  it('accepts our inclusion and consistency proofs (tlog.CheckRecord, tlog.CheckTree) and refuses a flipped hash', () => {
    expect(answer.inclusionOk).toEqual([true, true, true, false]);
    expect(answer.consistencyOk).toEqual([true, true, true, true, false]);
  });
});

describe('Witness verifies what Go writes', () => {
  it("opens Go's signed checkpoint with Go's verifier key, and refuses it with one byte changed", () => {
    const cp = parseCheckpoint(answer.note, [answer.vkey]);
    expect(cp).toMatchObject({ origin: 'go.example/log', size: N });
    expect(cp.root.equals(rootOfHashes(hashes))).toBe(true);
    const changed = answer.note.replace('go.example/log\n', 'go.example/lof\n');
    expect(() => openNote(changed, [parseNoteVerifierKey(answer.vkey)])).toThrow(/does not verify/);
  });
  it("accepts Go's inclusion proofs (tlog.ProveRecord) for every leaf, and refuses one with a flipped hash", () => {
    for (const p of answer.inclusion)
      expect(
        verifyInclusion(leaves[p.index] as Buffer, p.index, p.size, p.proof.map(unb64), unb64(p.root)),
        `leaf ${p.index}`,
      ).toBe(true);
    const p = answer.inclusion[6] as Inclusion;
    expect(
      verifyInclusion(
        leaves[6] as Buffer,
        6,
        N,
        p.proof.map((h, i) => (i === 1 ? flip(unb64(h)) : unb64(h))),
        unb64(p.root),
      ),
    ).toBe(false);
  });
  it("accepts Go's consistency proofs (tlog.ProveTree) from every size, matching ours, and refuses one with a flipped hash", () => {
    for (const p of answer.consistency) {
      expect(
        verifyConsistency(p.old, p.new, unb64(p.oldRoot), unb64(p.newRoot), p.proof.map(unb64)),
        `${p.old}→${p.new}`,
      ).toBe(true);
      expect(p.proof, `${p.old}→${p.new}`).toEqual(consistencyProofOfHashes(hashes, p.old).map(b64));
    }
    const p = answer.consistency[4] as Consistency;
    expect(
      verifyConsistency(
        p.old,
        p.new,
        unb64(p.oldRoot),
        unb64(p.newRoot),
        p.proof.map((h, i) => (i === 0 ? flip(unb64(h), 7) : unb64(h))),
      ),
    ).toBe(false);
  });
});
