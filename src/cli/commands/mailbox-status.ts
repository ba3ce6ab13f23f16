/**
 * @module
 * What the operator sees of one message: `witness mailbox status DIR ID` (its state
 * from the store's call log, as message_status answers it) and the `--explain ID`
 * part of `witness mailbox verify` (the same state, each step traced to its receipt).
 */
import { Command } from 'commander';
import { type DeliveryStatus, type Explanation, listWitnessed, openStore, readConfig } from '../../mailbox/index.js';
import { type CliContext, resolvePath } from '../context.js';

export function statusCommand(ctx: CliContext): Command {
  return new Command('status')
    .description(
      'Where a message stands, from the signed call log: stored, read (fetched by its recipient) or acknowledged (ack_message, with its reply) — each with the receipt that proves it. Exit 1 when no genuine send receipt stores it. Without ID: what each witness the servers submit to last answered (the newest cosigned size, and the last refusal or error); exit 1 when the last answer of one was not a cosignature.',
    )
    .argument('<dir>', 'mailbox folder')
    .argument('[id]', 'message id (msg_…)')
    .option('--key <path>', 'signing key file, if not where mailbox.json says')
    .option('--json', 'print the status as JSON')
    .addHelpText(
      'after',
      "\nExample:\n  $ witness mailbox status ./mb msg_0b9c…   # then `witness mailbox verify ./mb --explain msg_0b9c…` to check every receipt\n  $ witness mailbox status ./mb            # the witnesses' last answers",
    )
    .action(async (dir: string, id: string | undefined, o: { key?: string; json?: boolean }) => {
      if (id === undefined) return _witnessStatus(ctx, dir, o.json);
      const store = await openStore(resolvePath(ctx, dir), {
        readOnly: true,
        ...(o.key ? { keyPath: resolvePath(ctx, o.key) } : {}),
      });
      let status: DeliveryStatus | undefined;
      try {
        status = await store.status(id);
      } finally {
        await store.close();
      }
      // Exit 1, not NOT_FOUND's 2: the question was well put and the log's answer is "not stored", as the help says.
      if (!status) {
        ctx.io.stderr(
          `witness: No genuine send receipt stores ${id} in ${dir}. Check the id, or run \`witness mailbox verify ${dir} --explain ${id}\` to see every line that names it.\n`,
        );
        ctx.exitCode = 1;
        return;
      }
      if (o.json) return ctx.io.stdout(`${JSON.stringify(status, null, 2)}\n`);
      ctx.io.stdout(`${formatStatus(status)}\n`);
    });
}

function _witnessStatus(ctx: CliContext, dir: string, json?: boolean): void {
  const path = resolvePath(ctx, dir);
  readConfig(path); // not a mailbox: its one clear error
  const records = listWitnessed(path);
  if (records.some((r) => r.last && !r.last.ok)) ctx.exitCode = 1;
  if (json) {
    ctx.io.stdout(
      `${JSON.stringify(
        records.map(({ note: _, ...r }) => r),
        null,
        2,
      )}\n`,
    );
    return;
  }
  if (records.length === 0)
    ctx.io.stdout(`${dir}: no witness has answered yet (serve with --witness URL --witness-key VKEY).\n`);
  for (const r of records) {
    const name = r.vkey.split('+')[0];
    const cosigned = r.size === undefined ? 'nothing cosigned yet' : `cosigned size ${r.size}`;
    const last = r.last
      ? r.last.ok
        ? `last: cosigned size ${r.last.size} at ${r.last.at}`
        : `last: ${r.last.status === undefined ? 'unreachable' : `refused (${r.last.status})`} size ${r.last.size} at ${r.last.at}: ${r.last.message}`
      : '';
    ctx.io.stdout(`${name} ${r.url}: ${cosigned}; ${last}\n`);
  }
}

/** A status in a few lines: the state, then each step with its receipt's seq and time. */
export function formatStatus(s: DeliveryStatus): string {
  const lines = [`${s.id} from ${s.from} to ${s.to}: ${s.state}`];
  lines.push(`  stored        ${s.stored.at}  receipt seq ${s.stored.seq}`);
  if (s.read) lines.push(`  read          ${s.read.at}  receipt seq ${s.read.seq}`);
  if (s.acknowledged)
    lines.push(
      `  acknowledged  ${s.acknowledged.at}  receipt seq ${s.acknowledged.seq}${s.acknowledged.reply !== undefined ? `  reply: ${JSON.stringify(s.acknowledged.reply)}` : ''}`,
    );
  return lines.join('\n');
}

/** verify --explain's part of the report. */
export function formatExplanation(e: Explanation): string {
  const out = [e.status ? formatStatus(e.status) : `${e.id}: no genuine send receipt stores it`];
  if (e.stored)
    out.push(
      `  record        ${e.stored.file}:${e.stored.line} (${e.stored.matches_receipt ? 'the record its send receipt signed' : 'NOT the record its send receipt signed'})`,
    );
  else out.push('  record        in no inbox');
  for (const r of e.receipts) {
    const what = r.tool ? `${r.tool} by ${r.agent} at ${r.at} (seq ${r.seq})` : 'not a call record';
    const checks = `${r.genuine ? 'signature valid' : 'signature NOT valid'}, ${r.problems.length === 0 ? 'chain holds here' : r.problems.join('; ')}`;
    out.push(`  receipt       ${r.file}:${r.line}  ${what}: ${checks}`);
  }
  return out.join('\n');
}
