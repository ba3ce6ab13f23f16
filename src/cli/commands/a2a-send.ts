/**
 * @module
 * `witness a2a send URL TEXT`: the parent's side of one delegation as a command
 * (docs/a2a.md §4). It verifies the child's card against your directory, signs the
 * task, records the dag grant with your running co-signer (authenticated by its admin
 * token), sends the task, follows the answer and verifies it before printing it. Exit
 * 0 only when the answer verified; 1 when it did not, the task failed or the child or
 * co-signer refused; 2 for usage; 130 on Ctrl-C. The library is `src/a2a/send.ts`.
 */
import { rmSync } from 'node:fs';
import { Command, Option } from 'commander';
import { httpGrant, readAdminTokenFile } from '../../a2a/cosigner.js';
import { CONDITIONS, type Condition } from '../../a2a/metadata.js';
import { DEFAULT_SEND_TIMEOUT_MS, type SendTaskResult, sendTask } from '../../a2a/send.js';
import {
  loadKeyDirectory,
  readKeyFile,
  recordStreamToFile,
  type StreamRecorder,
  type StreamRef,
} from '../../attest/index.js';
import { writeFileAtomic } from '../../core/atomic-write.js';
import { WitnessError } from '../../core/errors.js';
import { wholeNumber } from '../args.js';
import { type CliContext, checkOutPath, resolvePath } from '../context.js';
import { interruptedExitCode, stopOnSignal } from '../signals.js';
import { delegationVerdict, streamSummary } from '../verify/delegation.js';
import { openNoncesOption } from '../verify/receipts.js';
import { formatProblems } from './verify.js';

interface SendCliOptions {
  keys: string;
  construction?: Condition;
  key?: string;
  cosigner?: string;
  adminTokenFile?: string;
  nonces?: string;
  stream?: boolean;
  streamOut?: string;
  timeout: number;
  out?: string;
  json?: boolean;
}

export function sendCommand(ctx: CliContext): Command {
  return new Command('send')
    .description(
      "Delegate a task to a running A2A child agent (witness a2a serve) and verify the answer before accepting it: the child's signed Agent Card against YOUR key directory, your task receipt (chain, dag), the grant recorded with your co-signer (dag), then every result's receipts over the exact bytes received. Exit 0 verified, 1 not verified (reason codes printed) or the task failed, 2 usage error.",
    )
    .argument('<url>', "the child agent's base URL (or its card URL, …/agent-card.json)")
    .argument('<text>', 'the task to delegate, as text')
    .requiredOption(
      '--keys <file>',
      "your own key directory: it must trust the child's key and, for chain and dag, yours",
    )
    .addOption(
      new Option(
        '--construction <c>',
        'ancestry construction, pinned when verifying (default: dag with --cosigner, chain with --key alone, none without --key)',
      ).choices([...CONDITIONS]),
    )
    .option('--key <file>', "your (the parent deployer's) key file: signs the task receipt under chain and dag")
    .option('--cosigner <url>', 'your co-signing service (witness a2a cosigner), where a dag grant is recorded')
    .option(
      '--admin-token-file <file>',
      "the co-signer's admin token, the file it was started with (witness a2a cosigner --admin-token-file)",
    )
    .option(
      '--nonces <db>',
      'nonce store shared with your other verifiers (a SQLite file or a postgres:// URL): an answer replayed to you is REPLAY',
    )
    .option(
      '--stream',
      "SendStreamingMessage: print text as it arrives, unverified until the verdict line; every chunk's receipt is recorded and checked",
    )
    .option(
      '--stream-out <file>',
      'with --stream: write the recorded stream as it arrives (JSON Lines; check it with witness verify FILE); the record (--out) embeds it too',
    )
    .option(
      '--timeout <ms>',
      "longest wait for the whole delegation; also the task receipt's and the grant's lifetime",
      wholeNumber(1),
      DEFAULT_SEND_TIMEOUT_MS,
    )
    .option('--out <file>', 'write the delegation record (card, task, answer, verdict); check it with witness verify')
    .option('--json', 'print {ok, summary, output, problems, …} as JSON')
    .addHelpText(
      'after',
      '\nExample:\n  $ witness a2a send http://127.0.0.1:4100 "Inspect lot 7." --keys trusted.json --key parent.key.json \\\n      --cosigner http://127.0.0.1:4300 --admin-token-file grants.token --out delegation.json\n  $ witness verify delegation.json --keys trusted.json\n  $ witness a2a send http://127.0.0.1:4100 "Inspect lot 7." --keys trusted.json --key parent.key.json --stream --stream-out stream.jsonl\n  $ witness verify stream.jsonl --keys trusted.json\n  $ witness a2a send http://127.0.0.1:4100 "Inspect lot 7." --keys trusted.json   # construction none: no delegation evidence',
    )
    .action(async (url: string, text: string, o: SendCliOptions) => {
      const construction = _checkedConstruction(url, text, o);
      const out = o.out === undefined ? undefined : resolvePath(ctx, o.out);
      if (out) checkOutPath(out); // before anything is signed or sent
      const streamOut = o.streamOut === undefined ? undefined : resolvePath(ctx, o.streamOut);
      if (streamOut) checkOutPath(streamOut);
      const recordings: Array<StreamRecorder & { close(): void }> = [];
      const directory = loadKeyDirectory(resolvePath(ctx, o.keys));
      const key = o.key === undefined ? undefined : readKeyFile(resolvePath(ctx, o.key));
      const cosigner = o.cosigner;
      const adminToken = o.adminTokenFile ? readAdminTokenFile(resolvePath(ctx, o.adminTokenFile)) : undefined;
      const nonceStore = o.nonces ? await openNoncesOption(ctx, o.nonces) : undefined;
      const stop = stopOnSignal();
      let streamed: string | undefined; // the last chunk printed
      let announced = false;
      let result: SendTaskResult;
      try {
        result = await sendTask(url, text, {
          directory,
          construction,
          ...(key ? { key } : {}),
          ...(cosigner && adminToken
            ? { grant: (g) => httpGrant(cosigner, g, { adminToken, timeoutMs: o.timeout }) }
            : {}),
          ...(nonceStore ? { nonceStore } : {}),
          ...(o.stream && !o.json
            ? {
                stream: true,
                onText: (chunk: string) => {
                  // Said once, on stderr, so stdout stays the answer then its verdict.
                  if (!announced)
                    ctx.io.stderr('stream: the answer as it arrives, unverified until the verdict line after it\n');
                  announced = true;
                  if (chunk !== '') streamed = chunk;
                  ctx.io.stdout(chunk);
                },
              }
            : { stream: o.stream === true }),
          ...(streamOut ? { alsoRecord: (stream: StreamRef) => _recordTo(streamOut, stream, recordings) } : {}),
          timeoutMs: o.timeout,
          signal: stop.signal,
        });
        await nonceStore?.prune(Date.now()); // as witness verify does: by the real clock
      } catch (error) {
        if (!stop.signal.aborted) throw error;
        // Stopped: whatever failed on the way out, the answer is that nothing was verified.
        ctx.exitCode = interruptedExitCode(stop.by);
        ctx.io.stderr(
          `witness: ${error instanceof WitnessError && error.code === 'CANCELLED' ? error.message : `interrupted: ${(error as Error).message}`}\n`,
        );
        return;
      } finally {
        stop.dispose();
        await nonceStore?.close();
        for (const r of recordings) r.close();
      }
      if (out) writeFileAtomic(out, `${JSON.stringify(result.record, null, 2)}\n`);
      _print(ctx, result, { construction, streamed, json: o.json === true, out: out ? o.out : undefined });
      if (o.streamOut) _noteStreamOut(ctx, o.streamOut, result.streams.length);
      if (!result.ok) ctx.exitCode = 1;
    });
}

/** The arguments checked, and the construction asked for (or derived) with every option checked against it: none is ignored. */
function _checkedConstruction(url: string, text: string, o: SendCliOptions): Condition {
  if (!/^https?:\/\/\S+$/.test(url))
    throw new WitnessError('USAGE', `${JSON.stringify(url)} is not an http(s) URL; give the child agent's base URL.`);
  if (text.trim() === '') throw new WitnessError('USAGE', 'The task text is empty: give the task to delegate.');
  if (o.cosigner !== undefined && !/^https?:\/\/\S+$/.test(o.cosigner))
    throw new WitnessError('USAGE', `--cosigner ${JSON.stringify(o.cosigner)} is not an http(s) URL.`);
  const construction = o.construction ?? (o.cosigner ? 'dag' : o.key ? 'chain' : 'none');
  const usage = (message: string) => new WitnessError('USAGE', message);
  if (construction === 'none' && o.key)
    throw usage(
      '--key applies to chain and dag: under none the parent signs nothing. Drop it, or choose chain or dag.',
    );
  if (construction !== 'none' && !o.key)
    throw usage(`--construction ${construction} signs the task: give your key with --key FILE.`);
  if (construction !== 'dag' && o.cosigner)
    throw usage(`--cosigner applies to dag only: ${construction} records no grant. Drop it, or choose dag.`);
  if (construction === 'dag' && !o.cosigner)
    throw usage(
      '--construction dag needs your co-signing service: --cosigner URL --admin-token-file FILE (witness a2a cosigner).',
    );
  if (o.cosigner && !o.adminTokenFile)
    throw usage(
      '--cosigner needs --admin-token-file FILE: the co-signer records grants only for the holder of its admin token.',
    );
  if (o.adminTokenFile && !o.cosigner) throw usage('--admin-token-file applies only with --cosigner URL.');
  if (o.streamOut !== undefined && !o.stream)
    throw usage('--stream-out records a stream: add --stream (SendStreamingMessage), or drop --stream-out.');
  return construction;
}

/**
 * The file recorder of the first stream, written as its events arrive (a parent that
 * dies mid-stream leaves the lines it had); a file holds one stream, so any other is
 * kept in the record only. The file is replaced, as --out's is.
 */
function _recordTo(
  path: string,
  stream: StreamRef,
  recordings: Array<StreamRecorder & { close(): void }>,
): StreamRecorder | undefined {
  if (recordings.length > 0) return undefined;
  rmSync(path, { force: true });
  const recorder = recordStreamToFile(path, stream);
  recordings.push(recorder);
  return recorder;
}

function _noteStreamOut(ctx: CliContext, file: string, streams: number): void {
  ctx.io.stderr(
    streams === 0
      ? `stream: nothing was streamed (the answer came whole), so ${file} was not written.\n`
      : `stream: ${file} (check it with: witness verify ${file} --keys …)${streams > 1 ? `; it holds the first of ${streams} streams, the record holds them all` : ''}\n`,
  );
}

/** Text ending with a newline. */
function _line(text: string): string {
  return text.endsWith('\n') ? text : `${text}\n`;
}

function _print(
  ctx: CliContext,
  result: SendTaskResult,
  how: { construction: Condition; streamed: string | undefined; json: boolean; out: string | undefined },
): void {
  const { check, record } = result;
  const summary = delegationVerdict(result.ok, check, {
    child: result.childDeployer,
    construction: how.construction,
    streams: result.streams,
  });
  if (how.json) {
    ctx.io.stdout(
      `${JSON.stringify(
        {
          ok: result.ok,
          summary,
          url: record.url,
          child: result.childDeployer,
          construction: how.construction,
          task_id: record.request.task_id,
          answer: 'message' in record.answer ? 'message' : 'task',
          ...(check.task ? { task: check.task } : {}),
          output: check.output,
          problems: check.problems,
          paths: check.paths,
          streams: result.streams.map(streamSummary),
          out: how.out ?? null,
        },
        null,
        2,
      )}\n`,
    );
    return;
  }
  const problems = check.problems.length > 0 ? `${formatProblems(check.problems)}\n` : '';
  // Streamed text is already out; the verdict follows it on a line of its own.
  if (how.streamed !== undefined) ctx.io.stdout(`${how.streamed.endsWith('\n') ? '' : '\n'}${summary}\n${problems}`);
  else ctx.io.stdout(`${summary}\n${problems}${result.ok ? _line(check.output) : ''}`);
  if (how.out) ctx.io.stderr(`record: ${how.out} (check it with: witness verify ${how.out} --keys …)\n`);
}
