/**
 * Bad input to every `witness mailbox` command — a port out of range or in use, a
 * malformed host, a file where a folder is expected (and the reverse), a damaged
 * mailbox.json, contradicting or empty options — ends in one line on stderr that
 * says what to do, with the documented exit status (docs/errors.md), never
 * "internal error" and a stack trace, and never an option silently ignored.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli, makeMailbox, type TestMailbox, tempDir } from './helpers.js';

let mb: TestMailbox;
let busy: Server;
let busyPort: number;

beforeAll(async () => {
  mb = await makeMailbox(['a']);
  busy = createServer();
  await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', () => resolve()));
  busyPort = (busy.address() as { port: number }).port;
});
afterAll(() => new Promise<void>((resolve) => busy.close(() => resolve())));

/** Runs the CLI, expecting `code` and a single line on stderr matching `message`. */
async function oneLine(argv: string[], code: number, message: RegExp): Promise<void> {
  const { err } = await cli(argv, code);
  expect(err).not.toMatch(/internal error|\n\s+at /);
  expect(err.trimEnd().split('\n')).toHaveLength(1);
  expect(err).toMatch(message);
}

describe('mailbox serve --http', () => {
  it('--port 70000 is a usage error naming the range', () =>
    oneLine(
      ['mailbox', 'serve', '--dir', mb.dir, '--http', '--port', '70000'],
      2,
      /"70000" is not a TCP port; give a whole number from 0 to 65535/,
    ));
  it('--port -1 is a usage error', () =>
    oneLine(['mailbox', 'serve', '--dir', mb.dir, '--http', '--port', '-1'], 2, /not a TCP port/));
  it('a port in use says so and how to choose another', () =>
    oneLine(
      ['mailbox', 'serve', '--dir', mb.dir, '--http', '--port', String(busyPort)],
      2,
      new RegExp(`127\\.0\\.0\\.1:${busyPort} is already in use; stop the other server or choose another --port`),
    ));
  it('a malformed --host is a usage error, not a remark about exposure', () =>
    oneLine(
      ['mailbox', 'serve', '--dir', mb.dir, '--http', '--host', 'bad host!'],
      2,
      /"bad host!" is not a host name or IP address/,
    ));
  it('a --host that does not resolve says so', () =>
    oneLine(
      ['mailbox', 'serve', '--dir', mb.dir, '--http', '--host', 'nonexistent.invalid', '--allowed-host', 'x'],
      2,
      /nonexistent\.invalid does not resolve/,
    ));
  it('--max-request-bytes 0 is a usage error', () =>
    oneLine(['mailbox', 'serve', '--dir', mb.dir, '--http', '--max-request-bytes', '0'], 2, /below the minimum of 1/));
  it('--max-request-bytes without --http is refused, not ignored', () =>
    oneLine(
      ['mailbox', 'serve', '--dir', mb.dir, '--agent', 'a', '--max-request-bytes', '5000'],
      2,
      /--max-request-bytes limits HTTP request bodies; add --http/,
    ));
  it('after a failed start the mailbox still serves on a free port', async () => {
    await cli(['mailbox', 'serve', '--dir', mb.dir, '--http', '--port', String(busyPort)], 2);
    await oneLine(['mailbox', 'serve', '--dir', mb.dir, '--http', '--port', '65536'], 2, /not a TCP port/);
  });
});

describe('mailbox verify', () => {
  it('an empty --public-key is refused, not ignored', () =>
    oneLine(['mailbox', 'verify', mb.dir, '--public-key', ''], 2, /Ed25519 public key has 32 bytes, this one has 0/));
  it('an empty --key is refused, not ignored', () =>
    oneLine(['mailbox', 'verify', mb.dir, '--key', ''], 2, /--key is empty/));
  it('--key and --public-key together are a usage error (one would be ignored)', () =>
    oneLine(
      ['mailbox', 'verify', mb.dir, '--key', mb.keyPath, '--public-key', 'x'],
      2,
      /either --key or --public-key, not both/,
    ));
  it('a directory as --key names the path', () =>
    oneLine(
      ['mailbox', 'verify', mb.dir, '--key', mb.dir],
      2,
      /The mailbox signing key .* is a directory; give a file/,
    ));
});

describe('a damaged mailbox.json', () => {
  for (const [what, text] of [
    ['null', 'null'],
    ['a list', '[]'],
    ['no signing key path', '{"format":"witness-mailbox/1","store":"jsonl","signing":{"alg":"ed25519","kid":"k"}}'],
    ['a repeated key', '{"format":"witness-mailbox/1","format":"witness-mailbox/1"}'],
  ]) {
    it(`holding ${what} is refused in one line by verify, add-agent and serve`, async () => {
      const broken = await makeMailbox([]);
      writeFileSync(join(broken.dir, 'mailbox.json'), text!);
      for (const argv of [
        ['mailbox', 'verify', broken.dir],
        ['mailbox', 'add-agent', broken.dir, 'b'],
        ['mailbox', 'serve', '--dir', broken.dir, '--agent', 'b'],
      ]) {
        const { code, err } = await cli(argv, -1);
        expect(code, argv.join(' ')).toBeGreaterThan(0);
        expect(err).not.toMatch(/internal error|\n\s+at /);
        expect(err).toMatch(/mailbox\.json/);
      }
    });
  }
});

describe('mailbox install', () => {
  it('a file as --project says it is not a folder', async () => {
    const file = join(tempDir(), 'not-a-folder');
    writeFileSync(file, 'x');
    await oneLine(
      ['mailbox', 'install', 'opencode', '--dir', mb.dir, '--agent', 'a', '--project', file],
      2,
      /--project .*not-a-folder is not a folder/,
    );
  });
  it('a directory where the config file should be names the file', async () => {
    const project = tempDir();
    mkdirSync(join(project, 'opencode.json'));
    await oneLine(
      ['mailbox', 'install', 'opencode', '--dir', mb.dir, '--agent', 'a', '--project', project],
      2,
      /Cannot read .*opencode\.json.*EISDIR/,
    );
  });
});
