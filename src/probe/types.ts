/**
 * @module
 * The shapes of a delivery probe (mailbox.md §3): checks, verdicts with their
 * evidence, what an agent run produced, and the adapter every runtime implements.
 */
import type { Clash } from './shadowing.js';
import type { Workspace } from './workspace.js';

export const CHECKS = ['send', 'receive', 'control'] as const;
export type CheckName = (typeof CHECKS)[number];

/** `undecided` never counts as a pass. */
export type Verdict = 'pass' | 'fail' | 'undecided';

/**
 * The ways a message can reach the agent without a tool call: MCP's subscription to
 * the `mailbox://inbox` resource (any MCP client may make it), and Claude Code's
 * channels (`serve --channel`, started with the launch flag `install claude --channel` prints).
 */
export const PUSH_PATHS = ['resource', 'channel'] as const;
export type PushPath = (typeof PUSH_PATHS)[number];
/** `n/a`: the runtime offers no such path; `undecided`: the records cannot tell. */
export type PushAnswer = 'yes' | 'no' | 'undecided' | 'n/a';

/** One push path measured: a peer's message stored mid-run, judged from the server's records and the model's requests apart. */
export interface PushResult {
  path: PushPath;
  /** The server sent the notice or event to the runtime's session (session log; the signed `channel_push` line for channels). */
  delivered: PushAnswer;
  delivered_reason: string;
  /** A later model request held the message's canary, with no inbox read by the agent before it. */
  seen: PushAnswer;
  seen_reason: string;
  canary: string;
  message_id?: string;
  /** From the send to the notice the server sent, and to the first model request that held the canary. */
  delivered_ms?: number;
  seen_ms?: number;
  /** The call-log lines of the agent's sessions during the run, in order (tools as logged, server events such as channel_push included). */
  agent_calls: string[];
  ms: number;
}

/** A model request as the model endpoint recorded it: when it came, and its whole text. */
export interface ModelRecord {
  at: number;
  text: string;
}

/** What the servers' session logs say about the MCP protocol the runtime negotiated. */
export interface Negotiated {
  /** Each protocol version the server answered the runtime's `initialize` with (or a 2026-07-28 `server/discover` claimed), in order of first use. */
  versions: string[];
  /** The runtime's MCP client as it named itself (`name version`). */
  clients: string[];
  sessions: number;
}

export interface CheckEvidence {
  /** Inbox lines relevant to the check, as stored (file:line and the record). */
  inbox: Array<{ at: string; id: string; from: string; to: string; body_has_canary: boolean }>;
  /** Call-log lines written during the check, with whether their receipt verified. */
  receipts: Array<{
    at: string;
    seq: number;
    agent: string;
    tool: string;
    ok: boolean;
    message_ids: string[];
    genuine: boolean;
  }>;
  /** Problems `witness mailbox verify` found that were not there before the check. */
  verify_problems: string[];
  canary_in_output: boolean;
  /** The end of what the agent printed (recorded, never consulted for the verdict). */
  output_excerpt: string;
  /** Tools the agent reports it called, where the adapter can tell. */
  agent_tool_calls?: string[];
}

export interface CheckResult {
  check: CheckName;
  verdict: Verdict;
  reason: string;
  canary: string;
  /** Message ids involved: the peer's send (receive) or the agent's send (send). */
  message_ids: string[];
  evidence: CheckEvidence;
  ms: number;
}

export type PreflightStatus = 'connected' | 'failed' | 'not-listed' | 'unchecked';

export interface Preflight {
  /** The runtime was found, with its version. */
  runtime: { found: boolean; bin?: string; version?: string; reason?: string };
  /** The config file written through `witness mailbox install`, if any. */
  config?: { file: string; has_server: boolean };
  /** What the runtime's own `mcp list` said about our server. */
  connection: { status: PreflightStatus; detail: string };
  /** The runtime's built-in tools and those that shadow a mailbox tool. */
  shadowing: Shadowing;
  warnings: string[];
}

export interface Shadowing {
  /** `runtime`: the runtime listed its own tools; `known`: witness's table of built-ins per version; `none`: neither. */
  source: 'runtime' | 'known' | 'none';
  /** How the list was obtained (the command, or the table row and why the runtime was not asked). */
  detail: string;
  /** The runtime's own tools. */
  builtins: string[];
  /** The mailbox's tools as the runtime names them, where its list has them. */
  mailbox_tools?: string[];
  /** Each built-in that names the same action as a mailbox tool. */
  clashes: Clash[];
}

/** What a runtime says about its own tools, asked without any model answering. */
export interface ToolListing {
  builtins: string[];
  mailbox?: string[];
  /** How it was asked, for the report. */
  how: string;
}

/** What one check asks the agent to do. Only `send` carries its canary: receive and control must not. */
export type AgentTask =
  | { kind: 'send'; prompt: string; peer: string; canary: string }
  | { kind: 'receive' | 'control'; prompt: string }
  /** Keep working without reading the inbox; `path` says how mail is pushed meanwhile (the launch flag a channel needs). */
  | { kind: 'push'; prompt: string; path: PushPath };

export interface AgentRun {
  stdout: string;
  stderr: string;
  exitCode: number | null;
  timedOut: boolean;
  ms: number;
  /** Tool names the agent reports calling, when the adapter can tell. */
  toolCalls?: string[];
}

export interface ProbeContext {
  ws: Workspace;
  serverName: string;
  toolPrefix: string;
  modelEndpoint?: string;
  model?: string;
  /** Explicit path of the runtime's executable. */
  bin?: string;
  /** `command` adapter: the command line with `{prompt}`. */
  template?: string;
  timeoutMs: number;
  /** Aborted on Ctrl-C or SIGTERM: every runtime process and mailbox server is stopped. */
  signal?: AbortSignal;
}

export interface RuntimeAdapter {
  readonly name: string;
  /** A human name for reports. */
  readonly title: string;
  /** Finds the runtime and its version; never throws for a missing binary. */
  detect(ctx: ProbeContext): Promise<Preflight['runtime']>;
  /** Registers the mailbox server (through `installMailbox`), returns the config file. */
  install(ctx: ProbeContext): Preflight['config'] | undefined;
  /** Asks the runtime whether it connected to the server. */
  connection(ctx: ProbeContext): Promise<Preflight['connection']>;
  run(ctx: ProbeContext, task: AgentTask): Promise<AgentRun>;
  /** Asks the runtime for its tools, with no model answering; absent when it has no way to. Throws a one-line error when asking failed. */
  listTools?(ctx: ProbeContext): Promise<ToolListing>;
  /** Registers the server with Claude Code's channel contract (`--channel`); absent when the runtime has no channels. */
  installChannel?(ctx: ProbeContext): Preflight['config'];
}

export interface ProbeReport {
  format: 'witness-probe/1';
  runtime: string;
  version?: string;
  model?: string;
  tool_prefix: string;
  started_at: string;
  ms: number;
  preflight: Preflight;
  checks: CheckResult[];
  /** The protocol version(s) negotiated, from the server's session log; absent when no session reached initialize. */
  protocol?: Negotiated;
  /** Each push path, when asked for (`--push`). Not part of `ok`: a runtime may rightly offer no push. */
  push?: PushResult[];
  /** True only when every check passed. */
  ok: boolean;
  workspace?: string;
}
