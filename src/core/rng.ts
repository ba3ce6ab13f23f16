/**
 * @module
 * Seeded pseudo-random numbers, so every run can be replayed bit for bit.
 *
 * Algorithm (stable; changing it changes every results file):
 * - A run's seed material is SHA-256 of the UTF-8 text `witness/rng/v1\0<baseSeed>\0<runId>`.
 * - Its first 16 bytes, read as four little-endian uint32 words, seed sfc32
 *   (Chris Doty-Humphrey's Small Fast Counter, 32-bit), which is then stepped 12 times
 *   to mix the state.
 * - A derived stream (`fork(label)`) starts from the parent's four seed words, each
 *   XORed with the 32-bit FNV-1a hash of `<label>#<k>` (k = 0..3), and is stepped 12
 *   times. Forks are cheap (no SHA-256), which matters when a sweep starts millions of
 *   games; distinct labels give unrelated streams.
 * - `int(lo, hi)` is unbiased (rejection sampling); `float()` has 32 random bits.
 */
import { sha256 } from './hash.js';

export class Rng {
  private a: number;
  private b: number;
  private c: number;
  private d: number;
  /** The four words this stream was seeded with, kept so forks derive from them. */
  private readonly seedWords: readonly [number, number, number, number];

  private constructor(words: readonly [number, number, number, number]) {
    this.seedWords = words;
    [this.a, this.b, this.c, this.d] = words;
    for (let i = 0; i < 12; i++) this.nextUint32();
  }

  /** The generator for one run: same base seed and run id, same numbers. */
  static forRun(baseSeed: number | string, runId: string): Rng {
    const digest = sha256(`witness/rng/v1\0${baseSeed}\0${runId}`);
    return new Rng([digest.readUInt32LE(0), digest.readUInt32LE(4), digest.readUInt32LE(8), digest.readUInt32LE(12)]);
  }

  /** An independent stream for one purpose (e.g. "initial-values") of this run. */
  fork(label: string): Rng {
    const w = this.seedWords;
    return new Rng([
      (w[0] ^ _fnv1a(`${label}#0`)) >>> 0,
      (w[1] ^ _fnv1a(`${label}#1`)) >>> 0,
      (w[2] ^ _fnv1a(`${label}#2`)) >>> 0,
      (w[3] ^ _fnv1a(`${label}#3`)) >>> 0,
    ]);
  }

  nextUint32(): number {
    const t = (((this.a + this.b) | 0) + this.d) | 0;
    this.d = (this.d + 1) | 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) | 0;
    this.c = (this.c << 21) | (this.c >>> 11);
    this.c = (this.c + t) | 0;
    return t >>> 0;
  }

  /** A float in [0, 1). */
  float(): number {
    return this.nextUint32() / 4294967296;
  }

  /** An integer in [lo, hi], both inclusive, without modulo bias. */
  int(lo: number, hi: number): number {
    const span = hi - lo + 1;
    if (!Number.isInteger(lo) || !Number.isInteger(hi) || span < 1 || span > 4294967296) {
      throw new RangeError(`Rng.int needs integers lo <= hi within 2^32, got ${lo}..${hi}`);
    }
    const limit = 4294967296 - (4294967296 % span);
    let x = this.nextUint32();
    while (x >= limit) x = this.nextUint32();
    return lo + (x % span);
  }

  /** A uniformly chosen element. */
  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new RangeError('Rng.pick needs a non-empty array');
    return items[this.int(0, items.length - 1)] as T;
  }

  /** A new array with the items in a uniformly random order (Fisher–Yates). */
  shuffle<T>(items: readonly T[]): T[] {
    const out = items.slice();
    for (let i = out.length - 1; i > 0; i--) {
      const j = this.int(0, i);
      const tmp = out[i] as T;
      out[i] = out[j] as T;
      out[j] = tmp;
    }
    return out;
  }
}

/** 32-bit FNV-1a over UTF-16 code units. */
function _fnv1a(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}
