/**
 * @module
 * Where the CLI writes. Commands print only through a `CliIo`, so tests run the
 * whole CLI in-process (`runMain`) and read what it printed.
 */
export interface CliIo {
  stdout(text: string): void;
  stderr(text: string): void;
  /** True when stderr is a terminal: progress may redraw one line. */
  readonly isTTY: boolean;
  /** Current working directory for relative paths. */
  readonly cwd: string;
}

export function processIo(): CliIo {
  return {
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
    isTTY: Boolean(process.stderr.isTTY),
    cwd: process.cwd(),
  };
}

/** An io that keeps what was printed, for tests. */
export function memoryIo(cwd = process.cwd(), options: { isTTY?: boolean } = {}): CliIo & { out: string; err: string } {
  const io = {
    out: '',
    err: '',
    isTTY: options.isTTY ?? false,
    cwd,
    stdout(text: string) {
      io.out += text;
    },
    stderr(text: string) {
      io.err += text;
    },
  };
  return io;
}
