/**
 * @module
 * The rounds of a mailbox server's witness submitter, run on the submitter's own thread
 * (witnessing.ts starts it, witnessing-worker.ts is its entry): it keeps a Merkle tree
 * of the call log as stored (read from where it last stopped, call-log-reader.ts — so
 * with several servers on one database every line counts, whoever appended it) and
 * submits a signed checkpoint with a consistency proof from the size each witness last
 * cosigned (c2sp.org/tlog-witness), when told a round is due and every `everySeconds`
 * seconds, and once more on close. Each witness has its own submission in flight, so a
 * slow, hanging or absent witness delays nothing but its own next checkpoint. Answers
 * are kept (witnessed.ts) and each refusal is one line on the log: 409 (the witness
 * holds another size: resubmitted from there once), 422 (the log is not an extension
 * of what it cosigned: a fork or a rollback), a network error.
 */
import { checkpointFor } from '../attest/tlog/checkpoint.js';
import { parseNoteVerifierKey } from '../attest/tlog/note.js';
import { submitCheckpoint, type SubmitResult } from '../attest/tlog/witness-client.js';
import { WitnessError } from '../core/errors.js';
import { MerkleTree } from '../core/tlog/tree.js';
import type { CallLogReader } from './call-log-reader.js';
import { checkpointSigner, mailboxOrigin } from './checkpoint.js';
import { readConfig } from './config.js';
import { storeKind } from './store-kinds.js';
import { readWitnessed, recordWitnessAnswer } from './witnessed.js';

/**
 * A round costs a read of the log's tail, a signature, an HTTP request and two fsyncs
 * (the kept copy; the witness's own state): at 100 receipts it took 10–30 % of the
 * sends/s of a disk-bound server in bench/mailbox.ts, at 1000 it is within noise; the
 * interval bounds the unwitnessed window when traffic is light.
 */
export const DEFAULT_WITNESS_EVERY_RECEIPTS = 1000;
export const DEFAULT_WITNESS_EVERY_SECONDS = 10;
export const DEFAULT_WITNESS_TIMEOUT_SECONDS = 10;

export interface WitnessTarget {
  url: string;
  /** The witness's cosigner verifier key (`name+hash+base64`, type 0x04). */
  vkey: string;
}

export interface WitnessingOptions {
  witnesses: readonly WitnessTarget[];
  everyReceipts?: number;
  everySeconds?: number;
  /** Per submission (default 10 s): a hanging witness is given up on after it. */
  timeoutSeconds?: number;
  keyPath?: string;
  /** One line per refusal or error (the CLI prints it on stderr). */
  log?: (line: string) => void;
}

type _Answer = SubmitResult | { ok: false; status?: undefined; witnessSize?: undefined; message: string };

interface _Witness extends WitnessTarget {
  name: string;
  /** The size this witness holds, as far as we know (from its answers, or the kept record). */
  known: number;
  /** The size last submitted with a 200. */
  cosigned: number;
  inFlight?: Promise<void>;
  again: boolean;
}

export class WitnessRounds {
  readonly #dir: string;
  readonly #origin: string;
  readonly #sign: (size: number, root: Buffer) => string;
  readonly #reader: CallLogReader;
  readonly #witnesses: _Witness[];
  readonly #timeoutMs: number;
  readonly #log: (line: string) => void;
  readonly #timer: NodeJS.Timeout;
  #tree = new MerkleTree();
  #refreshing: Promise<void> | undefined;
  #note: { size: number; text: string } | undefined;
  #closed = false;

  /** Checks the options and the key, and starts: the first round (the whole log read, then submitted) right after. */
  static async start(dir: string, options: WitnessingOptions): Promise<WitnessRounds> {
    const config = readConfig(dir);
    // An HMAC mailbox's checkpoints are signed by its checkpoint key (none: one line saying how to make it);
    // `keyPath` is the server's signing key, so it stands in only for an Ed25519 mailbox's.
    const key = checkpointSigner(dir, config, config.signing.alg === 'ed25519' ? options.keyPath : undefined);
    const origin = mailboxOrigin(config);
    const witnesses = options.witnesses.map((w) => _target(dir, w));
    const reader = await storeKind(config.store).callLog(dir, config);
    return new WitnessRounds(
      dir,
      origin,
      (size, root) => checkpointFor(origin, size, root, key),
      reader,
      witnesses,
      options,
    );
  }

  private constructor(
    dir: string,
    origin: string,
    sign: (size: number, root: Buffer) => string,
    reader: CallLogReader,
    witnesses: _Witness[],
    options: WitnessingOptions,
  ) {
    this.#dir = dir;
    this.#origin = origin;
    this.#sign = sign;
    this.#reader = reader;
    this.#witnesses = witnesses;
    this.#timeoutMs = (options.timeoutSeconds ?? DEFAULT_WITNESS_TIMEOUT_SECONDS) * 1000;
    this.#log = options.log ?? (() => {});
    this.#timer = setInterval(() => this.round(), (options.everySeconds ?? DEFAULT_WITNESS_EVERY_SECONDS) * 1000);
    this.#timer.unref();
    // The first round reads the whole log (seconds for millions of lines): after start has answered, so the server serves meanwhile.
    setImmediate(() => this.round());
  }

  get origin(): string {
    return this.#origin;
  }

  /** Waits for submissions in flight, submits the log as stored now to every witness, and closes its reader. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    clearInterval(this.#timer);
    await Promise.all([this.#refreshing, ...this.#witnesses.map((w) => w.inFlight)]);
    await this.#refresh();
    await Promise.all(this.#witnesses.map((w) => this.#submitting(w)));
    await this.#reader.close();
  }

  /** Reads what was appended, then gives each witness that is not busy the new size (a busy one goes again when done). */
  round(): void {
    if (this.#closed) return;
    void this.#refresh().then(() => {
      for (const w of this.#witnesses) {
        if (w.inFlight) {
          w.again = true;
          continue;
        }
        w.inFlight = this.#submitting(w);
      }
    });
  }

  async #submitting(w: _Witness): Promise<void> {
    try {
      do {
        w.again = false;
        await this.#submit(w);
      } while (w.again && !this.#closed);
    } catch (error) {
      // A submission must never take the server down: what failed is said, and the next round tries again.
      this.#log(`witness: submitting to ${w.name} failed: ${(error as Error).message}`);
    } finally {
      w.inFlight = undefined;
    }
  }

  #refresh(): Promise<void> {
    this.#refreshing ??= (async () => {
      try {
        const { leaves, rewound } = await this.#reader.read();
        if (rewound) {
          this.#log(
            `witness: the call log no longer holds the lines read before (cut, or its database restored): rebuilding its tree from the log as stored; witnesses that cosigned more will refuse it.`,
          );
          this.#tree = new MerkleTree();
          this.#note = undefined;
        }
        for (let at = 0; at < leaves.length; at += 32) this.#tree.appendLeafHash(leaves.subarray(at, at + 32));
      } catch (error) {
        this.#log(`witness: cannot read the call log to checkpoint it: ${(error as Error).message}`);
      } finally {
        this.#refreshing = undefined;
      }
    })();
    return this.#refreshing;
  }

  /** One submission of the current size to `w` (resubmitted once from the size a 409 names). */
  async #submit(w: _Witness): Promise<void> {
    const size = this.#tree.size;
    if (size === 0 || (size === w.cosigned && w.known === size)) return;
    const tree = this.#tree;
    const root = tree.root(size);
    if (this.#note?.size !== size) this.#note = { size, text: this.#sign(size, root) };
    const note = this.#note.text;
    const oldSize = Math.min(w.known, size);
    let result = await this.#post(w, note, tree, oldSize, size);
    if (!result.ok && result.status === 409 && result.witnessSize !== undefined) {
      w.known = result.witnessSize;
      if (result.witnessSize <= size && result.witnessSize !== oldSize) {
        this.#answer(w, size, result, `; resubmitting with a proof from size ${result.witnessSize}`);
        result = await this.#post(w, note, tree, result.witnessSize, size);
      } else if (result.witnessSize > size) {
        result = {
          ...result,
          message: `the witness holds size ${result.witnessSize}, more than the ${size} entries the call log holds: the log was cut or rolled back after that checkpoint was cosigned (or other servers' appends are not visible here yet)`,
        };
      }
    }
    if (result.ok) {
      w.known = size;
      w.cosigned = size;
    } else if (result.status === 409 && result.witnessSize !== undefined) w.known = result.witnessSize;
    this.#answer(w, size, result);
  }

  async #post(w: _Witness, note: string, tree: MerkleTree, oldSize: number, size: number): Promise<_Answer> {
    try {
      return await submitCheckpoint(w.url, note, {
        oldSize,
        proof: tree.consistencyProof(oldSize, size),
        witnessKeys: [w.vkey],
        timeoutMs: this.#timeoutMs,
      });
    } catch (error) {
      if (!(error instanceof WitnessError)) throw error;
      return { ok: false, message: error.message };
    }
  }

  #answer(w: _Witness, size: number, result: _Answer, more = ''): void {
    const at = new Date().toISOString();
    if (result.ok) {
      recordWitnessAnswer(
        this.#dir,
        w.vkey,
        w.url,
        { at, ok: true, status: 200, size, message: 'cosigned' },
        { size, note: result.note },
      );
      return;
    }
    const status = result.status;
    const what =
      status === undefined
        ? 'unreachable'
        : status === 409
          ? 'refused (409, another size)'
          : status === 422
            ? 'refused (422, not an append-only extension: a fork or a rollback)'
            : `refused (${status})`;
    this.#log(`witness: ${w.name} at ${w.url} ${what} the checkpoint of size ${size}: ${result.message}${more}`);
    recordWitnessAnswer(this.#dir, w.vkey, w.url, {
      at,
      ok: false,
      ...(status !== undefined ? { status } : {}),
      size,
      message: `${result.message}${more}`,
    });
  }
}

function _target(dir: string, w: WitnessTarget): _Witness {
  let name: string;
  try {
    const v = parseNoteVerifierKey(w.vkey);
    if (v.type !== 0x04)
      throw new WitnessError(
        'USAGE',
        `--witness-key ${v.name} is a log key (type 0x01); give the witness's cosigner key, as \`witness anchor vkey --cosigner\` or its serve line prints.`,
      );
    name = v.name;
  } catch (error) {
    if (error instanceof WitnessError && error.code === 'USAGE') throw error;
    throw new WitnessError('USAGE', `--witness-key: ${(error as Error).message}`);
  }
  if (!/^https?:\/\//.test(w.url))
    throw new WitnessError(
      'USAGE',
      `--witness ${JSON.stringify(w.url.slice(0, 80))} is not an http(s) URL; give the URL \`witness anchor serve\` prints.`,
    );
  const known = readWitnessed(dir, w.vkey)?.size ?? 0;
  return { ...w, name, known, cosigned: 0, again: false };
}
