/**
 * @module
 * The adversary matrix (attest.md §7): every attack against every ancestry
 * construction, run through the real verifier, with the verdict and reasons expected
 * of it. It is both a regression suite (test/attest/matrix.test.ts asserts every cell)
 * and the table `witness attest matrix` prints. The expected "accepted" cells are the
 * documented limits: chain and Merkle accept a child-key-only forgery; nothing
 * survives a compromise of both parent and child keys.
 */
import { MemoryNonceStore } from '../nonce-store.js';
import type { ReasonCode } from '../reasons.js';
import { verifyPath, type VerifyOptions } from '../verify.js';
import {
  type AncestryConstruction,
  createMatrixWorld,
  type HonestPath,
  honestPath,
  MATRIX_CONSTRUCTIONS,
  type MatrixWorld,
} from './world.js';
import { ATTACKS } from './attacks.js';

/** What an attack hands the verifier. */
export interface Scenario {
  path: unknown[];
  output: Uint8Array;
  options?: Partial<VerifyOptions>;
  /** Verify once first with the same nonce store; the second verdict counts. */
  replay?: boolean;
}

/** `accepted`, the reason code that must be among the reasons, or null where the attack does not apply. */
export type Expectation = 'accepted' | ReasonCode | null;

export interface Attack {
  id: string;
  title: string;
  expect: Record<AncestryConstruction, Expectation>;
  build(world: MatrixWorld, honest: HonestPath, construction: AncestryConstruction): Scenario;
}

export interface MatrixCell {
  attack: string;
  title: string;
  construction: AncestryConstruction;
  expected: Exclude<Expectation, null>;
  verdict: 'accepted' | 'rejected';
  reasons: ReasonCode[];
  /** The verdict (and, for a rejection, the expected reason) is as expected. */
  asExpected: boolean;
}

/** Runs every applicable attack × construction with fresh keys. */
export async function runMatrix(world: MatrixWorld = createMatrixWorld()): Promise<MatrixCell[]> {
  const cells: MatrixCell[] = [];
  for (const construction of MATRIX_CONSTRUCTIONS) {
    const honest = await honestPath(world, construction);
    for (const attack of ATTACKS) {
      const expected = attack.expect[construction];
      if (expected === null) continue;
      const scenario = attack.build(world, honest, construction);
      const options: VerifyOptions = {
        directory: world.directory,
        now: world.now,
        construction,
        nonceStore: new MemoryNonceStore(),
        ...scenario.options,
      };
      if (scenario.replay) await verifyPath(structuredClone(scenario.path), scenario.output, options);
      const result = await verifyPath(scenario.path, scenario.output, options);
      const reasons = [...new Set(result.reasons.map((r) => r.code))];
      const verdict = result.ok ? 'accepted' : 'rejected';
      const asExpected = expected === 'accepted' ? result.ok : !result.ok && reasons.includes(expected);
      cells.push({ attack: attack.id, title: attack.title, construction, expected, verdict, reasons, asExpected });
    }
  }
  return cells;
}

/** The matrix as a text table: one row per attack, one column per construction. */
export function formatMatrix(cells: readonly MatrixCell[]): string {
  const present = new Set(cells.map((c) => c.attack));
  const rows = ATTACKS.map((a) => a.id).filter((id) => present.has(id));
  const header = ['attack', ...MATRIX_CONSTRUCTIONS];
  const body = rows.map((id) => {
    const title = cells.find((c) => c.attack === id)?.title ?? id;
    return [
      title,
      ...MATRIX_CONSTRUCTIONS.map((k) => {
        const cell = cells.find((c) => c.attack === id && c.construction === k);
        if (!cell) return 'n/a';
        const text =
          cell.verdict === 'accepted'
            ? 'accepted'
            : `rejected ${cell.expected === 'accepted' ? cell.reasons.join('+') : cell.expected}`;
        return cell.asExpected ? text : `${text} (UNEXPECTED: wanted ${cell.expected})`;
      }),
    ];
  });
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((r) => (r[i] as string).length)));
  const line = (r: string[]) =>
    r
      .map((v, i) => v.padEnd(widths[i] as number))
      .join('  ')
      .trimEnd();
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...body.map(line)].join('\n');
}
