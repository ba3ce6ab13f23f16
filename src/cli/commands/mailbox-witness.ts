/**
 * @module
 * The witness options of `witness mailbox serve` (docs/mailbox.md, "Witnesses"):
 * `--witness URL --witness-key VKEY` pairs, in the order given, and how often to
 * submit. The submitting itself is the library's (mailbox/witnessing.ts).
 */
import type { Command } from 'commander';
import { WitnessError } from '../../core/errors.js';
import {
  DEFAULT_WITNESS_EVERY_RECEIPTS,
  DEFAULT_WITNESS_EVERY_SECONDS,
  DEFAULT_WITNESS_TIMEOUT_SECONDS,
  type MailboxRuntime,
  WitnessSubmitter,
} from '../../mailbox/index.js';
import { wholeNumber } from '../args.js';
import type { CliContext } from '../context.js';

export interface WitnessServeOptions {
  witness: string[];
  witnessKey: string[];
  witnessEvery: number;
  witnessInterval: number;
  witnessTimeout: number;
}

export function addWitnessOptions(command: Command): Command {
  const collect = (v: string, all: string[]) => [...all, v];
  return command
    .option(
      '--witness <url>',
      "submit the call log's signed checkpoints to the witness at URL (`witness anchor serve`); repeatable, each with a --witness-key",
      collect,
      [],
    )
    .option(
      '--witness-key <vkey>',
      'the cosigner verifier key of the --witness in the same position (NAME+HASH+BASE64, as `witness anchor serve` prints)',
      collect,
      [],
    )
    .option(
      '--witness-every <n>',
      'submit after at most this many receipts',
      wholeNumber(1),
      DEFAULT_WITNESS_EVERY_RECEIPTS,
    )
    .option(
      '--witness-interval <seconds>',
      'and at least this often while there is something new',
      wholeNumber(1),
      DEFAULT_WITNESS_EVERY_SECONDS,
    )
    .option(
      '--witness-timeout <seconds>',
      'give up on one submission after this long (the next round tries again)',
      wholeNumber(1),
      DEFAULT_WITNESS_TIMEOUT_SECONDS,
    );
}

/** Starts submitting when witnesses were given: the runtime's store then counts receipts for it. */
export async function startWitnessing(
  ctx: CliContext,
  runtime: MailboxRuntime,
  o: WitnessServeOptions,
  keyPath: string | undefined,
): Promise<WitnessSubmitter | undefined> {
  if (o.witness.length !== o.witnessKey.length) {
    throw new WitnessError(
      'USAGE',
      `Give one --witness-key per --witness, in the same order (got ${o.witness.length} --witness and ${o.witnessKey.length} --witness-key).`,
    );
  }
  if (o.witness.length === 0) return undefined;
  const submitter = await WitnessSubmitter.start(runtime.store.dir, {
    witnesses: o.witness.map((url, i) => ({ url, vkey: o.witnessKey[i] as string })),
    everyReceipts: o.witnessEvery,
    everySeconds: o.witnessInterval,
    timeoutSeconds: o.witnessTimeout,
    ...(keyPath !== undefined ? { keyPath } : {}),
    log: (line) => ctx.io.stderr(`witness mailbox: ${line}\n`),
  });
  runtime.store = submitter.watch(runtime.store);
  return submitter;
}
