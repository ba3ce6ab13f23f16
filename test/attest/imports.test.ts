import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

// STYLE.md: dependencies point one way, core ← attest. attest may import only core,
// itself, node built-ins, zod (schemas), better-sqlite3 and pg (both loaded lazily: pg
// only as types or through import(), so a user who never names a database never loads it).
const root = join(import.meta.dirname, '..', '..', 'src');
const attest = join(root, 'attest');

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? files(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

describe('src/attest dependencies', () => {
  it('imports nothing outside core, attest, node built-ins, zod, better-sqlite3 and (lazily) pg', () => {
    const bad: string[] = [];
    for (const file of files(attest)) {
      const text = readFileSync(file, 'utf8');
      for (const [clause, spec] of text.matchAll(/(?:^import type [^;]*? from|from|import\()\s*'([^']+)'/gm)) {
        if (!spec) continue;
        if (spec === 'pg' && (clause.startsWith('import type') || clause.startsWith('import('))) continue;
        if (spec.startsWith('node:') || spec === 'zod') continue;
        if (spec.startsWith('.')) {
          const target = relative(root, resolve(join(file, '..'), spec));
          if (target.startsWith('attest/') || target.startsWith('core/')) continue;
        }
        bad.push(`${relative(root, file)} → ${spec}`);
      }
      for (const [, spec] of text.matchAll(/require\)\('([^']+)'\)/g))
        if (spec !== 'better-sqlite3') bad.push(`${relative(root, file)} → ${spec}`);
    }
    expect(bad).toEqual([]);
  });
});
