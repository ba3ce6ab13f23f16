import { Command, Option } from 'commander';
import { isPostgresUrl } from '../../attest/postgres.js';
import { WitnessError } from '../../core/errors.js';
import {
  addAgent,
  addCheckpointKey,
  assertRegistered,
  checkTailTarget,
  createRuntime,
  formatMessage,
  initMailbox,
  installMailbox,
  mailboxCheckpoint,
  mailboxVerifierKey,
  migrateMailbox,
  type MailboxLimits,
  type MailboxRuntime,
  RUNTIMES,
  type Runtime,
  recoverMailbox,
  serveHttp,
  serveStdio,
  tailMailbox,
  receiptCount,
  verifyMailbox,
} from '../../mailbox/index.js';
import { parseCommandArray, selfCommand } from '../self-command.js';
import { type CliContext, resolvePath } from '../context.js';
import { untilStopped } from '../signals.js';
import { extendsText, readCheckpointText } from '../verify/mailbox.js';
import { addWitnessVerifyOptions, witnessRequirements, type WitnessVerifyOptions } from '../verify/witness-options.js';
import { storeOption } from './mailbox-store.js';
import { addWitnessOptions, startWitnessing, type WitnessServeOptions } from './mailbox-witness.js';
import { formatExplanation, statusCommand } from './mailbox-status.js';
import { exportCommand, importCommand } from './mailbox-transfer.js';
import { type ServerCliOptions, serverAccess, withServerOptions } from '../server-options.js';

export function mailboxCommand(ctx: CliContext): Command {
  return new Command('mailbox')
    .summary('verified agent messaging: an MCP mailbox with a signed call log')
    .description(
      'A mailbox MCP server: durable per-agent inboxes, server-bound identities, and a call log where every tool call has a hash-chained, signed receipt that `verify` checks against the inboxes.',
    )
    .addHelpText(
      'after',
      '\nExample:\n  $ witness mailbox init ./mb && witness mailbox add-agent ./mb alice && witness mailbox add-agent ./mb bob\n  $ witness mailbox serve --dir ./mb --agent alice          # stdio, for one agent\n  $ witness mailbox verify ./mb',
    )
    .addCommand(_init(ctx))
    .addCommand(_migrate(ctx))
    .addCommand(_addAgent(ctx))
    .addCommand(_serve(ctx))
    .addCommand(_verify(ctx))
    .addCommand(_install(ctx))
    .addCommand(_tail(ctx))
    .addCommand(_recover(ctx))
    .addCommand(_checkpoint(ctx))
    .addCommand(statusCommand(ctx))
    .addCommand(exportCommand(ctx))
    .addCommand(importCommand(ctx));
}

function _init(ctx: CliContext): Command {
  return new Command('init')
    .description(
      "Create an empty mailbox in DIR and the server's signing key (mode 0600; by default under $XDG_CONFIG_HOME/witness/keys, outside DIR, where agents are not pointed). With --store postgres://… the messages, agents and call log live in that database, which every server of the mailbox, on any host, shares; DIR then holds only mailbox.json.",
    )
    .argument('<dir>', 'mailbox folder')
    .option('--key <path>', 'where to create the signing key')
    .option(
      '--store <store>',
      'jsonl, sqlite, a PostgreSQL URL (postgres://USER@HOST/DB, no password), or postgres for the URL in WITNESS_DATABASE_URL',
      'jsonl',
    )
    .addOption(new Option('--alg <alg>', 'receipt algorithm').choices(['ed25519', 'hmac-sha256']).default('ed25519'))
    .option('--json', 'print the result as JSON')
    .addHelpText(
      'after',
      '\nExamples:\n  $ witness mailbox init ./mb --store sqlite --key ./secrets/mailbox.key\n  $ witness mailbox init ./mb --store postgres:///witness     # one database per mailbox',
    )
    .action(async (dir: string, o: { key?: string; store: string; alg: 'ed25519' | 'hmac-sha256'; json?: boolean }) => {
      const { config } = await initMailbox(resolvePath(ctx, dir), {
        ...storeOption(o.store),
        alg: o.alg,
        ...(o.key ? { keyPath: resolvePath(ctx, o.key) } : {}),
      });
      if (o.json) return ctx.io.stdout(`${JSON.stringify(config, null, 2)}\n`);
      const where =
        config.store === 'postgres'
          ? `postgres, database ${config.database === 'postgres' ? '$WITNESS_DATABASE_URL' : config.database}`
          : config.store;
      ctx.io.stdout(
        `Created mailbox ${resolvePath(ctx, dir)} (${where}); receipts signed with ${config.signing.alg} key ${config.signing.kid}\nKey file: ${config.signing.key_path} (keep it away from agents)\n`,
      );
    });
}

function _migrate(ctx: CliContext): Command {
  return new Command('migrate')
    .description(
      "Create or upgrade a PostgreSQL mailbox's tables to this Witness's schema version: the only mailbox command that changes tables (besides init and import into a database without them), so servers and readers can run as roles without CREATE (docs/mailbox.md lists the grants each command needs). LOCATION is the mailbox folder, or its database URL before `init`. Run it as the role that owns the tables; a file mailbox has nothing to migrate.",
    )
    .argument('<location>', 'mailbox folder, a PostgreSQL URL, or postgres for the URL in WITNESS_DATABASE_URL')
    .option('--json', 'print {store, database, from, to} as JSON')
    .addHelpText(
      'after',
      '\nExamples:\n  $ witness mailbox migrate postgres:///witness            # as the owner, before `init` by a role without CREATE\n  $ witness mailbox migrate ./mb                          # after upgrading Witness, before starting its servers',
    )
    .action(async (location: string, o: { json?: boolean }) => {
      const where = location === 'postgres' || isPostgresUrl(location) ? location : resolvePath(ctx, location);
      const result = await migrateMailbox(where);
      if (o.json) return ctx.io.stdout(`${JSON.stringify(result)}\n`);
      if (result.from === undefined)
        return ctx.io.stdout(
          `Nothing to migrate: ${location} is a ${result.store} mailbox, whose data is in its folder.\n`,
        );
      ctx.io.stdout(
        result.from === result.to
          ? `The mailbox schema in ${result.database} is at version ${result.to} already; nothing was changed.\n`
          : `Migrated the mailbox schema in ${result.database} from version ${result.from} to ${result.to}.\n`,
      );
    });
}

function _addAgent(ctx: CliContext): Command {
  return new Command('add-agent')
    .description('Register an agent and print its HTTP bearer token (shown once; only its hash is stored).')
    .argument('<dir>', 'mailbox folder')
    .argument('<name>', 'agent name: 1–64 of A-Z a-z 0-9 _ . -, starting with a letter or digit')
    .option('--description <text>', 'shown by list_agents')
    .option('--json', 'print {name, token} as JSON')
    .addHelpText('after', '\nExample:\n  $ witness mailbox add-agent ./mb alice --description "planner"')
    .action(async (dir: string, name: string, o: { description?: string; json?: boolean }) => {
      const added = await addAgent(resolvePath(ctx, dir), name, o.description);
      if (o.json) return ctx.io.stdout(`${JSON.stringify(added)}\n`);
      ctx.io.stdout(`${added.token}\n`);
      ctx.io.stderr(`Registered ${name}. The line above is its HTTP bearer token; it is not shown again.\n`);
    });
}

interface ServeOptions extends ServerCliOptions {
  dir: string;
  agent?: string;
  http?: boolean;
  toolPrefix: string;
  key?: string;
  store?: string;
  maxBodyBytes?: string;
  rateLimit?: string;
  maxUnreadMessages?: string;
  maxUnreadBytes?: string;
  channel?: boolean;
  sessionLog?: string;
}

function _serve(ctx: CliContext): Command {
  const _collect = (v: string, all: string[]) => [...all, v];
  const command = withServerOptions(
    new Command('serve')
      .description(
        'Serve the mailbox over MCP: stdio for one agent (--agent), or Streamable HTTP for many (--http; each agent authenticates with its token).',
      )
      .requiredOption('--dir <dir>', 'mailbox folder')
      .option('--agent <name>', 'stdio: the agent this process acts for (or WITNESS_MAILBOX_AGENT)')
      .option('--http', 'serve Streamable HTTP at /mcp instead of stdio'),
    '1048576: 1 MiB',
    'HTTP: ',
  )
    .option('--tool-prefix <prefix>', "prefix every tool name (e.g. mailbox_) to avoid runtimes' built-ins", '')
    .option('--key <path>', 'signing key file (default: the one mailbox.json names)')
    .option('--store <kind>', 'jsonl, sqlite or postgres: must match the mailbox')
    .option('--max-body-bytes <n>', 'largest message body in bytes (default 65536)')
    .option('--rate-limit <n>', 'sends per minute per agent, 0 for none (default 600)')
    .option(
      '--max-unread-messages <n>',
      'unread messages one recipient may hold before sends to it are refused, 0 for no limit (default 10000)',
    )
    .option(
      '--max-unread-bytes <n>',
      'unread bytes one recipient may hold before sends to it are refused, 0 for no limit (default 67108864: 64 MiB)',
    )
    .option(
      '--channel',
      'push each new message from a registered agent into the session as a Claude Code channel event (notifications/claude/channel)',
    )
    .option(
      '--session-log <file>',
      'append one JSON line per session event: the MCP protocol version negotiated, subscriptions, each notification pushed (ids only, never a body)',
    )
    .addHelpText(
      'after',
      '\nExamples:\n  $ witness mailbox serve --dir ./mb --agent alice --tool-prefix mailbox_\n  $ witness mailbox serve --dir ./mb --agent alice --session-log sessions.jsonl   # what `witness probe` reads\n  $ witness mailbox serve --dir ./mb --http --port 8765     # prints the URL on stderr\n  $ witness mailbox serve --dir ./mb --agent alice --channel  # for Claude Code: see `witness mailbox install claude --channel`\n  $ witness mailbox serve --dir ./mb --http --witness http://w1.example:4501 --witness-key "witness.example/w1+6a1f03c2+BH3k…"',
    );
  return addWitnessOptions(command).action(async (o: ServeOptions & WitnessServeOptions) => {
    const agent = o.agent ?? process.env.WITNESS_MAILBOX_AGENT;
    if (!o.http && !agent)
      throw new WitnessError(
        'USAGE',
        'Say who this stdio server acts for with --agent NAME (or WITNESS_MAILBOX_AGENT), or serve many agents with --http.',
      );
    if (o.http && o.agent)
      throw new WitnessError(
        'USAGE',
        'Use either --agent (stdio, one agent) or --http (agents identified by their tokens), not both.',
      );
    if (!o.http && o.maxRequestBytes !== undefined)
      throw new WitnessError(
        'USAGE',
        '--max-request-bytes limits HTTP request bodies; add --http, or drop it (stdio has no request body).',
      );
    const runtime = await createRuntime({
      dir: resolvePath(ctx, o.dir),
      prefix: o.toolPrefix,
      limits: _limits(o),
      ...(o.channel ? { channel: true } : {}),
      ...(o.sessionLog ? { sessionLog: resolvePath(ctx, o.sessionLog) } : {}),
      ...(o.key !== undefined ? { keyPath: _keyPath(ctx, o.key) } : {}),
      ...(o.store ? { store: storeOption(o.store).store } : {}),
    });
    // Until it serves, a failure closes the store: a PostgreSQL pool and its LISTEN
    // connection left open would keep the process alive after the error is printed.
    let submitter: Awaited<ReturnType<typeof startWitnessing>>;
    const server = await _closingOnError(runtime, async () => {
      const recovery = recoverMailbox(runtime.store.dir, o.key !== undefined ? { keyPath: _keyPath(ctx, o.key) } : {});
      if (recovery?.problem)
        ctx.io.stderr(`witness mailbox: warning: ${recovery.problem}
`);
      if (!o.http) await assertRegistered(runtime, agent!);
      submitter = await startWitnessing(ctx, runtime, o, o.key !== undefined ? _keyPath(ctx, o.key) : undefined);
      if (!o.http) return undefined;
      return serveHttp(runtime, serverAccess(o)).catch(async (error: unknown) => {
        await submitter?.close().catch(() => undefined); // its own database connection would keep the process alive
        throw error;
      });
    });
    if (!server) {
      ctx.io.stderr(`witness mailbox: serving ${agent} over stdio (${runtime.store.dir})\n`);
      await serveStdio(runtime, agent!);
      return submitter?.close(); // the log's final checkpoint, once the last receipt is stored
    }
    const stopped = untilStopped(ctx); // listening before it says it is ready, so a signal right after the line is not missed
    ctx.io.stderr(`witness mailbox: listening on ${server.url}\n`);
    await stopped;
    await server.close();
    await submitter?.close();
  });
}

function _limits(o: ServeOptions): Partial<MailboxLimits> {
  return {
    ...(o.maxBodyBytes !== undefined ? { maxBodyBytes: _int(o.maxBodyBytes, '--max-body-bytes') } : {}),
    ...(o.rateLimit !== undefined ? { sendsPerMinute: _int(o.rateLimit, '--rate-limit') } : {}),
    ...(o.maxUnreadMessages !== undefined
      ? { maxUnreadMessages: _int(o.maxUnreadMessages, '--max-unread-messages') }
      : {}),
    ...(o.maxUnreadBytes !== undefined ? { maxUnreadBytes: _int(o.maxUnreadBytes, '--max-unread-bytes') } : {}),
  };
}

function _int(value: string, what: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0)
    throw new WitnessError('USAGE', `${what} must be a whole number ≥ 0, got ${JSON.stringify(value)}.`);
  return n;
}

async function _closingOnError<T>(runtime: MailboxRuntime, start: () => Promise<T>): Promise<T> {
  try {
    return await start();
  } catch (error) {
    await Promise.resolve(runtime.store.close()).catch(() => undefined); // the start's error is the one to report
    throw error;
  }
}

/** A --key value: an empty one is refused rather than read as "no key given" or as the current folder. */
function _keyPath(ctx: CliContext, key: string): string {
  if (key.trim() === '')
    throw new WitnessError(
      'USAGE',
      '--key is empty; give the path of the mailbox signing key, or leave --key out to use the one mailbox.json names.',
    );
  return resolvePath(ctx, key);
}

function _verify(ctx: CliContext): Command {
  const command = new Command('verify')
    .description(
      "Check the call log's hash chain and every receipt, and cross-check inboxes against the log. Exit 0 only when clean; each problem is printed with file, line and kind (forged, modified, reordered, deleted, corrupt, orphan, skipped).",
    )
    .argument('<dir>', 'mailbox folder')
    .option('--key <path>', 'key file to check receipts with')
    .option('--public-key <base64url>', 'pin the Ed25519 public key instead of trusting any file')
    .option('--explain <id>', 'also trace one message: where it is stored and every receipt that names it')
    .option(
      '--checkpoint <file>',
      'a checkpoint taken before (`witness mailbox checkpoint`): the log must be that log or an append-only extension (else truncated / inconsistent)',
    )
    .option('--json', 'print the report as JSON');
  return addWitnessVerifyOptions(command)
    .addHelpText(
      'after',
      '\nExamples:\n  $ witness mailbox verify ./mb --json | jq ".problems"\n  $ witness mailbox verify ./mb --explain msg_0b9c…\n  $ witness mailbox verify ./mb --checkpoint kept.checkpoint\n  $ witness mailbox verify ./mb --witness "witness.example/w1+6a1f03c2+BH3k…" --witness-url http://w1.example:4501',
    )
    .action(
      async (
        dir: string,
        o: {
          key?: string;
          publicKey?: string;
          explain?: string;
          checkpoint?: string;
          json?: boolean;
        } & WitnessVerifyOptions,
      ) => {
        if (o.key !== undefined && o.publicKey !== undefined)
          throw new WitnessError(
            'USAGE',
            'Give either --key or --public-key, not both: receipts are checked with one key.',
          );
        if (o.explain !== undefined && o.explain.trim() === '')
          throw new WitnessError('USAGE', '--explain is empty; give a message id (msg_…).');
        const report = await verifyMailbox(resolvePath(ctx, dir), {
          ...(o.key !== undefined ? { keyPath: _keyPath(ctx, o.key) } : {}),
          ...(o.publicKey !== undefined ? { publicKey: o.publicKey } : {}),
          ...(o.explain !== undefined ? { explain: o.explain } : {}),
          ...(o.checkpoint !== undefined ? { checkpoint: readCheckpointText(resolvePath(ctx, o.checkpoint)) } : {}),
          witnesses: witnessRequirements(o),
        });
        if (!report.ok) ctx.exitCode = 1;
        if (o.json) return ctx.io.stdout(`${JSON.stringify(report, null, 2)}\n`);
        if (report.explain) ctx.io.stdout(`${formatExplanation(report.explain)}\n`);
        for (const p of report.problems) ctx.io.stdout(`${p.file}:${p.line}: ${p.kind}: ${p.message}\n`);
        for (const w of report.warnings) ctx.io.stderr(`warning: ${w}\n`);
        ctx.io.stdout(
          `${report.ok ? 'OK' : 'FAILED'}: ${receiptCount(report)}, ${report.messages} messages, ${report.problems.length} problem(s); key ${report.key.kid} (${report.key.source})${report.ok ? extendsText(report, o.checkpoint) : ''}\n`,
        );
      },
    );
}

function _checkpoint(ctx: CliContext): Command {
  return new Command('checkpoint')
    .description(
      "Print the call log's current signed checkpoint (a C2SP signed note: origin witness.mailbox/<id>, size, RFC 6962 root; each leaf is one call-log line's exact text), signed with the mailbox's Ed25519 key — or, for an HMAC mailbox, its Ed25519 checkpoint key (init makes one; --create-key for a mailbox made before). Keep it where the mailbox's writers cannot reach (or have it witnessed): `verify --checkpoint` then proves nothing was cut off or rewritten since.",
    )
    .argument('<dir>', 'mailbox folder')
    .option(
      '--key <path>',
      "the key that signs: the mailbox's Ed25519 key, or an HMAC mailbox's checkpoint key (default: the one mailbox.json names)",
    )
    .option('--verifier-key', 'print the note verifier key of the checkpoints instead (give it to whoever checks them)')
    .option(
      '--create-key [path]',
      'HMAC mailbox without a checkpoint key: create its Ed25519 checkpoint key (default: beside its signing key, NAME.checkpoint.json) and record it in mailbox.json, then print the checkpoint',
    )
    .addHelpText(
      'after',
      '\nExamples:\n  $ witness mailbox checkpoint ./mb > kept.checkpoint\n  $ witness mailbox checkpoint ./mb >> kept.checkpoints   # keep one as the log grows: verify then names the first changed entry\n  $ witness mailbox checkpoint ./mb --verifier-key\n  $ witness mailbox checkpoint ./hmac-mb --create-key > kept.checkpoint',
    )
    .action(async (dir: string, o: { key?: string; verifierKey?: boolean; createKey?: string | true }) => {
      if (o.createKey !== undefined) {
        const made = addCheckpointKey(
          resolvePath(ctx, dir),
          o.createKey === true ? undefined : resolvePath(ctx, o.createKey),
        );
        ctx.io.stderr(
          `Created the checkpoint key ${made.kid} at ${made.key_path} (mailbox.json records it); receipts stay HMAC.\n`,
        );
      }
      const keyPath = o.key !== undefined ? { keyPath: _keyPath(ctx, o.key) } : {};
      if (o.verifierKey) return ctx.io.stdout(`${mailboxVerifierKey(resolvePath(ctx, dir), keyPath)}\n`);
      ctx.io.stdout(await mailboxCheckpoint(resolvePath(ctx, dir), keyPath));
    });
}

function _install(ctx: CliContext): Command {
  return new Command('install')
    .description(
      "Register the mailbox server in an agent runtime's MCP config. Merges into the existing file (never replaces other entries) and prints the diff.",
    )
    .addArgument(new Command().createArgument('<runtime>', RUNTIMES.join(' | ')).choices(RUNTIMES))
    .requiredOption('--dir <dir>', 'mailbox folder')
    .requiredOption('--agent <name>', 'the agent this runtime acts as')
    .option('--project <path>', 'project folder (default: current folder)')
    .addOption(
      new Option('--scope <scope>', "project file or the user's home config")
        .choices(['project', 'user'])
        .default('project'),
    )
    .option('--name <name>', 'server name in the config', 'witness-mailbox')
    .option('--tool-prefix <prefix>', 'tool name prefix the server uses', 'mailbox_')
    .option('--key <path>', 'signing key file, if not where mailbox.json says')
    .option('--server-command <json>', 'how to start witness, as a JSON array (default: this witness)')
    .option('--force', 'replace an existing entry with the same name')
    .option('--channel', 'claude only: push new mail into the session as channel events (prints the launch flag)')
    .option('--dry-run', 'print the diff without writing')
    .option('--json', 'print the result as JSON')
    .addHelpText(
      'after',
      '\nExamples:\n  $ witness mailbox install opencode --dir ./mb --agent alice --dry-run\n  $ witness mailbox install qwen --dir ./mb --agent bob --scope user\n  $ witness mailbox install claude --dir ./mb --agent carol --channel\n  $ witness mailbox install gemini --dir ./mb --agent dave --scope user   # ~/.gemini/settings.json; --force replaces an existing entry',
    )
    .action(
      (
        runtime: Runtime,
        o: {
          dir: string;
          agent: string;
          project?: string;
          scope: 'project' | 'user';
          name: string;
          toolPrefix: string;
          key?: string;
          serverCommand?: string;
          force?: boolean;
          channel?: boolean;
          dryRun?: boolean;
          json?: boolean;
        },
      ) => {
        const result = installMailbox({
          runtime,
          dir: resolvePath(ctx, o.dir),
          agent: o.agent,
          project: resolvePath(ctx, o.project ?? '.'),
          scope: o.scope,
          name: o.name,
          toolPrefix: o.toolPrefix,
          serverCommand: o.serverCommand ? parseCommandArray(o.serverCommand) : selfCommand(),
          ...(o.key ? { keyPath: resolvePath(ctx, o.key) } : {}),
          ...(o.force ? { force: true } : {}),
          ...(o.channel ? { channel: true } : {}),
          ...(o.dryRun ? { dryRun: true } : {}),
        });
        if (o.json) return ctx.io.stdout(`${JSON.stringify(result, null, 2)}\n`);
        ctx.io.stdout(result.diff);
        for (const n of result.notes) ctx.io.stderr(`${n}\n`);
        if (result.changed)
          ctx.io.stderr(result.written ? `Wrote ${result.file}\n` : `Dry run: ${result.file} not changed\n`);
      },
    );
}

function _tail(ctx: CliContext): Command {
  return new Command('tail')
    .description(
      'Follow messages as they are stored (for humans; moves no cursor): new ones only, or --all from the first. Ctrl-C to stop.',
    )
    .argument('<dir>', 'mailbox folder')
    .option('--agent <name>', 'only messages to this agent')
    .option('--all', 'start with the messages already stored')
    .option('--json', 'print each message as a JSON line')
    .addHelpText('after', '\nExample:\n  $ witness mailbox tail ./mb --all')
    .action(async (dir: string, o: { agent?: string; all?: boolean; json?: boolean }) => {
      const controller = new AbortController();
      void untilStopped(ctx).then(() => controller.abort());
      await checkTailTarget(resolvePath(ctx, dir), o.agent); // before saying it waits: never for nothing
      // On stderr, so stdout stays the messages: say that it waits, and for what.
      const which = o.agent ? ` to ${o.agent}` : '';
      ctx.io.stderr(
        o.all
          ? `Messages${which} in ${dir}, then waiting for new ones; Ctrl-C stops.\n`
          : `Waiting for new messages${which} in ${dir} (those already stored are shown with --all); Ctrl-C stops.\n`,
      );
      await tailMailbox(
        resolvePath(ctx, dir),
        (m) => ctx.io.stdout(o.json ? `${JSON.stringify(m)}\n` : `${formatMessage(m)}\n`),
        {
          signal: controller.signal,
          ...(o.agent ? { agent: o.agent } : {}),
          ...(o.all ? { fromStart: true } : {}),
        },
      );
    });
}

function _recover(ctx: CliContext): Command {
  return new Command('recover')
    .description(
      "Cut the unfinished write of a server that died holding the lock (servers also do this when they start). Nothing with a genuine, complete receipt is ever cut; a lock whose intent the mailbox key did not sign (or an earlier write's) is reported and not obeyed: exit 1.",
    )
    .argument('<dir>', 'mailbox folder')
    .option('--key <path>', 'signing key file (default: the one mailbox.json names)')
    .option('--json', 'print {recovered, intent?, cut?, problem?} as JSON')
    .addHelpText('after', '\nExample:\n  $ witness mailbox recover ./mb')
    .action((dir: string, o: { key?: string; json?: boolean }) => {
      const recovery = recoverMailbox(
        resolvePath(ctx, dir),
        o.key !== undefined ? { keyPath: _keyPath(ctx, o.key) } : {},
      );
      if (recovery?.problem) {
        ctx.exitCode = 1;
        ctx.io.stderr(`witness mailbox recover: ${recovery.problem}\n`);
      }
      if (o.json)
        return ctx.io.stdout(
          `${JSON.stringify(recovery?.problem ? { recovered: true, ...recovery } : { recovered: recovery !== undefined })}\n`,
        );
      ctx.io.stdout(recovery ? 'Rolled back an interrupted write.\n' : 'Nothing to recover.\n');
    });
}
