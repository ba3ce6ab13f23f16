/**
 * The bytes of a signed results file are pinned: a sweep with a fixed key writes the
 * file the writer wrote when it built each line as a string (digests below), and its
 * checkpoint names the chain head and RFC 6962 root recomputed here from the lines by
 * the definitions alone (canonicalize, receiptDigest, merkleRoot), not by the writer's
 * code. A faster writer must keep both.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { SigningKey } from '../../src/attest/keys.js';
import { canonicalize } from '../../src/core/canonical-json.js';
import { sha256Hex } from '../../src/core/hash.js';
import { merkleRoot } from '../../src/core/tlog/merkle.js';
import { ENGINE } from '../../src/core/version.js';
import { preset } from '../../src/sim/experiment/presets.js';
import { runExperiment } from '../../src/sim/experiment/run.js';
import { parseExperiment } from '../../src/sim/experiment/schema.js';
import { checkpointPath, receiptDigest } from '../../src/sim/transcript/format.js';

// A key for this test only (its files are thrown away).
const KEY: SigningKey = {
  alg: 'ed25519',
  kid: 'ed25519:ad7c8d6c285f03ae',
  deployer: 'golden',
  publicKey: 'RXDU1-vbECD_BDXKR-s5ZkCmBjuJPieOMRw_5310vnY',
  privateKey: 'JB96EhM_x111b2xJKmjTyxRv14Z80wbdMy6qiYAp3Z8',
};

// SHA-256 of the file with the engine in each receipt written as "ENGINE", so a version bump keeps them.
const PINNED = [
  {
    name: 'smoke',
    runs: 5,
    lines: 20,
    bytes: 53156,
    sha256: '61cd00bc004d0f872f3b965a9836c499becf4aa2865971d0505674e1c16d7d71',
  },
  {
    name: 'paper-benign',
    runs: 30,
    lines: 180,
    bytes: 297620,
    sha256: '06e7b3b7a5dc65653f2eee8c4c04970b7407f2caabaf6e114768bcd22c15ef76',
  },
] as const;

describe('a signed results file', () => {
  for (const pin of PINNED) {
    for (const checkpointMs of [1000, 0]) {
      it(`of ${pin.name} × ${pin.runs} has the pinned bytes and a checkpoint of its lines (a checkpoint every ${checkpointMs} ms)`, async () => {
        const out = join(mkdtempSync(join(tmpdir(), 'witness-bytes-')), 'r.jsonl');
        await runExperiment({
          experiment: parseExperiment({ ...preset(pin.name), runs: pin.runs }),
          out,
          keepRecords: false,
          sign: { key: KEY, checkpointMs },
        });
        const text = readFileSync(out, 'utf8').replaceAll(`"engine":${JSON.stringify(ENGINE)}`, '"engine":"ENGINE"');
        expect({ bytes: Buffer.byteLength(text), sha256: sha256Hex(text) }).toEqual({
          bytes: pin.bytes,
          sha256: pin.sha256,
        });
        const digests = readFileSync(out, 'utf8')
          .split('\n')
          .filter(Boolean)
          .map((line) => {
            const { sig: _sig, ...receipt } = JSON.parse(line).receipt;
            return receiptDigest(canonicalize(receipt));
          });
        const [cp] = JSON.parse(readFileSync(checkpointPath(out), 'utf8')).checkpoints;
        const root = merkleRoot(digests.map((d) => Buffer.from(d, 'hex')));
        expect({ count: cp.count, head: cp.head, root: cp.root }).toEqual({
          count: pin.lines,
          head: digests.at(-1),
          root: root.toString('hex'),
        });
        expect(cp.note.split('\n').slice(1, 3)).toEqual([String(pin.lines), root.toString('base64')]);
      });
    }
  }
});
