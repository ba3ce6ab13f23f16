/**
 * @module
 * `agent-witness/attest/testing`: the adversary matrix (attest.md §7) — code that
 * forges, splices and replays receipts to check that a verifier rejects each attack
 * with its specific reason. Kept out of the public `agent-witness/attest` API, which
 * holds only what a runtime or a verifier needs; `witness attest matrix` and the
 * regression suite (test/attest/matrix.test.ts) run it.
 */
export { ATTACKS } from './attacks.js';
export { formatMatrix, runMatrix } from './matrix.js';
export type { Attack, Expectation, MatrixCell, Scenario } from './matrix.js';
export { createMatrixWorld, MATRIX_CONSTRUCTIONS } from './world.js';
export type { AncestryConstruction, MatrixWorld } from './world.js';
