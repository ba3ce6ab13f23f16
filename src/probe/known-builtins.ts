/**
 * @module
 * The built-in tools of each runtime, per version, as last seen — the fallback for
 * the shadowing check when the runtime cannot list its own tools (not installed,
 * no listing command, or the listing failed). Each row says where it comes from;
 * the report repeats it, so a reader knows whether the names were asked of the
 * runtime or taken from here.
 */

export interface KnownBuiltins {
  runtime: string;
  /** The first version the row is known for; it holds until a later row. */
  since: string;
  tools: readonly string[];
  /** Where the names come from. */
  source: string;
}

const ROWS: readonly KnownBuiltins[] = [
  {
    runtime: 'qwen',
    since: '0.21.0',
    tools: ['send_message', 'list_agents'],
    source: 'the field report in mailbox.md (Qwen Code 0.21.13 always registers send_message and list_agents)',
  },
  {
    runtime: 'qwen',
    since: '0.24.4',
    // Its Agent Team's "SendMessage" and "ListAgents" are the display names of send_message and list_agents (ToolDisplayNames in the 0.24.4 bundle): the model is given the snake_case names.
    tools: [
      'get_goal',
      'update_goal',
      'tool_call',
      'tool_search',
      'agent',
      'read_mcp_resource',
      'list_agents',
      'send_message',
      'skill',
      'web_fetch',
      'zoom_image',
      'write_file',
      'run_shell_command',
      'report_findings',
      'record_artifact',
      'cron_create',
      'cron_list',
      'cron_delete',
      'loop_wakeup',
      'enter_worktree',
      'read_file',
      'exit_worktree',
      'monitor',
      'task_stop',
      'glob',
      'edit',
      'grep_search',
      'notebook_edit',
    ],
    source: 'the tool list Qwen Code 0.24.4 printed itself (stream-json init event), recorded by witness',
  },
  {
    runtime: 'opencode',
    since: '1.18.33',
    tools: [
      'invalid',
      'question',
      'bash',
      'read',
      'glob',
      'grep',
      'edit',
      'write',
      'task',
      'webfetch',
      'todowrite',
      'websearch',
      'skill',
    ],
    source: 'the tool list OpenCode 1.18.33 printed itself (opencode debug agent build), recorded by witness',
  },
  {
    runtime: 'claude',
    since: '2.1.328',
    // With an MCP server connected it also lists ListMcpResourcesTool, ReadMcpResourceTool and ReadMcpResourceDirTool.
    tools: [
      'Task',
      'Bash',
      'CronCreate',
      'CronDelete',
      'CronList',
      'Edit',
      'EnterWorktree',
      'ExitWorktree',
      'ListAgents',
      'Monitor',
      'NotebookEdit',
      'Read',
      'ReportFindings',
      'ScheduleWakeup',
      'SendMessage',
      'Skill',
      'TaskStop',
      'ToolSearch',
      'WebFetch',
      'WebSearch',
      'Workflow',
      'Write',
    ],
    source: 'the tool list Claude Code 2.1.328 printed itself (stream-json init event), recorded by witness',
  },
  {
    runtime: 'codex',
    since: '0.169.0',
    tools: [
      'exec_command',
      'write_stdin',
      'list_mcp_resources',
      'list_mcp_resource_templates',
      'read_mcp_resource',
      'request_user_input',
      'view_image',
      'multi_agent_v1.close_agent',
      'multi_agent_v1.resume_agent',
      'multi_agent_v1.send_input',
      'multi_agent_v1.spawn_agent',
      'multi_agent_v1.wait_agent',
      'get_goal',
      'create_goal',
      'update_goal',
      'web_search',
    ],
    source: 'the tools Codex 0.169.0 sent with its first model request, recorded by witness',
  },
  {
    runtime: 'gemini',
    since: '0.61.0',
    tools: [
      'update_topic',
      'list_directory',
      'read_file',
      'grep_search',
      'glob',
      'replace',
      'write_file',
      'web_fetch',
      'read_mcp_resource',
      'list_mcp_resources',
      'run_shell_command',
      'list_background_processes',
      'read_background_output',
      'google_web_search',
      'enter_plan_mode',
      'invoke_agent',
      'activate_skill',
    ],
    source: 'the functionDeclarations Gemini CLI 0.61.0 sent with its first model request, recorded by witness',
  },
  {
    runtime: 'openhands',
    since: '1.0.0',
    tools: ['terminal', 'file_editor', 'task_tracker', 'delegate', 'finish', 'think'],
    source:
      'the OpenHands software-agent-sdk default preset in CLI mode (no browser tools); not checked against a running OpenHands CLI',
  },
];

/** The row for this runtime and version: the latest row at or below it; the newest row when the version is unknown or older than every row. */
export function knownBuiltins(runtime: string, version?: string): { row: KnownBuiltins; exact: boolean } | undefined {
  const rows = ROWS.filter((r) => r.runtime === runtime).sort((a, b) => compareVersions(a.since, b.since));
  if (rows.length === 0) return undefined;
  const fits = version ? rows.filter((r) => compareVersions(r.since, version) <= 0) : [];
  return fits.length > 0 ? { row: fits[fits.length - 1]!, exact: true } : { row: rows[rows.length - 1]!, exact: false };
}

/** Compares dotted numeric versions (`0.24.4` < `0.24.10`); anything after the numbers is ignored. */
export function compareVersions(a: string, b: string): number {
  const parts = (v: string) => (/^\d+(\.\d+)*/.exec(v)?.[0] ?? '0').split('.').map(Number);
  const [x, y] = [parts(a), parts(b)];
  for (let i = 0; i < Math.max(x.length, y.length); i++) {
    const d = (x[i] ?? 0) - (y[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}
