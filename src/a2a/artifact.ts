/**
 * @module
 * What a child's release receipt covers for one A2A artifact (docs/a2a.md, "Artifacts
 * and their receipts"), defined once for the child that releases it (release.ts) and
 * every parent or archive that checks it (answer.ts, e12-verify.ts): the UTF-8 of the
 * RFC 8785 form of
 * `{"v":1,"type":"agent-witness.dev/a2a-artifact","task_id","context_id","artifact_id","parts"}`,
 * where `parts` is the A2A v1.0 wire JSON of every part, each with its own metadata. The
 * artifact's own metadata — where the evidence travels — is not covered. So a receipt
 * binds every part's bytes, the task, the context and the artifact id, and one artifact's
 * receipt never verifies for another artifact, task or context.
 */
import { canonicalBytes } from '../core/canonical-json.js';

/** The `type` inside the covered document: domain separation from every other signed text. */
export const ARTIFACT_BYTES_TYPE = 'agent-witness.dev/a2a-artifact';

/** The A2A task (and its context) a message, an event or an artifact belongs to, as the child's server assigned them. */
export interface TaskRef {
  taskId: string;
  contextId: string;
}

/** An artifact as A2A v1.0 JSON on the wire (`Artifact.toJSON` of `@a2a-js/sdk`): what this module reads of it. */
export interface WireArtifact {
  artifactId: string;
  /** Each part's wire JSON (`{text}`, `{data}`, `{raw}` or `{url}`, with `mediaType`, `filename`, `metadata`). */
  parts: readonly unknown[];
  metadata?: Record<string, unknown>;
  [member: string]: unknown;
}

/** An artifact as a results file records it: the inputs of `artifactBytes`, in the files' snake_case. */
export interface ArtifactRecord {
  task_id: string;
  context_id: string;
  artifact_id: string;
  /** Every part as A2A v1.0 JSON. */
  parts: unknown[];
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
  return artifacts.flatMap((a) => a.parts.map(partText).filter((t) => t !== undefined)).join('');
}

/** The text of a part in A2A v1.0 JSON, or undefined for any other kind of part. */
export function partText(part: unknown): string | undefined {
  const text = (part as { text?: unknown } | null)?.text;
  return typeof text === 'string' ? text : undefined;
}
