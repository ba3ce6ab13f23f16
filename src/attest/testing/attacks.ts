/**
 * @module
 * The attacks of the adversary matrix (attest.md §7): every receipt field mutated one
 * at a time, signatures flipped and moved between edges, ancestors removed, reordered
 * and duplicated, key compromise (child only, parent only, both), replay, revoked and
 * out-of-window keys. Field mutations need no key (the attacker edits JSON); the
 * compromise rows re-sign with exactly the keys the attacker holds.
 */
import { randomBytes } from 'node:crypto';
import type { Attack, Expectation } from './matrix.js';
import type { SigningKey } from '../keys.js';
import { type AncestryConstruction, forge, forgedLeaf, type HonestPath, type MatrixWorld } from './world.js';
import { type Receipt, receiptDigest, type Signature, type UnsignedReceipt } from '../receipt.js';
import { MAX_PATH_LENGTH } from '../verify.js';

type _Mutable = Record<string, unknown> & Receipt;

const all = (e: Expectation): Record<AncestryConstruction, Expectation> => ({ chain: e, merkle: e, dag: e });
const dagOnly = (e: Expectation): Record<AncestryConstruction, Expectation> => ({ chain: null, merkle: null, dag: e });
const flipChar = (s: string, at = 10) => s.slice(0, at) + (s[at] === 'A' ? 'B' : 'A') + s.slice(at + 1);
const ISO = (ms: number) => new Date(ms).toISOString();

/** A copy of the honest path with the leaf changed by `edit`. */
function leafEdited(h: HonestPath, edit: (leaf: _Mutable) => void): unknown[] {
  const path = structuredClone(h.path) as _Mutable[];
  edit(path[path.length - 1] as _Mutable);
  return path;
}

/** A field mutation attack: the leaf's field edited, nothing re-signed. */
function field(
  id: string,
  title: string,
  expect: Record<AncestryConstruction, Expectation>,
  edit: (leaf: _Mutable, c: AncestryConstruction) => void,
): Attack {
  return {
    id,
    title,
    expect,
    build: (w, h, c) => ({ path: leafEdited(h, (leaf) => edit(leaf, c)), output: w.output }),
  };
}

export const ATTACKS: readonly Attack[] = [
  {
    id: 'honest',
    title: 'honest path A → B → C',
    expect: all('accepted'),
    build: (w, h) => ({ path: h.path, output: w.output }),
  },
  {
    id: 'output-byte',
    title: 'output: one byte flipped',
    expect: all('OUTPUT_MISMATCH'),
    build: (w, h) => {
      const output = Buffer.from(w.output);
      output[3] = (output[3] as number) ^ 0x01;
      return { path: h.path, output };
    },
  },
  {
    id: 'output-truncated',
    title: 'output: last byte cut',
    expect: all('LENGTH_MISMATCH'),
    build: (w, h) => ({ path: h.path, output: w.output.subarray(0, -1) }),
  },
  field('f-output_sha256', 'field output_sha256', all('OUTPUT_MISMATCH'), (l) => {
    l.output_sha256 = receiptDigest(l);
  }),
  field('f-output_len', 'field output_len', all('LENGTH_MISMATCH'), (l) => {
    l.output_len += 1;
  }),
  field('f-key_id', 'field key_id (unknown key)', all('UNKNOWN_KEY'), (l) => {
    l.key_id = 'ed25519:0000000000000000';
  }),
  field('f-deployer', 'field deployer', all('WRONG_DEPLOYER'), (l) => {
    l.deployer = 'org-b';
  }),
  field('f-instance', 'field instance', all('BAD_SIGNATURE'), (l) => {
    l.instance = 'agent-evil';
  }),
  field('f-nonce', 'field nonce', all('BAD_SIGNATURE'), (l) => {
    l.nonce = randomBytes(16).toString('base64url');
  }),
  field('f-nonce-short', 'field nonce (64 bits)', all('MALFORMED'), (l) => {
    l.nonce = 'AAAAAAAAAAA';
  }),
  field('f-issued_at', 'field issued_at (1 s earlier)', all('BAD_SIGNATURE'), (l) => {
    l.issued_at = ISO(Date.parse(l.issued_at) - 1000);
  }),
  field('f-issued_at-future', 'field issued_at (in the future)', all('NOT_YET_VALID'), (l) => {
    l.issued_at = ISO(Date.parse(l.not_after) - 1000);
  }),
  field('f-not_after-extended', 'field not_after (extended)', all('BAD_SIGNATURE'), (l) => {
    l.not_after = ISO(Date.parse(l.not_after) + 86_400_000);
  }),
  field('f-not_after-past', 'field not_after (moved into the past)', all('EXPIRED'), (l) => {
    l.not_after = ISO(Date.parse(l.issued_at) + 1000);
  }),
  field('f-parent', 'field parent digest', all('PARENT_DIGEST_MISMATCH'), (l) => {
    l.parent = receiptDigest(l);
  }),
  field('f-depth', 'field depth', all('DEPTH_MISMATCH'), (l) => {
    l.depth = 1;
  }),
  field('f-construction', 'field construction', all('CONSTRUCTION_MISMATCH'), (l, c) => {
    l.construction = c === 'chain' ? 'merkle' : 'chain';
  }),
  field('f-type', 'field type', all('CONSTRUCTION_MISMATCH'), (l) => {
    l.type = l.type === 'edge' ? 'output' : 'edge';
  }),
  field(
    'f-cosigners',
    'field cosigners (policy)',
    { chain: 'CONSTRUCTION_MISMATCH', merkle: 'CONSTRUCTION_MISMATCH', dag: 'COSIGNATURE_MISSING' },
    (l, c) => {
      l.cosigners = c === 'dag' ? [] : ['org-b'];
    },
  ),
  field(
    'f-ancestry_root',
    'field ancestry_root',
    { chain: 'CONSTRUCTION_MISMATCH', merkle: 'PARENT_DIGEST_MISMATCH', dag: 'CONSTRUCTION_MISMATCH' },
    (l) => {
      l.ancestry_root = receiptDigest(l);
    },
  ),
  field('f-extra-key', 'receipt carries its own public key', all('MALFORMED'), (l) => {
    l.jwk = { kty: 'OKP', crv: 'Ed25519', x: randomBytes(32).toString('base64url') };
  }),
  field('sig-bytes', 'signature bytes flipped', all('BAD_SIGNATURE'), (l) => {
    const sig = l.signatures[0] as { sig: string };
    sig.sig = flipChar(sig.sig, 20);
  }),
  field('cosig-bytes', 'co-signature bytes flipped', dagOnly('COSIGNATURE_INVALID'), (l) => {
    const sig = l.signatures[1] as { sig: string };
    sig.sig = flipChar(sig.sig, 20);
  }),
  {
    id: 'sig-moved',
    title: "signature moved from C's other receipt",
    expect: all('BAD_SIGNATURE'),
    build: (w, h) => ({
      path: leafEdited(
        h,
        (l) => (l.signatures[0] = structuredClone(h.sibling.signatures[0]) as Receipt['signatures'][0]),
      ),
      output: w.output,
    }),
  },
  {
    id: 'cosig-moved',
    title: 'parent co-signature moved from a sibling edge',
    expect: dagOnly('COSIGNATURE_INVALID'),
    build: (w, h) => ({
      path: leafEdited(
        h,
        (l) => (l.signatures[1] = structuredClone(h.sibling.signatures[1]) as Receipt['signatures'][0]),
      ),
      output: w.output,
    }),
  },
  {
    id: 'anc-removed',
    title: 'ancestor removed (middle)',
    expect: all('PARENT_DIGEST_MISMATCH'),
    build: (w, h) => ({ path: [h.path[0], h.path[2]], output: w.output }),
  },
  {
    id: 'anc-reordered',
    title: 'ancestors reordered',
    expect: all('PARENT_DIGEST_MISMATCH'),
    build: (w, h) => ({ path: [h.path[1], h.path[0], h.path[2]], output: w.output }),
  },
  {
    id: 'root-missing',
    title: 'root left out',
    expect: all('PARENT_MISSING'),
    build: (w, h) => ({ path: h.path.slice(1), output: w.output }),
  },
  {
    id: 'path-too-long',
    title: `path of ${MAX_PATH_LENGTH + 1} receipts (one too many)`,
    expect: all('PATH_TOO_LONG'),
    build: (w, h) => ({
      path: Array.from({ length: MAX_PATH_LENGTH + 1 }, (_, i) => h.path[Math.min(i, 2)]),
      output: w.output,
    }),
  },
  {
    id: 'edge-duplicated',
    title: 'edge duplicated',
    expect: all('PARENT_DIGEST_MISMATCH'),
    build: (w, h) => ({ path: [h.path[0], h.path[1], h.path[1], h.path[2]], output: w.output }),
  },
  {
    id: 'json-duplicate-key',
    title: 'receipt JSON with a duplicate key',
    expect: all('NON_CANONICAL'),
    build: (w, h) => {
      const leaf = JSON.stringify(h.path[2]);
      return { path: [h.path[0], h.path[1], `${leaf.slice(0, -1)},"depth":2}`], output: w.output };
    },
  },
  {
    id: 'key-not-in-directory',
    title: "signed by a key outside the verifier's directory",
    expect: all('UNKNOWN_KEY'),
    build: (w, h, c) => ({
      path: [
        h.path[0],
        h.path[1],
        _signedBy(w, c, forgedLeaf(w, h.path.slice(0, 2), c, w.keys.attacker), w.keys.attacker),
      ],
      output: w.output,
    }),
  },
  {
    id: 'compromise-child',
    title: 'child key only: claims a parent',
    expect: { chain: 'accepted', merkle: 'accepted', dag: 'COSIGNATURE_MISSING' },
    build: (w, h, c) => ({
      path: [h.path[0], h.path[1], forge(forgedLeaf(w, h.path.slice(0, 2), c, w.keys.c), [w.keys.c])],
      output: w.output,
    }),
  },
  {
    id: 'compromise-child-fake-cosig',
    title: 'child key only: fakes the parent co-signature',
    expect: dagOnly('COSIGNATURE_INVALID'),
    build: (w, h, c) => {
      const leaf = forge(forgedLeaf(w, h.path.slice(0, 2), c, w.keys.c), [w.keys.c]);
      leaf.signatures.push({ key_id: w.keys.b.kid, alg: 'Ed25519', sig: leaf.signatures[0]?.sig as string });
      return { path: [h.path[0], h.path[1], leaf], output: w.output };
    },
  },
  {
    id: 'downgrade',
    title: 'child key only, downgraded to chain',
    expect: dagOnly('CONSTRUCTION_MISMATCH'),
    build: (w, h) => ({
      path: [
        h.path[0],
        h.path[1],
        forge(forgedLeaf(w, h.path.slice(0, 2), 'chain', w.keys.c, { construction: 'chain' }), [w.keys.c]),
      ],
      output: w.output,
    }),
  },
  {
    id: 'compromise-parent',
    title: "parent key only: forges the child's output",
    expect: all('BAD_SIGNATURE'),
    build: (w, h, c) => ({ path: [h.path[0], h.path[1], _parentForgesChild(w, h, c)], output: w.output }),
  },
  {
    id: 'compromise-both',
    title: 'parent and child keys both',
    expect: all('accepted'),
    build: (w, h, c) => ({
      path: [h.path[0], h.path[1], _signedBy(w, c, forgedLeaf(w, h.path.slice(0, 2), c, w.keys.c), w.keys.c)],
      output: w.output,
    }),
  },
  {
    id: 'replay',
    title: 'replay to a verifier sharing the nonce store',
    expect: all('REPLAY'),
    build: (w, h) => ({ path: h.path, output: w.output, replay: true }),
  },
  {
    id: 'revoked-key',
    title: 'signed by a key revoked before issue',
    expect: all('REVOKED_KEY'),
    build: (w, h, c) => ({
      path: [
        h.path[0],
        h.path[1],
        _signedBy(w, c, forgedLeaf(w, h.path.slice(0, 2), c, w.keys.cRevoked), w.keys.cRevoked),
      ],
      output: w.output,
    }),
  },
  {
    id: 'key-out-of-window',
    title: "signed after the key's window ended",
    expect: all('KEY_NOT_VALID_AT_ISSUE'),
    build: (w, h, c) => ({
      path: [h.path[0], h.path[1], _signedBy(w, c, forgedLeaf(w, h.path.slice(0, 2), c, w.keys.cOld), w.keys.cOld)],
      output: w.output,
    }),
  },
  {
    id: 'expired',
    title: 'verified after not_after',
    expect: all('EXPIRED'),
    build: (w, h) => ({ path: h.path, output: w.output, options: { now: w.now + 2 * 3_600_000 } }),
  },
  {
    id: 'not-yet-valid',
    title: 'verified before issued_at',
    expect: all('NOT_YET_VALID'),
    build: (w, h) => ({ path: h.path, output: w.output, options: { now: w.now - 3_600_000 } }),
  },
];

/** The forged record signed by `releasing`, and for dag co-signed with the real parent key B (which the attacker holds or does not need). */
function _signedBy(w: MatrixWorld, c: AncestryConstruction, record: UnsignedReceipt, releasing: SigningKey): Receipt {
  return forge(record, c === 'dag' ? [releasing, w.keys.b] : [releasing]);
}

/** Holding only B's key: the releasing signature is made with B's key but labelled as C's. */
function _parentForgesChild(w: MatrixWorld, h: HonestPath, c: AncestryConstruction): Receipt {
  const record = forgedLeaf(w, h.path.slice(0, 2), c, w.keys.c);
  const forged = forge(record, c === 'dag' ? [w.keys.b, w.keys.b] : [w.keys.b]);
  (forged.signatures[0] as Signature).key_id = w.keys.c.kid;
  return forged;
}
