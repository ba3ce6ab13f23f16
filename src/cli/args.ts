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
    if (!/^-?\d+$/.test(text.trim()) || !Number.isSafeInteger(n)) throw new InvalidArgumentError(`"${text}" is not a whole number.`);
    if (n < min) throw new InvalidArgumentError(`${n} is below the minimum of ${min}.`);
    return n;
  };
}

/** A number greater than zero. */
export function positiveNumber(text: string): number {
  const n = Number(text);
  if (text.trim() === '' || !Number.isFinite(n) || n <= 0) throw new InvalidArgumentError(`"${text}" is not a number greater than 0.`);
  return n;
}

/** A list of whole numbers: `8`, `0,1,2` or an inclusive range `0..4`. */
export function numberList(min: number) {
  const one = wholeNumber(min);
  return (text: string): number[] => {
    const trimmed = text.trim();
    if (trimmed === '') throw new InvalidArgumentError('is empty; give a number, a list like 4,8,16 or a range like 0..4.');
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
  const names = text.split(',').map((s) => s.trim()).filter(Boolean);
  if (names.length === 0) throw new InvalidArgumentError('is empty; give one name or a comma-separated list.');
  return names;
}
