/**
 * @module
 * What a child's release receipt covers for one A2A artifact, and the parent's check of
 * a whole task (docs/a2a.md, "Artifacts and their receipts"). The bytes are defined once,
 * here: the UTF-8 of the RFC 8785 form of
 * `{"v":1,"type":"agent-witness.dev/a2a-artifact","task_id","context_id","artifact_id","parts"}`,
 * where `parts` is the A2A v1.0 wire JSON of every part, each with its own metadata. The
 * artifact's own metadata — where the evidence travels — is not covered. So a receipt
 * binds every part's bytes, the task, the context and the artifact id, and one artifact's
 * receipt never verifies for another artifact, task or context.
 *
 * `verifyTaskArtifacts` is what a parent runs on the task it got back: the task must be
 * completed and hold at least one artifact, and every artifact's evidence path must
 * verify against that artifact's bytes. Nonces are claimed only once every artifact has
 * passed every other check, so a task that fails leaves its genuine receipts unspent.
 */
import { canonicalBytes } from '../core/canonical-json.js';
import { isWitnessError } from '../core/errors.js';
import { evidencePath, type Receipt } from '../attest/receipt.js';
import type { ReasonCode, TaskCode } from '../attest/reasons.js';
import { acceptPath, checkPath, type PathCheck, type VerifyOptions } from '../attest/verify.js';
import { EVIDENCE_KEY } from './metadata.js';

/** The `type` inside the bytes an artifact receipt covers. */
export const ARTIFACT_BYTES_TYPE = 'agent-witness.dev/a2a-artifact';
/** The wire name of the one state in which a task's artifacts are released results. */
export const COMPLETED_STATE = 'TASK_STATE_COMPLETED';

/** The task an artifact belongs to. */
export interface TaskRef {
  taskId: string;
  contextId: string;
}

/** An artifact as A2A v1.0 JSON on the wire (`Artifact.toJSON` of the SDK). */
export interface WireArtifact {
  artifactId: string;
  /** Each part's wire JSON (`{text}`, `{data}`, `{raw}` or `{url}`, with `mediaType`, `filename`, `metadata`). */
  parts: unknown[];
  metadata?: Record<string, unknown>;
  [field: string]: unknown;
}

/**
 * The bytes a release receipt for `artifact` of task `ref` covers.
 * @example artifactBytes({taskId: 't1', contextId: 'c1'}, {artifactId: 'a1', parts: [{text: 'hi'}]})
 */
export function artifactBytes(ref: TaskRef, artifact: WireArtifact): Buffer {
  return canonicalBytes({
    v: 1,
    type: ARTIFACT_BYTES_TYPE,
    task_id: ref.taskId,
    context_id: ref.contextId,
    artifact_id: artifact.artifactId,
    parts: artifact.parts,
  });
}

/** The text a user reads: the text parts of the artifacts, in order, joined without separators. */
export function artifactText(artifacts: readonly WireArtifact[]): string {
  let text = '';
  for (const artifact of artifacts)
    for (const part of artifact.parts) {
      const value = (part as { text?: unknown } | null)?.text;
      if (typeof value === 'string') text += value;
    }
  return text;
}

/** One problem found in a task: a task-level code, or a receipt code of one artifact's path. */
export interface TaskProblem {
  code: ReasonCode | TaskCode;
  message: string;
  /** Position of the artifact concerned in `task.artifacts`. */
  artifact?: number;
  /** Position on that artifact's path (0 = root) of the receipt concerned. */
  index?: number;
}

export interface ArtifactCheck {
  artifact_id: string;
  /** The receipt path root → leaf, when every receipt of it parsed. */
  path?: Receipt[];
  signaturesChecked: number;
}

export interface TaskVerifyResult {
  ok: boolean;
  /** Empty exactly when `ok`. */
  problems: TaskProblem[];
  /** One entry per artifact checked, in the task's order. */
  artifacts: ArtifactCheck[];
  /** `artifactText` of the task's artifacts: what was verified, when `ok`. */
  text: string;
}

/**
 * Checks a task as A2A v1.0 JSON on the wire (`Task.toJSON` of the SDK, or a JSON-RPC /
 * REST result): completed, with artifacts, each one's evidence verifying against its
 * bytes under `options` (pin `construction` to what you asked for).
 */
export async function verifyTaskArtifacts(task: unknown, options: VerifyOptions): Promise<TaskVerifyResult> {
  const shape = _taskShape(task);
  if (typeof shape === 'string') return _refused([{ code: 'MALFORMED', message: shape }], []);
  const { ref, state, artifacts } = shape;
  if (state !== COMPLETED_STATE)
    return _refused(
      [
        {
          code: 'TASK_NOT_COMPLETED',
          message: `Task ${ref.taskId} is in ${state}, not ${COMPLETED_STATE}: it released no result.`,
        },
      ],
      artifacts,
    );
  if (artifacts.length === 0)
    return _refused(
      [{ code: 'ARTIFACT_MISSING', message: `Task ${ref.taskId} completed without an artifact: there is no output.` }],
      artifacts,
    );
  const problems: TaskProblem[] = [];
  const checks: PathCheck[] = [];
  for (const [i, artifact] of artifacts.entries()) {
    const where = `artifact ${i} (${artifact.artifactId})`;
    const check = _checkArtifact(ref, artifact, options);
    if ('code' in check) {
      problems.push({ ...check, artifact: i, message: `${where}: ${check.message}` });
      checks.push({ reasons: [], signaturesChecked: 0 });
      continue;
    }
    checks.push(check);
    for (const r of check.reasons) problems.push({ ...r, artifact: i, message: `${where}: ${r.message}` });
  }
  if (problems.length === 0)
    for (const [i, check] of checks.entries()) {
      const accepted = await acceptPath(check, options);
      for (const r of accepted.reasons)
        problems.push({ ...r, artifact: i, message: `artifact ${i} (${artifacts[i]?.artifactId}): ${r.message}` });
    }
  return {
    ok: problems.length === 0,
    problems,
    artifacts: checks.map((c, i) => ({
      artifact_id: artifacts[i]?.artifactId ?? '',
      ...(c.path ? { path: c.path } : {}),
      signaturesChecked: c.signaturesChecked,
    })),
    text: artifactText(artifacts),
  };
}

/** The checks of one artifact's path against its bytes (no nonce claimed), or why it has none to check. */
function _checkArtifact(ref: TaskRef, artifact: WireArtifact, options: VerifyOptions): PathCheck | TaskProblem {
  const evidence = artifact.metadata?.[EVIDENCE_KEY];
  if (evidence === undefined)
    return {
      code: 'ARTIFACT_UNATTESTED',
      message: `carries no ${EVIDENCE_KEY} in its metadata: an unattested artifact is not a released result.`,
    };
  const path = evidencePath(evidence);
  if (!path.ok) return { reasons: path.reasons, signaturesChecked: 0 };
  let bytes: Buffer;
  try {
    bytes = artifactBytes(ref, artifact);
  } catch (error) {
    if (!isWitnessError(error, 'NOT_CANONICALIZABLE')) throw error;
    return { code: 'MALFORMED', message: `its parts have no canonical JSON form: ${error.message}` };
  }
  return checkPath(path.value, bytes, options);
}

function _refused(problems: TaskProblem[], artifacts: readonly WireArtifact[]): TaskVerifyResult {
  return { ok: false, problems, artifacts: [], text: artifactText(artifacts) };
}

interface _TaskShape {
  ref: TaskRef;
  state: string;
  artifacts: WireArtifact[];
}

/** The parts of a wire task the check reads, or what makes it unreadable. */
function _taskShape(task: unknown): _TaskShape | string {
  if (!_isObject(task)) return 'The task is not a JSON object (an A2A v1.0 Task as JSON).';
  const { id, contextId, status, artifacts = [] } = task;
  if (typeof id !== 'string' || id === '') return 'The task has no id.';
  if (typeof contextId !== 'string') return `Task ${id} has no contextId.`;
  const state = _isObject(status) ? status.state : undefined;
  if (typeof state !== 'string')
    return `Task ${id} has no status.state as A2A v1.0 JSON writes it (e.g. "${COMPLETED_STATE}").`;
  if (!Array.isArray(artifacts)) return `Task ${id}: artifacts is not an array.`;
  const seen = new Set<string>();
  for (const [i, a] of artifacts.entries()) {
    if (!_isObject(a) || typeof a.artifactId !== 'string' || !Array.isArray(a.parts))
      return `Task ${id}: artifact ${i} is not an A2A v1.0 artifact ({artifactId, parts, metadata?}).`;
    if (a.metadata !== undefined && !_isObject(a.metadata))
      return `Task ${id}: artifact ${i} has metadata that is not an object.`;
    if (seen.has(a.artifactId))
      return `Task ${id}: artifact id ${a.artifactId} appears twice; each artifact is released once.`;
    seen.add(a.artifactId);
  }
  return { ref: { taskId: id, contextId }, state, artifacts: artifacts as WireArtifact[] };
}

function _isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
