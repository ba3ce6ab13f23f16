#!/usr/bin/env node
/**
 * @module
 * The `witness` command line. `runMain(argv, io)` runs it in-process and returns the
 * exit status: 0 success, 1 the work failed (or found a failure it was asked to
 * find), 2 the command was used wrongly (bad option, bad file). Commands live in
 * `commands/<name>.ts`; they parse, call the library, and print.
 */
import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Command, CommanderError } from 'commander';
import { privilegeDenied } from '../attest/postgres.js';
import { exitCodeFor, WitnessError } from '../core/errors.js';
import { a2aCommand } from './commands/a2a.js';
import { anchorCommand } from './commands/anchor.js';
import { attestCommand } from './commands/attest.js';
import { keysCommand } from './commands/keys.js';
import { mailboxCommand } from './commands/mailbox.js';
import { probeCommand } from './commands/probe.js';
import { reportCommand } from './commands/report.js';
import { viewCommand } from './commands/view.js';
import { setupCommand } from './commands/setup.js';
import { simCommand } from './commands/sim.js';
import { verifyCommand } from './commands/verify.js';
import type { CliContext } from './context.js';
import { type CliIo, processIo } from './io.js';
import { systemErrorExitCode, systemErrorMessage } from './system-error.js';
import { VERSION } from './version.js';

/** Every top-level command; each file in commands/ exports one factory. */
const COMMANDS: ReadonlyArray<(ctx: CliContext) => Command> = [
  simCommand,
  reportCommand,
  viewCommand,
  mailboxCommand,
  attestCommand,
  verifyCommand,
  keysCommand,
  a2aCommand,
  anchorCommand,
  probeCommand,
  setupCommand,
];

export function buildProgram(ctx: CliContext): Command {
  const { io } = ctx;
  const program = new Command('witness')
    .description("Witness: checkable evidence for multi-agent AI systems. An agent's claim is not evidence.")
    .version(VERSION, '-V, --version', 'output the version number (also -v)')
    // Options belong to the command they follow, so `sim list --json` reaches `list`.
    .enablePositionalOptions()
    .addHelpText(
      'after',
      '\nExample:\n  $ witness sim                 # the smoke preset with rule-based agents\n  $ witness sim --help          # every option of the simulator',
    );
  for (const factory of COMMANDS) program.addCommand(factory(ctx));
  _routeOutput(program, io);
  return program;
}

/** Runs the CLI with `argv` (without `node` and the script) and returns the exit status. */
export async function runMain(argv: readonly string[], io: CliIo = processIo()): Promise<number> {
  const ctx: CliContext = { io, exitCode: 0 };
  const program = buildProgram(ctx);
  // Bare `witness` is a request for help, not a mistake: the help on stdout, exit 0.
  if (argv.length === 0) {
    program.outputHelp();
    return 0;
  }
  // `-v` is what most people type for the version (`-V` stays, as commander spells it).
  const args = argv.length === 1 && argv[0] === '-v' ? ['--version'] : [...argv];
  try {
    await program.parseAsync(args, { from: 'user' });
    return ctx.exitCode;
  } catch (error) {
    return _report(error, io);
  }
}

function _routeOutput(command: Command, io: CliIo): void {
  command.exitOverride();
  command.configureOutput({ writeOut: (s) => io.stdout(s), writeErr: (s) => io.stderr(s) });
  for (const sub of command.commands) _routeOutput(sub, io);
}

function _report(error: unknown, io: CliIo): number {
  if (error instanceof CommanderError) {
    // --help and --version end here with exit code 0; usage errors were already printed.
    return error.exitCode === 0 ? 0 : 2;
  }
  if (error instanceof WitnessError) {
    io.stderr(`witness: ${error.message}\n`);
    return exitCodeFor(error);
  }
  // A right the database role lacks, met where no check before the work caught it.
  const denied = privilegeDenied(error);
  if (denied) {
    io.stderr(`witness: ${denied}.\n`);
    return 2;
  }
  const system = systemErrorMessage(error);
  if (system) {
    io.stderr(`witness: ${system}\n`);
    return systemErrorExitCode(error);
  }
  io.stderr(`witness: internal error (a bug; please report it):\n${(error as Error)?.stack ?? String(error)}\n`);
  return 1;
}

function _isEntryPoint(): boolean {
  const entry = process.argv[1];
  if (!entry) return false;
  try {
    return realpathSync(entry) === fileURLToPath(import.meta.url);
  } catch {
    return false;
  }
}

if (_isEntryPoint()) {
  // `witness … | head` closes the pipe early: that is the reader's choice, not a failure.
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
      throw error;
    });
  }
  runMain(process.argv.slice(2)).then((code) => {
    process.exitCode = code;
  });
}
