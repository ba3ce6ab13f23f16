/**
 * `verify --witness` and the submitter around it, with a real witness (the library's
 * own, served over HTTP in this process) and a real `mailbox serve --http` process: a
 * cosigned checkpoint kept in the mailbox satisfies --witness; another witness's key
 * is NOT_WITNESSED (never valid); an old cosignature is WITNESS_STALE; a witness that
 * hangs or is down neither stops the server nor holds up its sends.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newSigningKey } from '../../src/attest/keys.js';
import { cosigner } from '../../src/attest/tlog/cosignature.js';
import { serveWitness, Witness, type WitnessServer } from '../../src/attest/tlog/witness.js';
import {
  listWitnessed,
  mailboxVerifierKey,
  openStore,
  verifyMailbox,
  WitnessSubmitter,
} from '../../src/mailbox/index.js';
import { call, cli, httpClient, makeMailbox, startHttp, type TestMailbox, tempDir, waitFor } from './helpers.js';

let mb: TestMailbox;
let witness: Witness;
let server: WitnessServer;
const other = cosigner(newSigningKey('other-operator'), 'other.example/w').verifierKey;

beforeAll(async () => {
  mb = await makeMailbox(['alice', 'bob'], { store: 'sqlite' });
  ({ w: witness, ws: server } = await witnessOf(mb.dir, 'w'));
}, 60_000);

/** A witness of the mailbox at `dir`, run by `operator` (`<operator>.example/w`), served over HTTP in this process. */
async function witnessOf(dir: string, operator: string): Promise<{ w: Witness; ws: WitnessServer }> {
  const w = await Witness.open({
    logs: [mailboxVerifierKey(dir)],
    cosigner: cosigner(newSigningKey(`${operator}-operator`), `${operator}.example/w`),
    state: join(tempDir('witness-state-'), 'w.db'),
  });
  return { w, ws: await serveWitness(w) };
}

afterAll(async () => {
  await server?.close();
  await witness?.close();
  await mb?.cleanup();
});

describe('verify --witness', () => {
  it('a checkpoint the submitter kept satisfies --witness; another witness is NOT_WITNESSED; an old one WITNESS_STALE', async () => {
    const submitter = await WitnessSubmitter.start(mb.dir, {
      witnesses: [{ url: server.url, vkey: witness.cosignerKey }],
      everyReceipts: 3,
      everySeconds: 3600,
    });
    const store = submitter.watch(await openStore(mb.dir));
    for (let i = 0; i < 7; i++) await store.send('alice', { to: 'bob', body: `m${i}` });
    await store.close();
    await submitter.close();
    const kept = listWitnessed(mb.dir);
    expect(kept).toHaveLength(1);
    expect(kept[0]?.size).toBe(7);

    expect((await cli(['verify', mb.dir, '--witness', witness.cosignerKey])).out).toMatch(
      /^valid: mailbox .*; the call log extends the checkpoint \S+ cosigned \(7 entries\)\.$/m,
    );
    const missing = await cli(['verify', mb.dir, '--witness', other, '--json'], 1);
    const problems = (JSON.parse(missing.out) as { problems: Array<{ code: string; message: string }> }).problems;
    expect(problems.map((p) => p.code)).toEqual(['NOT_WITNESSED']);
    expect(problems[0]?.message).toMatch(
      /No checkpoint of witness\.mailbox\/\S+ cosigned by the witness other\.example\/w/,
    );

    const report = await verifyMailbox(mb.dir, {
      witnesses: [{ vkey: witness.cosignerKey, withinSeconds: 600 }],
      now: Math.floor(Date.now() / 1000) + 2 * 3600,
    });
    expect(report.problems.map((p) => p.code)).toEqual(['WITNESS_STALE']);
    expect(report.problems[0]?.message).toMatch(/witnessed 2h( \d+m)? ago.*older than --witnessed-within 10m/);
  });

  it('an HMAC mailbox is witnessed through its checkpoint key; a cut end is then TRUNCATED', async () => {
    const hmac = await makeMailbox(['alice', 'bob'], { alg: 'hmac-sha256' });
    const { w, ws } = await witnessOf(hmac.dir, 'hmac-w');
    try {
      const submitter = await WitnessSubmitter.start(hmac.dir, {
        witnesses: [{ url: ws.url, vkey: w.cosignerKey }],
        everyReceipts: 100,
        everySeconds: 3600,
      });
      const store = submitter.watch(await openStore(hmac.dir));
      for (let i = 0; i < 4; i++) await store.send('alice', { to: 'bob', body: `h${i}` });
      await store.close();
      await submitter.close(); // the final checkpoint: size 4
      expect(listWitnessed(hmac.dir)[0]?.size).toBe(4);
      expect((await cli(['verify', hmac.dir, '--witness', w.cosignerKey, '--witness-url', ws.url])).out).toMatch(
        /^valid: mailbox/,
      );
      // Cut the last call (and its inbox line) as the log's holder could: the witness still holds size 4.
      const calls = join(hmac.dir, 'calls.jsonl');
      const lines = readFileSync(calls, 'utf8')
        .split('\n')
        .filter((l) => l !== '');
      writeFileSync(calls, `${lines.slice(0, -1).join('\n')}\n`);
      const inbox = join(hmac.dir, 'inbox', 'bob.jsonl');
      const mail = readFileSync(inbox, 'utf8')
        .split('\n')
        .filter((l) => l !== '');
      writeFileSync(inbox, `${mail.slice(0, -1).join('\n')}\n`);
      const cut = await cli(['verify', hmac.dir, '--witness', w.cosignerKey, '--witness-url', ws.url, '--json'], 1);
      expect((JSON.parse(cut.out) as { problems: Array<{ code: string }> }).problems.map((p) => p.code)).toContain(
        'TRUNCATED',
      );
    } finally {
      await ws.close();
      await w.close();
      await hmac.cleanup();
    }
  });

  it('submits once the store has committed every-receipts receipts, failed calls included, with no interval due', async () => {
    const counted = await makeMailbox(['alice', 'bob'], { store: 'sqlite' });
    const { w, ws } = await witnessOf(counted.dir, 'count');
    const submitter = await WitnessSubmitter.start(counted.dir, {
      witnesses: [{ url: ws.url, vkey: w.cosignerKey }],
      everyReceipts: 3,
      everySeconds: 3600,
    });
    const store = submitter.watch(await openStore(counted.dir));
    try {
      await store.send('alice', { to: 'bob', body: 'one' });
      await expect(store.send('alice', { to: 'nobody', body: 'two' })).rejects.toThrow(); // a failed call's receipt counts
      await store.send('alice', { to: 'bob', body: 'three' });
      // Three receipts: a round starts without the interval or a shutdown, and the witness cosigns size 3.
      await waitFor(
        () => listWitnessed(counted.dir)[0]?.size === 3,
        10_000,
        () => `a cosigned size of 3 (kept: ${JSON.stringify(listWitnessed(counted.dir))})`,
      );
    } finally {
      await store.close();
      await submitter.close();
      await ws.close();
      await w.close();
      await counted.cleanup();
    }
  });

  it("a mistake found on the submitter's thread reaches the caller as the same usage error (serve: exit 2)", async () => {
    const logKey = mailboxVerifierKey(mb.dir); // a log key (type 0x01) where a cosigner key belongs
    const wrongKey = WitnessSubmitter.start(mb.dir, { witnesses: [{ url: server.url, vkey: logKey }] });
    await expect(wrongKey).rejects.toMatchObject({ code: 'USAGE', message: expect.stringMatching(/is a log key/) });
    const wrongUrl = WitnessSubmitter.start(mb.dir, { witnesses: [{ url: 'ftp://x', vkey: witness.cosignerKey }] });
    await expect(wrongUrl).rejects.toMatchObject({
      code: 'USAGE',
      message: expect.stringMatching(/not an http\(s\) URL/),
    });
    const served = await cli(
      ['mailbox', 'serve', '--dir', mb.dir, '--http', '--witness', server.url, '--witness-key', logKey],
      2,
    );
    expect(served.err).toMatch(/--witness-key .* is a log key \(type 0x01\)/);
  });

  it('--witnessed-within without --witness is a usage error (exit 2)', async () => {
    const r = await cli(['verify', mb.dir, '--witnessed-within', '10m'], 2);
    expect(r.err).toMatch(/--witnessed-within applies to the cosignatures --witness requires/);
  });
});

describe('a witness that hangs or is down', () => {
  it('neither stops the server nor holds up its sends: they are answered while a submission hangs', {
    timeout: 90_000,
  }, async () => {
    const pending: ServerResponse[] = [];
    const hanging: Server = createServer((_req: IncomingMessage, res: ServerResponse) => {
      pending.push(res); // never answered
    });
    await new Promise<void>((r) => hanging.listen(0, '127.0.0.1', r));
    const hangUrl = `http://127.0.0.1:${(hanging.address() as { port: number }).port}`;
    const down = 'http://127.0.0.1:9'; // discard port: nothing listens
    const vkeys = [
      cosigner(newSigningKey('hang-operator'), 'hang.example/w').verifierKey,
      cosigner(newSigningKey('down-operator'), 'down.example/w').verifierKey,
    ];
    const mailbox = await startHttp(mb.dir, [
      '--rate-limit',
      '0',
      '--witness',
      hangUrl,
      '--witness-key',
      vkeys[0]!,
      '--witness',
      down,
      '--witness-key',
      vkeys[1]!,
      '--witness-every',
      '1',
      '--witness-timeout',
      '5',
    ]);
    try {
      const alice = await httpClient(mailbox.url, mb.tokens.alice!);
      await call(alice.client, 'send_message', { to: 'bob', body: 'the first' }); // a receipt: the first submission starts
      await waitFor(
        () => pending.length > 0,
        20_000,
        () => 'a submission to the hanging witness',
      );
      for (let i = 0; i < 20; i++) await call(alice.client, 'send_message', { to: 'bob', body: `while hanging ${i}` });
      // Every send was answered while the first submission still hangs (the witness never answers).
      expect(pending.every((res) => !res.writableEnded)).toBe(true);
      await alice.close();
      await waitFor(
        () =>
          listWitnessed(mb.dir).some((r) => r.vkey === vkeys[1] && r.last?.ok === false && r.last.status === undefined),
        20_000,
        () => 'the down witness recorded as unreachable',
      );
      const status = await cli(['mailbox', 'status', mb.dir], 1);
      expect(status.out).toMatch(/down\.example\/w http:\/\/127\.0\.0\.1:9: nothing cosigned yet; last: unreachable/);
    } finally {
      await mailbox.stop();
      for (const res of pending) res.destroy();
      await new Promise((r) => hanging.close(r));
    }
  });
});
