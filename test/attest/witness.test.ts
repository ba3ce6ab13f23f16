/**
 * The witness server (c2sp.org/tlog-witness add-checkpoint) over real HTTP with its real
 * state — one suite, run on a SQLite file and on a fresh PostgreSQL database: it
 * cosigns append-only extensions and refuses rollbacks, forks, bad proofs and unknown
 * or wrong keys with the spec's status codes, also after a restart.
 */
import { request } from 'node:http';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newSigningKey } from '../../src/attest/keys.js';
import { checkpointFor, parseCheckpoint } from '../../src/attest/tlog/checkpoint.js';
import { cosigner } from '../../src/attest/tlog/cosignature.js';
import { noteVerifierKey } from '../../src/attest/tlog/note.js';
import { serveWitness, Witness, type WitnessServer } from '../../src/attest/tlog/witness.js';
import { submitCheckpoint } from '../../src/attest/tlog/witness-client.js';
import { consistencyProofOfHashes, leafHash, rootOfHashes } from '../../src/core/tlog/merkle.js';
import { freshDatabase } from './postgres.js';

const ORIGIN = 'example.com/log';
const logKey = newSigningKey('log-operator');
const strangerKey = newSigningKey('stranger');
const witnessKey = newSigningKey('witness-operator');
const LOG_VKEY = noteVerifierKey(ORIGIN, Buffer.from(logKey.publicKey, 'base64url'));
const dir = mkdtempSync(join(tmpdir(), 'witness-tlog-'));

const entries = (n: number, tag = 'a') =>
  Array.from({ length: n }, (_, i) => leafHash(Buffer.from(`${tag === 'a' || i < 3 ? 'a' : tag} entry ${i}\n`)));
const LOG = entries(20);
const FORK = entries(20, 'b'); // the same first 3 entries, then others
const cp = (hashes: Buffer[], size: number) => checkpointFor(ORIGIN, size, rootOfHashes(hashes.slice(0, size)), logKey);
const body = (old: number, proof: Buffer[], note: string) =>
  `old ${old}\n${proof.map((p) => `${p.toString('base64')}\n`).join('')}\n${note}`;

const STATES: Array<[string, () => Promise<{ state: string; drop: () => Promise<void> }>]> = [
  [
    'SQLite',
    async () => ({
      state: join(mkdtempSync(join(dir, 'sqlite-')), 'witness.db'),
      drop: async () => {},
    }),
  ],
  [
    'PostgreSQL',
    async () => {
      const db = await freshDatabase('witness');
      return { state: db.url, drop: db.drop };
    },
  ],
];

for (const [kind, openState] of STATES)
  describe(`the witness on ${kind}`, () => {
    let witness: Witness;
    let server: WitnessServer;
    let vkey: string;

    async function start(): Promise<void> {
      witness = await Witness.open({
        logs: [LOG_VKEY],
        cosigner: cosigner(witnessKey, 'witness.example/w1'),
        state,
      });
      server = await serveWitness(witness);
      vkey = witness.cosignerKey;
    }
    async function stop(): Promise<void> {
      await server.close();
      await witness.close();
    }
    async function post(text: string): Promise<{ status: number; type: string; text: string }> {
      const res = await fetch(`${server.url}/add-checkpoint`, {
        method: 'POST',
        body: text,
      });
      return {
        status: res.status,
        type: res.headers.get('content-type') ?? '',
        text: await res.text(),
      };
    }

    let state: string;
    let drop: () => Promise<void>;
    beforeAll(async () => {
      ({ state, drop } = await openState());
      await start();
    }, 60_000);
    afterAll(async () => {
      await stop();
      await drop();
    });

    describe('add-checkpoint', () => {
      it('cosigns the first checkpoint from old size 0 with a timestamped cosignature that verifies under the witness key', async () => {
        const note = cp(LOG, 5);
        const before = Math.floor(Date.now() / 1000);
        const res = await post(body(0, [], note));
        expect(res.status).toBe(200);
        expect(res.text).toMatch(/^— witness\.example\/w1 \S+\n$/);
        const cosigned = parseCheckpoint(note + res.text, [LOG_VKEY, vkey]);
        expect(cosigned.cosignatures).toHaveLength(1);
        expect(cosigned.cosignatures[0]?.timestamp).toBeGreaterThanOrEqual(before);
      });
      it('cosigns an append-only extension with its consistency proof', async () => {
        expect((await post(body(5, consistencyProofOfHashes(LOG.slice(0, 9), 5), cp(LOG, 9)))).status).toBe(200);
        expect((await witness.latest(ORIGIN))?.size).toBe(9);
      });
      it('answers a stale old size with 409, text/x.tlog.size and the size it holds', async () => {
        const res = await post(body(0, [], cp(LOG, 12)));
        expect(res).toEqual({
          status: 409,
          type: 'text/x.tlog.size',
          text: '9\n',
        });
      });
      it('refuses a rollback: a smaller checkpoint is 400 from the held size, 409 from its own', async () => {
        expect((await post(body(9, [], cp(LOG, 5)))).status).toBe(400);
        expect((await post(body(5, [], cp(LOG, 5)))).status).toBe(409);
        expect((await witness.latest(ORIGIN))?.size).toBe(9);
      });
      it('refuses a fork with 422: the forked log proves consistency with its own past, not the held one', async () => {
        const res = await post(body(9, consistencyProofOfHashes(FORK.slice(0, 12), 9), cp(FORK, 12)));
        expect(res.status).toBe(422);
        expect((await witness.latest(ORIGIN))?.size).toBe(9);
      });
      it('refuses the same size with another root with 409', async () => {
        expect((await post(body(9, [], cp(FORK, 9)))).status).toBe(409);
      });
      it('refuses a proof with one flipped hash with 422', async () => {
        const proof = consistencyProofOfHashes(LOG.slice(0, 12), 9);
        (proof[0] as Buffer)[3] = ((proof[0] as Buffer)[3] as number) ^ 1;
        expect((await post(body(9, proof, cp(LOG, 12)))).status).toBe(422);
      });
      it('answers 404 for an unknown origin and 403 for a checkpoint not signed by the log key', async () => {
        expect(
          (await post(body(0, [], checkpointFor('other.example/log', 3, rootOfHashes(LOG.slice(0, 3)), logKey))))
            .status,
        ).toBe(404);
        expect(
          (
            await post(
              body(
                9,
                consistencyProofOfHashes(LOG.slice(0, 12), 9),
                checkpointFor(ORIGIN, 12, rootOfHashes(LOG.slice(0, 12)), strangerKey),
              ),
            )
          ).status,
        ).toBe(403);
        const tampered = cp(LOG, 12).replace('\n12\n', '\n13\n');
        expect((await post(body(9, consistencyProofOfHashes(LOG.slice(0, 12), 9), tampered))).status).toBe(403);
      });
      it('answers 400 for a malformed request', async () => {
        for (const bad of [
          '',
          'old 0\n\nexample.com/log',
          'old 09\n\nx\n',
          'old 1\nnot-base64\n\nx\n',
          `old 0\n${LOG[0]?.toString('base64')}\n\n${cp(LOG, 3)}`,
          `old 9\n\n${ORIGIN}\n12\n`,
        ]) {
          expect((await post(bad)).status, JSON.stringify(bad)).toBe(400);
        }
      });
      it('GET /checkpoint answers the newest cosigned checkpoint with the cosignature it answered, or 404 / 400 / 405', async () => {
        const other = 'example.org/none';
        expect((await fetch(`${server.url}/checkpoint?origin=${encodeURIComponent(other)}`)).status).toBe(404);
        expect((await fetch(`${server.url}/checkpoint`)).status).toBe(400);
        expect(
          (await fetch(`${server.url}/checkpoint?origin=${encodeURIComponent(ORIGIN)}`, { method: 'POST' })).status,
        ).toBe(405);
        const held = await witness.latest(ORIGIN); // what the tests before this one left cosigned
        expect(held?.size).toBeGreaterThan(0);
        const res = await fetch(`${server.url}/checkpoint?origin=${encodeURIComponent(ORIGIN)}`);
        expect(res.status).toBe(200);
        const parsed = parseCheckpoint(await res.text(), [LOG_VKEY, vkey]);
        expect(parsed.size).toBe(held?.size);
        expect(parsed.body).toBe(cp(LOG, held!.size).slice(0, cp(LOG, held!.size).indexOf('\n\n') + 1));
        expect(parsed.cosignatures).toHaveLength(1);
      });
      it('refuses a body over the limit with 413, a wrong Host with 403, and another path with 404', async () => {
        expect((await post(`old 0\n\n${'x'.repeat(70_000)}`)).status).toBe(413);
        expect((await fetch(`${server.url}/other`)).status).toBe(404);
        const status = await new Promise<number>((resolve, reject) => {
          const req = request(
            `${server.url}/add-checkpoint`,
            { method: 'POST', headers: { Host: 'evil.example' } },
            (res) => {
              res.resume();
              resolve(res.statusCode ?? 0);
            },
          );
          req.on('error', reject);
          req.end(body(0, [], cp(LOG, 3)));
        });
        expect(status).toBe(403);
      });
      it('keeps its state across a restart: the rolled-back log is still refused, the extension still accepted', async () => {
        await stop();
        await start();
        expect(await post(body(0, [], cp(LOG, 5)))).toMatchObject({
          status: 409,
          text: '9\n',
        });
        expect((await post(body(9, consistencyProofOfHashes(FORK.slice(0, 12), 9), cp(FORK, 12)))).status).toBe(422);
        expect((await post(body(9, consistencyProofOfHashes(LOG.slice(0, 12), 9), cp(LOG, 12)))).status).toBe(200);
      });
    });

    describe('submitCheckpoint', () => {
      it('retries once from the size a 409 names, and checks the cosignature against the witness key', async () => {
        const result = await submitCheckpoint(server.url, cp(LOG, 16), {
          oldSize: 0,
          leafHashes: LOG,
          witnessKeys: [vkey],
        });
        expect(result.ok).toBe(true);
        if (result.ok) expect(parseCheckpoint(result.note, [LOG_VKEY, vkey]).cosignatures).toHaveLength(1);
        expect((await witness.latest(ORIGIN))?.size).toBe(16);
      });
      it('reports a refusal with its status, and a cosignature by another key as not ok', async () => {
        const fork = await submitCheckpoint(server.url, cp(FORK, 18), {
          oldSize: 16,
          leafHashes: FORK,
        });
        expect(fork).toMatchObject({ ok: false, status: 422 });
        const wrongKey = noteVerifierKey('witness.example/w1', Buffer.from(strangerKey.publicKey, 'base64url'), 0x04);
        const other = await submitCheckpoint(server.url, cp(LOG, 17), {
          oldSize: 16,
          leafHashes: LOG,
          witnessKeys: [wrongKey],
        });
        expect(other).toMatchObject({ ok: false, status: 200 });
      });
    });

    it('lets one of two witnesses sharing the state win a race of two extensions from the same size, never both', async () => {
      const other = await Witness.open({
        logs: [LOG_VKEY],
        cosigner: cosigner(witnessKey, 'witness.example/w1'),
        state,
      });
      try {
        const from = (await witness.latest(ORIGIN))?.size as number;
        const [a, b] = await Promise.all([
          witness.addCheckpoint(Buffer.from(body(from, consistencyProofOfHashes(LOG.slice(0, 18), from), cp(LOG, 18)))),
          other.addCheckpoint(Buffer.from(body(from, consistencyProofOfHashes(LOG.slice(0, 19), from), cp(LOG, 19)))),
        ]);
        expect([a.status, b.status].sort()).toEqual([200, 409]);
        expect((await witness.latest(ORIGIN))?.size).toBe(a.status === 200 ? 18 : 19);
      } finally {
        await other.close();
      }
    });
  });
