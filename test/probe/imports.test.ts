/**
 * Dependency direction (STYLE.md): the probe imports only from core, attest (the
 * mailbox's key and signer), mailbox, Node built-ins and declared packages — never
 * from sim, a2a, report or cli.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? files(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

it('src/probe imports nothing outside src/probe, src/mailbox, src/attest and src/core', () => {
  const offenders: string[] = [];
  for (const file of files(join(ROOT, 'src', 'probe'))) {
    for (const [, spec] of readFileSync(file, 'utf8').matchAll(/from '([^']+)'/g)) {
      if (!spec!.startsWith('.')) continue;
      const target = relative(join(ROOT, 'src'), join(file, '..', spec!));
      if (!/^(probe|mailbox|attest|core)\//.test(target)) offenders.push(`${relative(ROOT, file)} → ${spec}`);
    }
  }
  expect(offenders).toEqual([]);
});
