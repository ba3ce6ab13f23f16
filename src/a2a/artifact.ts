/**
 * @module
 * The bytes a receipt covers for one A2A Artifact (docs/a2a.md §4.1).
 * A child that answers with a Task releases each artifact through the release signer
 * over these bytes, and a parent recomputes them from the artifact it received: the
 * UTF-8 of the RFC 8785 form of `{v, type, task_id, context_id, artifact_id, parts}`,
 * every part as A2A v1.0 JSON with its own metadata. The artifact's metadata, where the
 * evidence travels, is not covered. So a receipt binds every part, the task, the
 * context and the artifact id: it never verifies for another artifact, task or context.
 */
import { canonicalBytes } from '../core/canonical-json.js';

/** The `type` inside the covered document: domain separation from every other signed text. */
export const ARTIFACT_BYTES_TYPE = 'agent-witness.dev/a2a-artifact';

/** Where an artifact belongs: the A2A task and context the child's server assigned. */
export interface ArtifactRef {
  taskId: string;
  contextId: string;
}

/** An artifact as A2A v1.0 JSON on the wire (`Artifact.toJSON` of `@a2a-js/sdk`): what this module reads of it. */
export interface WireArtifact {
  artifactId: string;
  parts: readonly unknown[];
  metadata?: Record<string, unknown>;
  [member: string]: unknown;
}

/** The bytes a receipt for `artifact` of the task `ref` covers. */
export function artifactBytes(ref: ArtifactRef, artifact: WireArtifact): Buffer {
  return canonicalBytes({
    v: 1,
    type: ARTIFACT_BYTES_TYPE,
    task_id: ref.taskId,
    context_id: ref.contextId,
    artifact_id: artifact.artifactId,
    parts: artifact.parts,
  });
}
