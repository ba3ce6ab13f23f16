/**
 * @module
 * `witness sim checkpoint RESULTS`: prints the tree head of each chain of a signed
 * results file — a C2SP signed-note checkpoint (origin, line count, Merkle root),
 * signed by the sweep's key — for the user to keep elsewhere. Later,
 * `witness verify RESULTS --keys DIR --checkpoint KEPT` proves the file is still that
 * log or an append-only extension of it, even if its own checkpoint was replaced.
 */
import { Command } from 'commander';
import { writeFileAtomic } from '../../core/atomic-write.js';
import { WitnessError } from '../../core/errors.js';
import { readCheckpoints } from '../../sim/transcript/checkpoint.js';
import { checkpointPath } from '../../sim/transcript/format.js';
import { type CliContext, resolvePath } from '../context.js';

export function checkpointCommand(ctx: CliContext): Command {
  return new Command('checkpoint')
    .description(
      "print the signed tree head of each chain of a signed results file (a C2SP checkpoint: origin, lines, Merkle root), to keep where the file's writer cannot change it; `witness verify RESULTS --checkpoint KEPT` then proves the file is that log or an append-only extension of it",
    )
    .argument('<results>', 'a signed results file (witness sim --sign)')
    .option('-o, --out <file>', 'write the checkpoints to this file instead of stdout')
    .addHelpText(
      'after',
      '\nExample:\n  $ witness sim checkpoint signed.jsonl -o kept.checkpoint.txt\n  $ witness verify signed.jsonl --keys trusted.json --checkpoint kept.checkpoint.txt   # later: TRUNCATED or INCONSISTENT if it was cut or rewritten\n\nExit status: 0 printed, 2 not a signed results file or written before checkpoints carried tree heads.',
    )
    .action((results: string, options: { out?: string }) => {
      const file = resolvePath(ctx, results);
      const checkpoints = readCheckpoints(checkpointPath(file));
      if (!checkpoints)
        throw new WitnessError(
          'USAGE',
          `${results} has no checkpoint (${checkpointPath(results)}): it is not a signed results file (witness sim --sign KEY writes one).`,
        );
      const notes = checkpoints.checkpoints.map((cp) => cp.note);
      if (notes.some((n) => n === undefined))
        throw new WitnessError(
          'USAGE',
          `${checkpointPath(results)} was written before checkpoints carried tree heads: rerun the sweep's command (with --sign) to sign one.`,
        );
      const text = notes.join('\n');
      if (options.out) writeFileAtomic(resolvePath(ctx, options.out), text);
      else ctx.io.stdout(text);
    });
}
