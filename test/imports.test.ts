/**
 * Dependencies point one way (STYLE.md): core ← attest ← (mailbox, sim, a2a) ←
 * (probe, report) ← view ← cli. attest is the one evidence layer (signer, key files, domain
 * tags, reason codes): everything that signs or verifies builds on it, and it builds
 * on core alone. llm (model clients) needs only core and serves sim and a2a. This
 * test resolves every relative import under src/ and fails on one that points the
 * wrong way, and on a library module that runs the CLI (cli/main) as a process.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = join(import.meta.dirname, '..', 'src');
const ALLOWED: Record<string, string[]> = {
  core: [],
  attest: ['core'],
  llm: ['core'],
  mailbox: ['core', 'attest'],
  sim: ['core', 'attest', 'llm'],
  a2a: ['core', 'attest', 'mailbox', 'llm'],
  probe: ['core', 'attest', 'mailbox'],
  report: ['core', 'attest', 'sim'],
  view: ['core', 'attest', 'mailbox', 'sim', 'a2a', 'report'],
  cli: ['core', 'attest', 'mailbox', 'llm', 'sim', 'probe', 'a2a', 'report', 'view'],
};

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? files(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

describe('dependency direction', () => {
  it('knows every top-level folder of src/', () => {
    const parts = readdirSync(SRC, { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => e.name);
    expect(parts.sort()).toEqual(Object.keys(ALLOWED).sort());
  });
  it('puts attest between core and every part that signs or verifies', () => {
    expect(ALLOWED.attest).toEqual(['core']);
    for (const part of ['mailbox', 'sim', 'a2a']) expect(ALLOWED[part], part).toContain('attest');
    for (const part of Object.keys(ALLOWED)) if (part !== 'core') expect(ALLOWED.core).not.toContain(part);
  });
  it('has no import that points against the direction', () => {
    const wrong: string[] = [];
    for (const file of files(SRC)) {
      const part = relative(SRC, file).split('/')[0]!;
      const text = readFileSync(file, 'utf8');
      for (const m of text.matchAll(/(?:from|import)\s*\(?\s*'(\.[^']+)'/g)) {
        const target = relative(SRC, resolve(dirname(file), m[1]!)).split('/')[0]!;
        if (target !== part && !ALLOWED[part]!.includes(target))
          wrong.push(`${relative(SRC, file)} imports ${m[1]} (${part} → ${target})`);
      }
    }
    expect(wrong).toEqual([]);
  });
  it('has no module outside src/cli that spawns or names the CLI entry (cli/main)', () => {
    // cli → library, never library → cli: a library that needs a process of its own runs
    // a library entry script (as a2a/e12-process.ts), never `witness …` again — by its
    // path, or as process.argv[1] (the script that started this process: the CLI's).
    const named: string[] = [];
    for (const file of files(SRC)) {
      if (relative(SRC, file).startsWith('cli/')) continue;
      const text = readFileSync(file, 'utf8');
      for (const m of text.matchAll(/\bcli['"]?\s*(?:[/\\]|['"]?\s*,\s*['"])\s*main\b|process\.argv\[1\]/g))
        named.push(`${relative(SRC, file)}: ${m[0]}`);
    }
    expect(named).toEqual([]);
  });
  it('keeps attest to Node built-ins, zod, better-sqlite3 and (lazily) pg', () => {
    const bad: string[] = [];
    for (const file of files(join(SRC, 'attest'))) {
      const text = readFileSync(file, 'utf8');
      for (const [clause, spec] of text.matchAll(/(?:^import type [^;]*? from|from|import\()\s*'([^']+)'/gm)) {
        if (!spec || spec.startsWith('.') || spec.startsWith('node:') || spec === 'zod') continue;
        if (spec === 'pg' && (clause.startsWith('import type') || clause.startsWith('import('))) continue;
        bad.push(`${relative(SRC, file)} → ${spec}`);
      }
      for (const [, spec] of text.matchAll(/require\)\('([^']+)'\)/g))
        if (spec !== 'better-sqlite3') bad.push(`${relative(SRC, file)} → ${spec}`);
    }
    expect(bad).toEqual([]);
  });
});

describe('one definition of each shared format', () => {
  it('writes the digest, key id, signature and deployer-name patterns only in attest/formats.ts', () => {
    // Copies drift (one said what was wrong, another did not): every schema takes these from there.
    const patterns = [
      /\[0-9a-f\]\{64\}/,
      /ed25519:\[0-9a-f\]\{16\}/,
      /\[A-Za-z0-9_-\]\{86\}/,
      /\\x21-\\x7e\]\{1,128\}/,
    ];
    const copies: string[] = [];
    for (const file of files(SRC)) {
      if (relative(SRC, file) === join('attest', 'formats.ts')) continue;
      const text = readFileSync(file, 'utf8');
      for (const p of patterns) if (p.test(text)) copies.push(`${relative(SRC, file)}: ${p.source}`);
    }
    expect(copies).toEqual([]);
  });
});
