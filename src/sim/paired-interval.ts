/**
 * @module
 * The difference of two proportions measured on the same runs (paired data): the
 * confidence interval of Newcombe's method 10 — R. G. Newcombe, "Improved confidence
 * intervals for the difference between binomial proportions based on paired data",
 * Statistics in Medicine 17 (1998) 2635–2650 — the square-and-add of the two Wilson
 * score intervals with a correction for the correlation between the two proportions.
 */
import { type Interval, wilsonInterval } from './interval.js';

/**
 * The 2 × 2 table of paired outcomes: `both` succeeded in both conditions, `firstOnly`
 * in the first alone, `secondOnly` in the second alone, `neither` in none. `firstOnly`
 * and `secondOnly` are McNemar's discordant pairs.
 */
export interface PairedCounts {
  both: number;
  firstOnly: number;
  secondOnly: number;
  neither: number;
}

/**
 * Interval for p₂ − p₁ (the second condition's rate minus the first's) by Newcombe's
 * method 10. With l, u the Wilson limits of p₁ = (a+b)/n and p₂ = (a+c)/n:
 * L = θ − √((p₂−l₂)² − 2φ(p₂−l₂)(u₁−p₁) + (u₁−p₁)²),
 * U = θ + √((u₂−p₂)² − 2φ(u₂−p₂)(p₁−l₁) + (p₁−l₁)²),
 * φ the phi coefficient of the table, replaced by max(ad − bc − n/2, 0)/√(…) when
 * ad > bc, and 0 when a margin is empty.
 * @example newcombePairedInterval({ both: 59, firstOnly: 6, secondOnly: 16, neither: 80 }) // p₂ − p₁ = 10/161, [0.0046, 0.1186]
 */
export function newcombePairedInterval(t: PairedCounts, confidence = 0.95): Interval & { difference: number } {
  const { both: a, firstOnly: b, secondOnly: c, neither: d } = t;
  for (const x of [a, b, c, d])
    if (!Number.isInteger(x) || x < 0)
      throw new RangeError(`newcombePairedInterval needs whole counts ≥ 0, got ${JSON.stringify(t)}`);
  const n = a + b + c + d;
  if (n === 0) return { difference: 0, low: -1, high: 1 };
  const p1 = (a + b) / n;
  const p2 = (a + c) / n;
  const w1 = wilsonInterval(a + b, n, confidence);
  const w2 = wilsonInterval(a + c, n, confidence);
  const margins = (a + b) * (c + d) * (a + c) * (b + d);
  let phi = 0;
  if (margins > 0) {
    const cross = a * d - b * c;
    phi = (cross > 0 ? Math.max(cross - n / 2, 0) : cross) / Math.sqrt(margins);
  }
  const theta = p2 - p1;
  const down = Math.sqrt(
    Math.max(0, (p2 - w2.low) ** 2 - 2 * phi * (p2 - w2.low) * (w1.high - p1) + (w1.high - p1) ** 2),
  );
  const up = Math.sqrt(
    Math.max(0, (w2.high - p2) ** 2 - 2 * phi * (w2.high - p2) * (p1 - w1.low) + (p1 - w1.low) ** 2),
  );
  return { difference: theta, low: Math.max(-1, theta - down), high: Math.min(1, theta + up) };
}
