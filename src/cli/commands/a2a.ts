/**
 * @module
 * `witness a2a …`: A2A agents with attested results (docs/a2a.md). `serve` runs the
 * child agent, `send` delegates a task to one and verifies the answer (a2a-send.ts),
 * `cosigner` the parent's co-signing service, `tool` the MCP evidence tool, `card
 * verify` checks a card against your own key directory, and `bench` runs experiment
 * E12. The library is `src/a2a`; this file parses and prints.
 */
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { Command, InvalidArgumentError, Option } from 'commander';
import { DEFAULT_AGENT_MAX_REQUEST_BYTES, serveChildAgent } from '../../a2a/agent.js';
import { AGENT_BACKENDS, chooseAgentBackend } from '../../a2a/agent-backend.js';
import { fetchAgentCard, parseCardText, verifyAgentCard } from '../../a2a/card.js';
import {
  CosignService,
  DEFAULT_COSIGNER_MAX_REQUEST_BYTES,
  readAdminTokenFile,
  serveCosigner,
} from '../../a2a/cosigner.js';
import { runE12 } from '../../a2a/e12.js';
import { formatE12Summary } from '../../a2a/e12-summary.js';
import { DEFAULT_STREAM_RELEASE, STREAM_RELEASE_POLICIES } from '../../a2a/stream-release.js';
import { IN_MEMORY } from '../../a2a/task-store.js';
import { DEFAULT_TOOL_MAX_REQUEST_BYTES, serveEvidenceTool } from '../../a2a/tool-server.js';
import { readNamedFile } from '../../attest/files.js';
import {
  isPostgresUrl,
  loadKeyDirectory,
  readKeyFile,
  resolveDatabaseUrl,
  type StreamPolicy,
} from '../../attest/index.js';
import { writeFileAtomic } from '../../core/atomic-write.js';
import { WitnessError } from '../../core/errors.js';
import { wholeNumber } from '../args.js';
import { type CliContext, checkOutPath, resolvePath } from '../context.js';
import { interruptedExitCode, stopOnSignal, untilStopped } from '../signals.js';
import { sendCommand } from './a2a-send.js';
import { type ServerCliOptions, serverAccess, withServerOptions } from '../server-options.js';

export function a2aCommand(ctx: CliContext): Command {
  return new Command('a2a')
    .summary('A2A agents with attested results: serve, send and verify, the co-signing service, experiment E12')
    .description(
      "Serve an A2A v1.0 child agent whose results carry a release receipt and delegation-edge evidence; delegate a task to one and verify the answer (send); run the parent's fail-closed co-signing service and the MCP evidence tool; verify signed Agent Cards; run experiment E12.",
    )
    .addHelpText(
      'after',
      '\nExample:\n  $ witness a2a tool --port 4200\n  $ witness a2a cosigner --key parent.key.json --port 4300\n  $ witness a2a serve --key child.key.json --tool http://127.0.0.1:4200/mcp --cosigner org-parent=http://127.0.0.1:4300 --port 4100\n  $ witness a2a card verify http://127.0.0.1:4100 --keys trusted.json\n  $ witness a2a send http://127.0.0.1:4100 "Inspect lot 7." --keys trusted.json --key parent.key.json --cosigner http://127.0.0.1:4300 --admin-token-file grants.token\n  $ witness a2a bench --trials 30 --warmup 10 --out results.json',
    )
    .addCommand(_serve(ctx))
    .addCommand(sendCommand(ctx))
    .addCommand(_card(ctx))
    .addCommand(_cosigner(ctx))
    .addCommand(_tool(ctx))
    .addCommand(_bench(ctx));
}

/** The options every server command shares: where it binds and whom it answers. */
/** The server options, and --json (print the ready line as JSON). */
interface ServerOptions extends ServerCliOptions {
  json?: boolean;
}

interface ServeOptions extends ServerOptions {
  key: string;
  streamPolicy: StreamPolicy;
  checkpointEvery: number;
  checkpointMs: number;
  taskStore?: string;
  tool: string;
  cosigner: string[];
  cosignTimeout: number;
  agent: (typeof AGENT_BACKENDS)[number];
  endpoint?: string;
  model?: string;
  name?: string;
}

function _serve(ctx: CliContext): Command {
  return withServerOptions(new Command('serve'), String(DEFAULT_AGENT_MAX_REQUEST_BYTES))
    .description(
      'Serve the child A2A agent: signed Agent Card at /.well-known/agent-card.json, JSON-RPC SendMessage (v1.0) and message/send (v0.3), and HTTP+JSON (v1.0). Every message starts a task whose answer is an artifact released through the runtime signer; under dag the parent must co-sign, or the task fails (fail closed). Tasks are kept in --task-store and survive a restart. Runs until interrupted.',
    )
    .requiredOption('--key <file>', "the child deployer's key file (the runtime holds it; the agent never sees it)")
    .requiredOption('--tool <url>', 'MCP endpoint of the evidence tool (witness a2a tool)')
    .option(
      '--cosigner <deployer=url...>',
      "a parent deployer's co-signing service, e.g. org-parent=http://127.0.0.1:4300",
      [],
    )
    .option('--cosign-timeout <ms>', 'longest wait for a co-signature; then the task fails', wholeNumber(1), 5000)
    .addOption(
      new Option(
        '--agent <backend>',
        'what answers tasks (policy: model-free, deterministic; llm: an OpenAI-compatible server; embedded: a local GGUF file)',
      )
        .choices([...AGENT_BACKENDS])
        .default('policy'),
    )
    .option('--endpoint <url>', 'for --agent llm: OpenAI-compatible base URL, e.g. http://127.0.0.1:8000/v1')
    .option('--model <name>', 'for --agent llm: model name; for --agent embedded: the GGUF file')
    .option('--name <name>', 'agent name on the card')
    .option(
      '--task-store <file|url>',
      'where tasks are kept: a SQLite file (default: KEY.tasks.sqlite beside the key file), postgres://… (or postgres: $WITNESS_DATABASE_URL) for agents on several machines, or :memory:',
    )
    .option(
      '--stream-policy <policy>',
      'how an answer a client asked to stream (SendStreamingMessage) is cut, named in every chunk receipt: chunk (a line per chunk), tokens:N (N words per chunk) or turn (the whole answer in one)',
      _streamPolicy,
      DEFAULT_STREAM_RELEASE.policy,
    )
    .option(
      '--checkpoint-every <n>',
      "sign a checkpoint of a streamed answer at least every N chunks (with the runtime's key)",
      wholeNumber(1),
      DEFAULT_STREAM_RELEASE.checkpointEvery.chunks,
    )
    .option(
      '--checkpoint-ms <ms>',
      'and with the first chunk T ms or more after the last checkpoint',
      wholeNumber(1),
      DEFAULT_STREAM_RELEASE.checkpointEvery.ms,
    )
    .option('--json', 'print {"url", "card_url"} as one JSON line when ready')
    .addHelpText(
      'after',
      '\nExample:\n  $ witness a2a serve --key child.key.json --tool http://127.0.0.1:4200/mcp --cosigner org-parent=http://127.0.0.1:4300 --port 4100\n  $ witness a2a serve --key child.key.json --tool http://127.0.0.1:4200/mcp --stream-policy tokens:8 --checkpoint-every 16\n  $ witness a2a serve --key child.key.json --tool http://127.0.0.1:4200/mcp --task-store postgres://witness@db.internal/a2a',
    )
    .action(async (o: ServeOptions) => {
      const backend = chooseAgentBackend(o);
      const keyPath = resolvePath(ctx, o.key);
      const agent = await serveChildAgent({
        key: readKeyFile(keyPath),
        taskStore: _taskStore(ctx, o.taskStore, keyPath),
        toolUrl: o.tool,
        cosigners: _cosigners(o.cosigner),
        cosignTimeoutMs: o.cosignTimeout,
        backend,
        stream: { policy: o.streamPolicy, checkpointEvery: { chunks: o.checkpointEvery, ms: o.checkpointMs } },
        ...serverAccess(o),
        ...(o.name ? { name: o.name } : {}),
      });
      const cardUrl = `${agent.url}/.well-known/agent-card.json`;
      const stopped = untilStopped(ctx); // listening before it says it is ready, so a signal right after the line is not missed
      ctx.io.stdout(
        o.json
          ? `${JSON.stringify({ url: agent.url, card_url: cardUrl })}\n`
          : `A2A agent ${agent.url} (card ${cardUrl}); Ctrl-C stops it.\n`,
      );
      await stopped;
      await agent.close();
    });
}

/** `--task-store`: a URL or `:memory:` as given, a file relative to the working folder, by default beside the key. */
function _taskStore(ctx: CliContext, value: string | undefined, keyPath: string): string {
  if (value === undefined) return join(dirname(keyPath), `${basename(keyPath).replace(/\.json$/i, '')}.tasks.sqlite`);
  const store = resolveDatabaseUrl(value, '--task-store');
  return store === IN_MEMORY || isPostgresUrl(store) ? store : resolvePath(ctx, store);
}

/** `--stream-policy`: a policy a child can keep when it cuts its answer. */
function _streamPolicy(value: string): StreamPolicy {
  if (!/^(chunk|turn|tokens:[1-9][0-9]{0,8})$/.test(value))
    throw new InvalidArgumentError(
      `"${value}" is none of ${STREAM_RELEASE_POLICIES.join(', ')} (N a whole number from 1); the child makes no tool call per chunk, so tool-call does not apply.`,
    );
  return value;
}

function _cosigners(specs: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const spec of specs) {
    const m = /^([\x21-\x3c\x3e-\x7e]{1,128})=(https?:\/\/\S+)$/.exec(spec);
    if (!m?.[1] || !m[2])
      throw new WitnessError(
        'USAGE',
        `--cosigner ${JSON.stringify(spec)} must be DEPLOYER=URL, e.g. org-parent=http://127.0.0.1:4300`,
      );
    out[m[1]] = m[2];
  }
  return out;
}

function _card(ctx: CliContext): Command {
  const verify = new Command('verify')
    .description(
      "Fetch an Agent Card and verify its JWS signatures against YOUR key directory (never the card's own keys or jku). Exit 0 valid, 1 invalid, 2 usage error.",
    )
    .argument('<url>', "the agent's base URL, or the card URL (…/agent-card.json), or a card file")
    .requiredOption('--keys <file>', 'your own key directory (witness keys add)')
    .option('--json', 'print {ok, kid, deployer, reasons}')
    .addHelpText(
      'after',
      '\nExample:\n  $ witness a2a card verify http://127.0.0.1:4100 --keys trusted.json\n  $ witness a2a card verify ./card.json --keys trusted.json --json',
    )
    .action(async (url: string, o: { keys: string; json?: boolean }) => {
      const directory = loadKeyDirectory(resolvePath(ctx, o.keys));
      const card = /^https?:\/\//.test(url) ? await fetchAgentCard(url) : _readCardFile(resolvePath(ctx, url));
      const result = verifyAgentCard(card, directory);
      if (o.json) ctx.io.stdout(`${JSON.stringify(result, null, 2)}\n`);
      else if (result.ok)
        ctx.io.stdout(
          `valid: the card is signed by ${result.kid}, which your directory trusts for ${result.deployer}.\n`,
        );
      else ctx.io.stdout(`invalid:\n${result.reasons.map((r) => `  ${r.code.padEnd(20)} ${r.message}`).join('\n')}\n`);
      if (!result.ok) ctx.exitCode = 1;
    });
  return new Command('card').description('Agent Card tools').addCommand(verify);
}

function _readCardFile(path: string): unknown {
  const text = readNamedFile(path, 'card file', { whenMissing: 'Give a URL (http://…) or a card file.' }).toString(
    'utf8',
  );
  return parseCardText(text, path);
}

function _cosigner(ctx: CliContext): Command {
  return withServerOptions(new Command('cosigner'), String(DEFAULT_COSIGNER_MAX_REQUEST_BYTES))
    .description(
      "The parent deployer's co-signing service: co-signs a dag edge only for a delegation it issued (a grant: task id, child deployer, parent receipt, expiry), once (twice for a streamed answer's grant of two edges), for the holder of the grant's credential. POST /grants needs the admin token and answers the grant's cosign_token; POST /cosign needs that token and answers 200 {signature} or 403 refused. Runs until interrupted.",
    )
    .requiredOption('--key <file>', "the parent deployer's key file")
    .option(
      '--admin-token-file <file>',
      'file holding the token for POST /grants; a missing file is created (mode 0600) with a random token (default: a random token, printed)',
    )
    .option('--json', 'print {"url", "admin_token"} as one JSON line when ready')
    .addHelpText(
      'after',
      '\nExample:\n  $ witness a2a cosigner --key parent.key.json --port 4300 --admin-token-file grants.token\n  $ curl -H "Authorization: Bearer $(cat grants.token)" -d \'{"task_id":"t1","child_deployer":"org-child","parent_digest":"…","expires_at":1767225600000}\' http://127.0.0.1:4300/grants\n  {"ok":true,"cosign_token":"…"}    # give it to the child with the delegation',
    )
    .action(async (o: ServerOptions & { key: string; adminTokenFile?: string }) => {
      const service = new CosignService(readKeyFile(resolvePath(ctx, o.key)));
      const adminToken = o.adminTokenFile ? _adminToken(ctx, resolvePath(ctx, o.adminTokenFile)) : undefined;
      const server = await serveCosigner(service, { ...serverAccess(o), ...(adminToken ? { adminToken } : {}) });
      const token = o.adminTokenFile ? undefined : server.adminToken;
      const stopped = untilStopped(ctx); // listening before it says it is ready, so a signal right after the line is not missed
      ctx.io.stdout(
        o.json
          ? `${JSON.stringify({ url: server.url, ...(token ? { admin_token: token } : {}) })}\n`
          : `Co-signer for ${service.deployer} at ${server.url}${token ? `; admin token ${token}` : ''}; Ctrl-C stops it.\n`,
      );
      await stopped;
      await server.close();
    });
}

/**
 * The admin token from its file: one line of printable text, not empty. A missing file
 * is created with a fresh token, mode 0600 and never over an existing one, so the
 * documented `--admin-token-file grants.token` works on the first run and the parent's
 * runtime reads the same token from the same file.
 */
function _adminToken(ctx: CliContext, path: string): string {
  if (!existsSync(path)) {
    const fresh = randomBytes(24).toString('base64url');
    try {
      writeFileAtomic(path, `${fresh}\n`, { mode: 0o600, exclusive: true });
      ctx.io.stderr(`Created the admin token file ${path} (mode 0600) with a random token.\n`);
      return fresh;
    } catch (cause) {
      if ((cause as NodeJS.ErrnoException).code !== 'EEXIST')
        throw new WitnessError(
          'IO',
          `Cannot create the admin token file ${path}: ${(cause as Error).message}. Create it yourself: head -c 24 /dev/urandom | base64 > ${path}; chmod 600 ${path}`,
          { cause },
        );
    }
  }
  return readAdminTokenFile(path);
}

function _tool(ctx: CliContext): Command {
  return withServerOptions(new Command('tool'), String(DEFAULT_TOOL_MAX_REQUEST_BYTES))
    .description(
      'The MCP tool server (Streamable HTTP, stateless) with get_evidence, which the child agent calls. Runs until interrupted.',
    )
    .option('--json', 'print {"url"} as one JSON line when ready')
    .addHelpText('after', '\nExample:\n  $ witness a2a tool --port 4200     # MCP endpoint http://127.0.0.1:4200/mcp')
    .action(async (o: ServerOptions) => {
      const server = await serveEvidenceTool(serverAccess(o));
      const stopped = untilStopped(ctx); // listening before it says it is ready, so a signal right after the line is not missed
      ctx.io.stdout(
        o.json ? `${JSON.stringify({ url: server.url })}\n` : `MCP tool server ${server.url}; Ctrl-C stops it.\n`,
      );
      await stopped;
      await server.close();
    });
}

function _bench(ctx: CliContext): Command {
  return new Command('bench')
    .description(
      'Experiment E12: three loopback processes (this one: parent + co-signer; the child agent; the MCP tool), conditions none / chain / dag / dag+stream (dag with the answer streamed with chunk receipts, each trial recording its stream) interleaved after warm-ups, one record per trial, the child-key-only forgery, a summary table. Check the file with: witness verify results.json',
    )
    .option('--trials <n>', 'trials per condition', wholeNumber(1), 30)
    .option('--warmup <n>', 'warm-up trials per condition (not recorded)', wholeNumber(0), 10)
    .addOption(new Option('--agent <backend>', 'child agent backend').choices([...AGENT_BACKENDS]).default('policy'))
    .option('--endpoint <url>', 'for --agent llm: OpenAI-compatible base URL')
    .option('--model <name>', 'for --agent llm: model name; for --agent embedded: the GGUF file')
    .requiredOption('--out <file>', 'where to write the results JSON')
    .option('--json', 'print the summary as JSON instead of a table')
    .addHelpText(
      'after',
      '\nExample:\n  $ witness a2a bench --trials 30 --warmup 10 --out results.json\n  $ witness verify results.json\n  $ witness a2a bench --agent llm --endpoint http://127.0.0.1:8000/v1 --model qwen3-4b --out results-llm.json',
    )
    .action(
      async (o: {
        trials: number;
        warmup: number;
        agent: string;
        endpoint?: string;
        model?: string;
        out: string;
        json?: boolean;
      }) => {
        await chooseAgentBackend(o).close?.(); // checks the options before any process starts
        const out = resolvePath(ctx, o.out);
        checkOutPath(out); // before the run, not after minutes of trials
        const stop = stopOnSignal();
        const results = await runE12({
          trials: o.trials,
          warmup: o.warmup,
          agent: o.agent,
          ...(o.endpoint ? { endpoint: o.endpoint } : {}),
          ...(o.model ? { model: o.model } : {}),
          onProgress: (done, total) => {
            if (ctx.io.isTTY) ctx.io.stderr(`\r${done}/${total} trials`);
            // A log gets a line per tenth, so a long run shows it is moving.
            else if (done === total || Math.floor((done * 10) / total) > Math.floor(((done - 1) * 10) / total))
              ctx.io.stderr(`${done}/${total} trials\n`);
          },
          signal: stop.signal,
        }).finally(stop.dispose);
        if (results.interrupted) {
          ctx.exitCode = interruptedExitCode(stop.by);
          if (results.trials.length === 0) {
            ctx.io.stderr(
              `${ctx.io.isTTY ? '\n' : ''}witness: interrupted during the warm-ups, before any trial was recorded: nothing written to ${out}.\n`,
            );
            return;
          }
        }
        writeFileAtomic(out, `${JSON.stringify(results, null, 2)}\n`); // evidence: all or nothing, durable
        if (o.json)
          ctx.io.stdout(
            `${JSON.stringify({ summary: results.summary, forgery: results.forgery.map(({ construction, accepted, reasons }) => ({ construction, accepted, reasons })), overhead_dag_vs_none_ms: results.overhead_dag_vs_none_ms, overhead_dag_vs_none_paired_median_ms: results.overhead_dag_vs_none_paired_median_ms, overhead_dag_vs_none_cpu_ms: results.overhead_dag_vs_none_cpu_ms, overhead_chain_vs_none_ms: results.overhead_chain_vs_none_ms, overhead_dag_stream_vs_none_ms: results.overhead_dag_stream_vs_none_ms, overhead_dag_stream_vs_dag_ms: results.overhead_dag_stream_vs_dag_ms, overhead_dag_stream_vs_none_cpu_ms: results.overhead_dag_stream_vs_none_cpu_ms, ...(results.interrupted ? { interrupted: results.interrupted } : {}), out }, null, 2)}\n`,
          );
        else
          ctx.io.stdout(
            `${ctx.io.isTTY ? '\n' : ''}${formatE12Summary(results)}\nresults: ${out} (check with: witness verify ${o.out})\n`,
          );
        if (results.interrupted) {
          const { trials_recorded: n, trials_planned: of } = results.interrupted;
          ctx.io.stderr(
            `witness: interrupted after ${n} of ${of} trials: ${out} holds those ${n}, marked interrupted (witness verify reports it as partial, not as a complete run). Rerun the bench for a complete one.\n`,
          );
          return;
        }
        const allVerified = results.summary.every((s) => s.verified === s.n);
        const forgeryAsExpected = results.forgery.every((f) => (f.construction === 'chain' ? f.accepted : !f.accepted));
        if (!allVerified || !forgeryAsExpected) ctx.exitCode = 1;
      },
    );
}
