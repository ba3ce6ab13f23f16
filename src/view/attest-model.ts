/**
 * @module
 * A delegation path as a graph: one node per receipt (root → leaf) and one edge per
 * delegation (parent → child), each with the verdict and reason codes of attest's own
 * verifier (`verifyEvidence`, `verifyBundle`, `verifyDsse`: the checks `witness verify`
 * makes). The viewer places the verifier's reasons, it does not make any: a reason is
 * on the edge into receipt i when its code is about the link (EDGE_CODES), on receipt
 * i otherwise, and on the whole path when it names no receipt. Nothing is consumed:
 * no nonce store is given, so viewing a receipt never makes a later check a REPLAY.
 */
import type { KeyDirectory } from '../attest/key-directory.js';
import { type Construction, receiptDigest, type Receipt } from '../attest/receipt.js';
import type { Reason, ReasonCode } from '../attest/reasons.js';
import type { VerifyResult } from '../attest/verify.js';

/**
 * Codes about the delegation into a receipt rather than the receipt itself: its parent
 * (named, digest, Merkle ancestry root), its depth below the parent, and, on a dag
 * edge, the parent's co-signature. DEPTH_MISMATCH at the root is the root's own.
 */
export const EDGE_CODES: readonly ReasonCode[] = [
  'PARENT_MISSING',
  'PARENT_DIGEST_MISMATCH',
  'DEPTH_MISMATCH',
  'COSIGNATURE_MISSING',
  'COSIGNATURE_INVALID',
];
/** Edge codes that mean the parent never agreed to the delegation: the edge is forged, not merely broken. */
const FORGED_CODES: readonly ReasonCode[] = ['COSIGNATURE_MISSING', 'COSIGNATURE_INVALID'];

export interface GraphNode {
  index: number;
  deployer: string;
  instance: string;
  key_id: string;
  type: string;
  construction: Construction;
  depth: number;
  issued_at: string;
  not_after: string;
  digest: string;
  output_sha256: string;
  output_len: number;
  ok: boolean;
  reasons: Reason[];
}

export interface GraphEdge {
  /** The parent's position; -1 for a parent that was not supplied (PARENT_MISSING at the root). */
  from: number;
  to: number;
  /** link: a chain or Merkle child's own claim; cosigned: a dag edge, which its parent must sign. */
  kind: 'link' | 'cosigned';
  /** Deployers whose keys (in your directory) signed this edge besides the child's releasing key. */
  cosigned_by: string[];
  verdict: 'ok' | 'broken' | 'forged';
  reasons: Reason[];
}

export interface AttestationGraph {
  ok: boolean;
  construction: Construction | null;
  nodes: GraphNode[];
  edges: GraphEdge[];
  /** Reasons that name no receipt (a malformed document, a path too long), and REPLAY. */
  path_reasons: Reason[];
  /** Merkle paths: receipt i commits to all receipts before it (its ancestry root). */
  merkle: boolean;
  signatures_checked: number;
}

/** The verifier's answer over `path`, laid out as nodes and edges. */
export function attestationGraph(result: VerifyResult, directory: KeyDirectory): AttestationGraph {
  const path = result.path ?? [];
  const at = (i: number) => result.reasons.filter((r) => r.index === i || (r.index === undefined && path.length === 1));
  const nodes: GraphNode[] = path.map((r, i) => {
    const reasons = at(i).filter((x) => !_onEdge(x, i));
    return {
      index: i,
      deployer: r.deployer,
      instance: r.instance,
      key_id: r.key_id,
      type: r.type,
      construction: r.construction,
      depth: r.depth,
      issued_at: r.issued_at,
      not_after: r.not_after,
      digest: receiptDigest(r),
      output_sha256: r.output_sha256,
      output_len: r.output_len,
      ok: reasons.length === 0,
      reasons,
    };
  });
  const edges: GraphEdge[] = [];
  path.forEach((r, i) => {
    const reasons = at(i).filter((x) => _onEdge(x, i));
    if (i === 0 && reasons.length === 0) return; // a root with no parent: no edge into it
    const forged = reasons.some((x) => FORGED_CODES.includes(x.code));
    edges.push({
      from: i - 1,
      to: i,
      kind: r.type === 'edge' ? 'cosigned' : 'link',
      cosigned_by: _cosigners(r, directory),
      verdict: reasons.length === 0 ? 'ok' : forged ? 'forged' : 'broken',
      reasons,
    });
  });
  const placed = path.length === 0 ? [] : result.reasons.filter((r) => r.index === undefined && path.length > 1);
  return {
    ok: result.ok,
    construction: path.at(-1)?.construction ?? null,
    nodes,
    edges,
    path_reasons: path.length === 0 ? result.reasons : placed,
    merkle: path.at(-1)?.construction === 'merkle',
    signatures_checked: result.signaturesChecked,
  };
}

function _onEdge(r: Reason, i: number): boolean {
  return EDGE_CODES.includes(r.code) && !(i === 0 && r.code === 'DEPTH_MISMATCH');
}

/** The deployers of the signatures on `r` other than its releasing key's, as your directory names them. */
function _cosigners(r: Receipt, directory: KeyDirectory): string[] {
  return r.signatures
    .filter((s) => s.key_id !== r.key_id)
    .map((s) => directory.get(s.key_id)?.deployer ?? `unknown key ${s.key_id}`);
}
