/**
 * @module
 * What `witness verify` works with, whatever the artifact: the options as parsed, the
 * artifact as read, and the one outcome every kind of artifact answers with (one
 * `--json` shape; exit 0 valid, 1 invalid, 2 usage).
 */
import type { Construction, RevocationPolicy } from '../../attest/index.js';
import type { Problem } from '../../core/problem.js';
import type { CliContext } from '../context.js';

export interface VerifyCliOptions {
  output?: string;
  keys?: string;
  nonces?: string;
  construction?: Construction;
  skew: number;
  now?: number;
  revocation: RevocationPolicy;
  requireCosigner: string[];
  json?: boolean;
  checkpoint?: string;
  cassette?: string;
  allowPartial?: boolean;
  witness?: string[];
  witnessUrl?: string[];
  witnessedWithin?: number;
}

/** The options an artifact kind may use (`--json` applies to every kind). */
export type OptionName =
  | 'output'
  | 'keys'
  | 'nonces'
  | 'construction'
  | 'skew'
  | 'now'
  | 'revocation'
  | 'requireCosigner'
  | 'checkpoint'
  | 'cassette'
  | 'allowPartial'
  | 'witness'
  | 'witnessUrl'
  | 'witnessedWithin';

/** Command-line spelling of each option, in the order messages list them. */
export const OPTION_FLAGS: Readonly<Record<OptionName, string>> = {
  output: '--output',
  keys: '--keys',
  nonces: '--nonces',
  construction: '--construction',
  skew: '--skew',
  now: '--now',
  revocation: '--revocation',
  requireCosigner: '--require-cosigner',
  checkpoint: '--checkpoint',
  cassette: '--cassette',
  allowPartial: '--allow-partial',
  witness: '--witness',
  witnessUrl: '--witness-url',
  witnessedWithin: '--witnessed-within',
};

/** An artifact as read: one JSON document, the first line of a JSONL file, or a folder's manifest. */
export interface Artifact {
  /** Absolute path of the file or folder. */
  path: string;
  /** As the user wrote it, for messages. */
  name: string;
  form: 'json' | 'jsonl' | 'dir';
  /** The parsed document (json), first line (jsonl) or manifest (dir). */
  value: unknown;
}

/** What every kind answers. */
export interface Outcome {
  ok: boolean;
  /** The one-line verdict printed first ("valid: …" / "invalid: …"). */
  summary: string;
  /** Each exactly `{code, message, at?}` (`pickProblem`): a code of attest's one vocabulary, or a kind's own documented with it. */
  problems: Problem[];
  /** Kind-specific facts for `--json` (the receipt path, trial counts, the mailbox's key…). */
  details: Record<string, unknown>;
  /** Printed on stderr (and in `--json`): what does not fail the check but weakens it. */
  warnings?: string[];
}

/** One kind of artifact `witness verify` recognises: an entry of the table in kinds.ts. */
export interface ArtifactKind {
  /** What it is, in messages: "an E12 results file". */
  what: string;
  form: Artifact['form'];
  /** The field that declares the type (of the document, the first line, or the folder's manifest; `a.b` for a member of a member) and its values. */
  declared: { field: string; values: readonly string[] };
  /** dir kinds: the file in the folder whose `declared.field` declares its type. */
  manifest?: string;
  /** Recognises an artifact written before it declared its type, strictly by its shape (legacy). */
  legacy?: (value: unknown) => boolean;
  /** The options it uses; any other option given is a usage error (never ignored). */
  uses: readonly OptionName[];
  /** The options it cannot do without. */
  requires?: readonly OptionName[];
  /** Why an option does not apply, for the usage error (default: it applies to other kinds only). */
  why?: Partial<Record<OptionName, string>>;
  verify(artifact: Artifact, options: VerifyCliOptions, ctx: CliContext): Promise<Outcome>;
}
