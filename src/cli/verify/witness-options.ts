/**
 * @module
 * `--witness VKEY [--witness-url URL] [--witnessed-within DURATION]`, shared by
 * `witness verify DIR` and `witness mailbox verify DIR`: the witnesses whose cosigned
 * checkpoint the call log must extend (mailbox/verify-witness.ts). URLs pair with
 * keys in the order given; a key without a URL is looked for in the --checkpoint file
 * and the mailbox's kept copies.
 */
import { type Command, InvalidArgumentError } from 'commander';
import { WitnessError } from '../../core/errors.js';
import type { WitnessRequirement } from '../../mailbox/index.js';

export interface WitnessVerifyOptions {
  witness?: string[];
  witnessUrl?: string[];
  witnessedWithin?: number;
}

export function addWitnessVerifyOptions(command: Command): Command {
  const collect = (v: string, all: string[] = []) => [...all, v];
  return command
    .option(
      '--witness <vkey>',
      'mailbox folders: require a checkpoint cosigned by this witness (its cosigner key NAME+HASH+BASE64) and that the call log extends it; repeatable, each must hold',
      collect,
    )
    .option(
      '--witness-url <url>',
      'ask the witness of the --witness in the same position for its newest cosigned checkpoint (GET /checkpoint), instead of trusting only copies',
      collect,
    )
    .option(
      '--witnessed-within <duration>',
      'each required cosignature must be at most this old, e.g. 10m, 2h, 1d (else WITNESS_STALE)',
      durationSeconds,
    );
}

/** The requirements the options state (empty: none), checked for pairing. */
export function witnessRequirements(o: WitnessVerifyOptions): WitnessRequirement[] {
  const keys = o.witness ?? [];
  const urls = o.witnessUrl ?? [];
  if (urls.length > keys.length)
    throw new WitnessError(
      'USAGE',
      `Each --witness-url belongs to the --witness in the same position: got ${urls.length} --witness-url for ${keys.length} --witness.`,
    );
  if (keys.length === 0 && o.witnessedWithin !== undefined)
    throw new WitnessError(
      'USAGE',
      '--witnessed-within applies to the cosignatures --witness requires; add --witness VKEY.',
    );
  return keys.map((vkey, i) => ({
    vkey,
    ...(urls[i] !== undefined ? { url: urls[i] } : {}),
    ...(o.witnessedWithin !== undefined ? { withinSeconds: o.witnessedWithin } : {}),
  }));
}

/** A duration: a whole number with a unit s, m, h or d (or bare seconds). */
export function durationSeconds(text: string): number {
  const m = /^\s*(\d+)\s*([smhd]?)\s*$/.exec(text);
  if (!m)
    throw new InvalidArgumentError(`"${text}" is not a duration; write a whole number with s, m, h or d, e.g. 10m.`);
  return Number(m[1]) * { '': 1, s: 1, m: 60, h: 3600, d: 86400 }[m[2] as '' | 's' | 'm' | 'h' | 'd'];
}
