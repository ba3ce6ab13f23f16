/**
 * @module
 * The world the adversary matrix (attest.md §7) plays in: three deployers A → B → C
 * with real Ed25519 keys, a verifier directory that trusts them (plus a revoked and an
 * expired key of C), a fixed clock, and honest three-level paths built through the
 * real release-boundary signer and co-signer for each construction.
 */
import { sha256Hex } from '../../core/hash.js';
import { createCosigner, delegationGrant } from '../ancestry/dag.js';
import { ancestryRoot } from '../ancestry/merkle.js';
import { addKey, type DirectoryFile, emptyDirectory, KeyDirectory, revokeKey } from '../key-directory.js';
import { newSigningKey, publicJwk, type SigningKey } from '../keys.js';
import {
  type Construction,
  type Receipt,
  receiptDigest,
  type Signature,
  signingBytes,
  type UnsignedReceipt,
} from '../receipt.js';
import { signerFor } from '../signature.js';
import { createReleaseSigner } from '../signer.js';

export type AncestryConstruction = Exclude<Construction, 'none'>;
export const MATRIX_CONSTRUCTIONS: readonly AncestryConstruction[] = ['chain', 'merkle', 'dag'];

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

export interface MatrixWorld {
  now: number;
  keys: { a: SigningKey; b: SigningKey; c: SigningKey; cRevoked: SigningKey; cOld: SigningKey; attacker: SigningKey };
  directoryFile: DirectoryFile;
  directory: KeyDirectory;
  /** The output bytes C released at the leaf. */
  output: Buffer;
}

export interface HonestPath {
  /** Root (A) → middle (B) → leaf (C). */
  path: Receipt[];
  /** Another edge B → C (same parent, different output): a source of signatures to move. */
  sibling: Receipt;
}

export function createMatrixWorld(now = Date.parse('2026-06-01T12:00:00.000Z')): MatrixWorld {
  const keys = {
    a: newSigningKey('org-a'),
    b: newSigningKey('org-b'),
    c: newSigningKey('org-c'),
    cRevoked: newSigningKey('org-c'),
    cOld: newSigningKey('org-c'),
    attacker: newSigningKey('org-c'), // a key C never registered: not in the directory
  };
  const window = { notBefore: now - 30 * DAY, notAfter: now + 30 * DAY };
  let file = emptyDirectory();
  for (const key of [keys.a, keys.b, keys.c, keys.cRevoked]) file = addKey(file, publicJwk(key), window);
  file = addKey(file, publicJwk(keys.cOld), { notBefore: now - 30 * DAY, notAfter: now - DAY });
  file = revokeKey(file, keys.cRevoked.kid, now - 2 * HOUR);
  return {
    now,
    keys,
    directoryFile: file,
    directory: new KeyDirectory(file),
    output: Buffer.from('{"task":"t-42","answer":"the report, exactly as released"}\n'),
  };
}

/** Honest A → B → C path for `construction`, issued shortly before `world.now`. */
export async function honestPath(world: MatrixWorld, construction: AncestryConstruction): Promise<HonestPath> {
  const { a, b, c } = world.keys;
  const root = await _signer(world, a, 'agent-a', 30).releaseOutput(Buffer.from('task for B'), { construction });
  const middle = await _signer(world, b, 'agent-b', 20, [root]).releaseOutput(Buffer.from('task for C'), {
    ancestors: [root],
    construction,
  });
  const leaf = await _signer(world, c, 'agent-c', 10, [middle]).releaseOutput(world.output, {
    ancestors: [root, middle],
    construction,
  });
  const sibling = await _signer(world, c, 'agent-c2', 9, [middle]).releaseOutput(Buffer.from('another answer'), {
    ancestors: [root, middle],
    construction,
  });
  return { path: [root, middle, leaf], sibling };
}

function _signer(world: MatrixWorld, key: SigningKey, instance: string, minutesAgo: number, parents: Receipt[] = []) {
  const parent = parents.at(-1);
  const cosigners = { 'org-a': world.keys.a, 'org-b': world.keys.b } as Record<string, SigningKey>;
  return createReleaseSigner({
    key,
    instance,
    clock: () => world.now - minutesAgo * 60_000,
    cosign: (edge, deployer) => {
      const cosignerKey = cosigners[deployer];
      if (!cosignerKey || !parent) throw new Error(`no co-signer for ${deployer}`);
      return createCosigner(
        cosignerKey,
        delegationGrant({
          parentDigest: receiptDigest(parent),
          childDeployer: key.deployer,
          expiresAt: world.now + HOUR,
          now: () => world.now,
        }),
      ).cosign(edge);
    },
  });
}

/**
 * A record signed with whatever keys an attacker holds: `signers[0]` as the releasing
 * key, the rest as co-signatures. No grant check — that is what compromise means.
 */
export function forge(record: UnsignedReceipt, signers: readonly SigningKey[]): Receipt {
  const bytes = signingBytes(record);
  const signatures: Signature[] = signers.map((k) => ({
    key_id: k.kid,
    alg: 'Ed25519',
    sig: signerFor(k).sign(bytes),
  }));
  return { ...record, signatures };
}

/** The unsigned record of a new leaf under `ancestors`, as a compromised child would write it. */
export function forgedLeaf(
  world: MatrixWorld,
  ancestors: readonly Receipt[],
  construction: AncestryConstruction,
  key: SigningKey,
  overrides: Partial<UnsignedReceipt> = {},
): UnsignedReceipt {
  const parent = ancestors.at(-1) as Receipt;
  const isEdge = construction === 'dag';
  return {
    v: 1,
    type: isEdge ? 'edge' : 'output',
    output_sha256: sha256Hex(world.output),
    output_len: world.output.length,
    deployer: key.deployer,
    instance: 'agent-c',
    key_id: key.kid,
    issued_at: new Date(world.now - 5 * 60_000).toISOString(),
    not_after: new Date(world.now + HOUR).toISOString(),
    nonce: 'Zm9yZ2VkLW5vbmNlLTEyMzQ1Ng',
    parent: receiptDigest(parent),
    depth: ancestors.length,
    construction,
    cosigners: isEdge ? [parent.deployer] : [],
    ...(construction === 'merkle' ? { ancestry_root: ancestryRoot(ancestors) } : {}),
    ...overrides,
  };
}
