// Every command block of README.md and docs/*.md, as a newcomer would type it in a fresh
// clone: each `npx witness …` line must name a real command and real options, and the
// ones that can run here run in-process (one scratch folder per document, blocks in
// order) and must end with the exit status the text promises — 0, or 1 where the text
// shows `invalid` — with no "internal error" and no stack trace. Lines that need a
// server this machine cannot reach (an LLM endpoint, a runtime's model), servers that
// run until interrupted, and blocks marked `<!-- docs-test: illustrative -->` on the
// line before the fence are checked statically only (command and options exist).
import { chmodSync, cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Command } from 'commander';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newSigningKey, publicJwk } from '../../src/attest/keys.js';
import { memoryIo } from '../../src/cli/io.js';
import { buildProgram, runMain } from '../../src/cli/main.js';
import { witnessBundle } from '../support/witness-bundle.js';

const ROOT = join(import.meta.dirname, '..', '..');
const DOCS = [
  'README.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];
const SHELL_BLOCKS = new Set(['sh', 'console', 'bash']);
const MARKER = '<!-- docs-test: illustrative';
/** Commands that serve until Ctrl-C: a test that ran them would hang. */
const SERVERS = ['mailbox serve', 'mailbox tail', 'a2a serve', 'a2a tool', 'a2a cosigner', 'anchor serve'];
/** Fewer trials than the docs ask for, to keep the whole file under a minute; the command and its options are the documented ones. */
const FASTER: Record<string, string> = { '--trials': '2', '--warmup': '0' };

interface Line {
  doc: string;
  at: number; // line number in the document
  argv: string[]; // after `npx witness`
  stdoutTo?: string; // `> file`
  piped: boolean;
  /** The console prompt's name (`parent`, `child`; '' for `$`): each is its own machine. */
  who: string;
  /** `cp -r SOURCE DEST` from the package (`node_modules/agent-witness/…`), run as a copy. */
  copy?: [string, string];
  expectExit: number;
  runnable: boolean;
  why?: string;
}

// In-process, the CLI cannot find its own entry script, so what it starts as a child
// (the probe's mailbox servers) is `witness` on PATH: put this checkout's there.
// HOME and XDG_CONFIG_HOME too: `mailbox init` keeps its key under the config home.
const saved = { PATH: process.env.PATH, HOME: process.env.HOME, XDG_CONFIG_HOME: process.env.XDG_CONFIG_HOME };
beforeAll(async () => {
  const bin = mkdtempSync(join(tmpdir(), 'witness-docs-bin-'));
  process.env.HOME = mkdtempSync(join(tmpdir(), 'witness-docs-home-'));
  process.env.XDG_CONFIG_HOME = join(process.env.HOME, '.config');
  const [node, bundle] = await witnessBundle();
  writeFileSync(join(bin, 'witness'), `#!/bin/sh\nexec ${node} ${bundle} "$@"\n`);
  chmodSync(join(bin, 'witness'), 0o755);
  process.env.PATH = `${bin}:${saved.PATH}`;
}, 120_000);
afterAll(() => {
  for (const [name, value] of Object.entries(saved)) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
});

describe.each(DOCS)('%s', (doc) => {
  const lines = commandLines(doc);
  it('every `npx witness …` line names a real command and real options', () => {
    for (const line of lines)
      expect(unknownParts(line.argv), `${doc}:${line.at}: npx witness ${line.argv.join(' ')}`).toEqual([]);
  });
  const runnable = lines.filter((l) => l.runnable);
  if (runnable.length === 0) return;
  it(`runs ${runnable.length} command(s) with the exit status the text promises`, async () => {
    const folders = new Map<string, string>(); // one machine per prompt (parent$, child$)
    for (const line of runnable) {
      const cwd = folders.get(line.who) ?? scratch();
      folders.set(line.who, cwd);
      _exchangePublicKeys(line, cwd, folders);
      if (line.copy) {
        cpSync(join(ROOT, line.copy[0]), join(cwd, line.copy[1]), { recursive: true });
        continue;
      }
      const io = memoryIo(cwd);
      const code = await runMain(
        line.argv.map((a, i) => FASTER[line.argv[i - 1] ?? ''] ?? a),
        io,
      );
      const where = `${doc}:${line.at}: npx witness ${line.argv.join(' ')}\n${io.err}`;
      expect(io.err, where).not.toMatch(/internal error|\n\s+at .*:\d+:\d+/);
      expect(code, where).toBe(line.expectExit);
      if (line.stdoutTo) writeFileSync(join(cwd, line.stdoutTo), io.out);
    }
  }, 120_000);
});

/** The commands of a document's shell blocks, joined across `\` continuations and split at `&&`. */
function commandLines(doc: string): Line[] {
  const text = readFileSync(join(ROOT, doc), 'utf8').split('\n');
  const out: Line[] = [];
  for (let i = 0; i < text.length; i++) {
    const lang = /^```(\w*)\s*$/.exec(text[i] as string)?.[1];
    if (lang === undefined) continue;
    const end = text.findIndex((l, j) => j > i && l.startsWith('```'));
    if (SHELL_BLOCKS.has(lang))
      out.push(..._blockLines(doc, text, i, end, lang, (text[i - 1] ?? '').startsWith(MARKER)));
    i = end;
  }
  return out;
}

function _blockLines(
  doc: string,
  text: string[],
  start: number,
  end: number,
  lang: string,
  illustrative: boolean,
): Line[] {
  const out: Line[] = [];
  for (let j = start + 1; j < end; j++) {
    let raw = text[j] as string;
    const at = j + 1;
    let who = '';
    if (lang === 'console') {
      const prompt = /^(\w*)\$ +/.exec(raw);
      if (!prompt) continue; // output shown under a command
      raw = raw.slice(prompt[0].length);
      who = prompt[1] as string;
    }
    while (raw.endsWith('\\') && j + 1 < end) raw = `${raw.slice(0, -1)} ${(text[++j] as string).trim()}`;
    const shown = lang === 'console' ? (text[j + 1] ?? '') : '';
    for (const part of _stripComment(raw).split(' && ')) {
      const words = _words(part.trim());
      const copy = words[0] === 'cp' && words[1] === '-r' && words[2]?.startsWith('node_modules/agent-witness/');
      if (copy && !illustrative)
        out.push({
          doc,
          at,
          argv: [],
          piped: false,
          who,
          expectExit: 0,
          runnable: true,
          copy: [(words[2] as string).slice('node_modules/agent-witness/'.length), words[3] as string],
        });
      if (words[0] !== 'npx' || words[1] !== 'witness') continue;
      out.push({ ..._line(doc, at, words.slice(2), illustrative, /^\s*invalid/.test(shown) ? 1 : 0), who });
    }
  }
  return out;
}

function _line(doc: string, at: number, words: string[], illustrative: boolean, expectExit: number): Omit<Line, 'who'> {
  const pipe = words.indexOf('|');
  const redirect = words.indexOf('>');
  const cut = Math.min(...[pipe, redirect, words.length].filter((n) => n >= 0));
  const argv = words.slice(0, cut);
  const joined = argv.join(' ');
  const why = illustrative
    ? 'marked illustrative'
    : /https?:\/\//.test(joined) || argv.includes('--model-endpoint')
      ? 'needs a server'
      : SERVERS.some((s) => joined.startsWith(s))
        ? 'serves until interrupted'
        : pipe >= 0
          ? 'piped'
          : undefined;
  return {
    doc,
    at,
    argv,
    piped: pipe >= 0,
    expectExit,
    runnable: why === undefined,
    ...(why ? { why } : {}),
    ...(redirect >= 0 ? { stdoutTo: words[redirect + 1] as string } : {}),
  };
}

function _stripComment(line: string): string {
  let quote = '';
  for (let i = 0; i < line.length; i++) {
    const c = line[i] as string;
    if (quote) quote = c === quote ? '' : quote;
    else if (c === "'" || c === '"') quote = c;
    else if (c === '#' && (i === 0 || /\s/.test(line[i - 1] as string))) return line.slice(0, i);
  }
  return line;
}

/** Shell words: spaces split, quotes group (no expansion: the docs use none in witness lines). */
function _words(line: string): string[] {
  return [...line.matchAll(/'([^']*)'|"([^"]*)"|(\S+)/g)].map((m) => m[1] ?? m[2] ?? (m[3] as string));
}

/** The words of `argv` that are neither a command nor an option of the command they reach. */
function unknownParts(argv: string[]): string[] {
  let command: Command = buildProgram({ io: memoryIo(), exitCode: 0 });
  let i = 0;
  for (; i < argv.length; i++) {
    const sub = command.commands.find((c) => c.name() === argv[i] || c.aliases().includes(argv[i] as string));
    if (!sub) break;
    command = sub;
  }
  if (
    command.commands.length > 0 &&
    i < argv.length &&
    !(argv[i] as string).startsWith('-') &&
    command.registeredArguments.length === 0
  )
    return [`${argv[i]} (not a command of ${command.name()})`];
  const known = new Set(command.options.flatMap((o) => [o.long, o.short]).filter(Boolean));
  known.add('--help');
  return argv
    .slice(i)
    .filter((w) => /^--?[a-zA-Z]/.test(w))
    .map((w) => w.split('=')[0] as string)
    .filter((w) => !known.has(w));
}

/** The docs' out-of-band exchange of public keys: a `*.pub.json` a line names, copied from the machine that wrote it. */
function _exchangePublicKeys(line: Line, cwd: string, folders: Map<string, string>): void {
  for (const name of line.argv.filter((a) => a.endsWith('.pub.json') && !existsSync(join(cwd, a)))) {
    const from = [...folders.values()].find((f) => existsSync(join(f, name)));
    if (from) cpSync(join(from, name), join(cwd, name));
  }
}

/** A scratch folder with the input files the docs' commands name (placeholders: an answer, a report, a task, a partner's public key). */
function scratch(): string {
  const cwd = mkdtempSync(join(tmpdir(), 'witness-docs-'));
  for (const [name, text] of Object.entries({
    'answer.txt': 'the summary',
    'report.txt': 'the report',
    'task.txt': 'summarise the logs',
  }))
    writeFileSync(join(cwd, name), text);
  writeFileSync(join(cwd, 'partner.pub.json'), JSON.stringify({ v: 1, ...publicJwk(newSigningKey('partner')) }));
  return cwd;
}
