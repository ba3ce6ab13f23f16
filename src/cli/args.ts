/**
 * @module
 * Parsers for option values. Each throws a commander `InvalidArgumentError`, which
 * the CLI prints with the option's name and turns into exit status 2.
 */
import { InvalidArgumentError } from 'commander';

/** A whole number ≥ min. */
export function wholeNumber(min: number) {
  return (text: string): number => {
    const n = Number(text);
    if (!/^-?\d+$/.test(text.trim()) || !Number.isSafeInteger(n))
      throw new InvalidArgumentError(`"${text}" is not a whole number.`);
    if (n < min) throw new InvalidArgumentError(`${n} is below the minimum of ${min}.`);
    return n;
  };
}

/** A number greater than zero. */
export function positiveNumber(text: string): number {
  const n = Number(text);
  if (text.trim() === '' || !Number.isFinite(n) || n <= 0)
    throw new InvalidArgumentError(`"${text}" is not a number greater than 0.`);
  return n;
}

/** A list of whole numbers: `8`, `0,1,2` or an inclusive range `0..4`. */
export function numberList(min: number) {
  const one = wholeNumber(min);
  return (text: string): number[] => {
    const trimmed = text.trim();
    if (trimmed === '')
      throw new InvalidArgumentError('is empty; give a number, a list like 4,8,16 or a range like 0..4.');
    const range = /^(-?\d+)\.\.(-?\d+)$/.exec(trimmed);
    if (range) {
      const lo = one(range[1]!);
      const hi = one(range[2]!);
      if (lo > hi) throw new InvalidArgumentError(`range ${trimmed} is reversed; write it low..high.`);
      return Array.from({ length: hi - lo + 1 }, (_, i) => lo + i);
    }
    return trimmed.split(',').map((part) => one(part.trim()));
  };
}

/** A value range `lo..hi` (both inclusive). */
export function valueRange(text: string): [number, number] {
  const m = /^\s*(-?\d+)\s*\.\.\s*(-?\d+)\s*$/.exec(text);
  if (!m) throw new InvalidArgumentError(`"${text}" is not a range like 0..50.`);
  const lo = Number(m[1]);
  const hi = Number(m[2]);
  if (lo > hi) throw new InvalidArgumentError(`range ${text} is reversed or empty; write it low..high.`);
  return [lo, hi];
}

/** A comma-separated list of names. */
export function nameList(text: string): string[] {
  const names = text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (names.length === 0) throw new InvalidArgumentError('is empty; give one name or a comma-separated list.');
  return names;
}

/** A TCP port, 0–65535 (0: any free port). */
export function portNumber(text: string): number {
  const n = Number(text);
  if (!/^\d+$/.test(text.trim()) || n > 65535)
    throw new InvalidArgumentError(
      `"${text}" is not a TCP port; give a whole number from 0 to 65535 (0: any free port).`,
    );
  return n;
}

/**
 * A bind address: an IPv4 or IPv6 literal or a host name. Checked for shape only; a
 * name that does not resolve is reported when the server starts (systemErrorMessage).
 */
export function hostName(text: string): string {
  const t = text.trim();
  const ipv6 = /^\[?[0-9a-fA-F:.]+\]?$/.test(t) && t.includes(':');
  const name =
    /^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/.test(
      t,
    );
  if (!ipv6 && !name)
    throw new InvalidArgumentError(`"${text}" is not a host name or IP address (e.g. 127.0.0.1, ::1, localhost).`);
  return t.replace(/^\[(.*)\]$/, '$1');
}

/** A number greater than 0 and at most `max` (e.g. a TTL that must stay a valid date). */
export function boundedNumber(max: number, unit: string) {
  return (text: string): number => {
    const n = positiveNumber(text);
    if (n > max) throw new InvalidArgumentError(`${text} ${unit} is more than the maximum of ${max} ${unit}.`);
    return n;
  };
}
