/**
 * @module
 * The metadata keys Witness puts on A2A messages (docs/a2a.md §Wire format), and the
 * schemas that check them where they cross a trust boundary. Keys are namespaced by
 * the extension URI's host so they cannot collide with another extension's.
 */
import { z } from 'zod';

/** Declared in the child's card under `capabilities.extensions`. */
export const ATTESTED_RESULTS_EXTENSION = 'https://agent-witness.dev/a2a/attested-results/v1';

/** On the parent's request message: the delegation (task id, construction, the parent's task evidence). */
export const DELEGATION_KEY = 'agent-witness.dev/delegation';
/** On each artifact of a completed task (or a result message): `{path: [root, …, leaf]}`, the leaf covering its bytes (artifact.ts). */
export const EVIDENCE_KEY = 'agent-witness.dev/evidence';
/** On a completed task (or a result message): the child's own latency split, ms. */
export const TIMINGS_KEY = 'agent-witness.dev/timings';
/** On a failed task: `{code, message}` saying why nothing was released. */
export const ERROR_KEY = 'agent-witness.dev/error';

export const CONDITIONS = ['none', 'chain', 'dag'] as const;
export type Condition = (typeof CONDITIONS)[number];

export const DelegationSchema = z.strictObject({
  task_id: z.string().regex(/^[A-Za-z0-9._:-]{1,128}$/, 'expected 1–128 letters, digits or ._:-'),
  construction: z.enum(CONDITIONS),
  /** The parent's task receipt path (root first); null under `none`. */
  evidence: z.strictObject({ path: z.array(z.unknown()).min(1).max(64) }).nullable(),
  /** Under `dag` only: the credential the parent's co-signer issued with the grant (cosigner.ts). */
  cosign_token: z
    .string()
    .regex(/^[A-Za-z0-9_-]{43}$/, 'expected the 43-character token the co-signer returned with the grant')
    .optional(),
});
export type Delegation = z.infer<typeof DelegationSchema>;

export const ChildTimingsSchema = z.strictObject({
  tool_ms: z.number().nonnegative(),
  model_ms: z.number().nonnegative(),
  sign_ms: z.number().nonnegative(),
  cosign_ms: z.number().nonnegative(),
  /** CPU time (user + system) the child process spent on the task, ms: robust to a loaded machine. */
  cpu_ms: z.number().nonnegative(),
});
export type ChildTimings = z.infer<typeof ChildTimingsSchema>;
