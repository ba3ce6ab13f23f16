/**
 * Dependency direction (STYLE.md): the mailbox library imports only from core, attest
 * (its signer, key files and domain tag), Node built-ins and its declared packages —
 * never from sim, llm, a2a, probe, report or cli.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { expect, it } from 'vitest';
import { ROOT } from './helpers.js';

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? files(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

it('src/mailbox imports nothing outside src/mailbox, src/attest and src/core', () => {
  const mailbox = join(ROOT, 'src', 'mailbox');
  const offenders: string[] = [];
  for (const file of files(mailbox)) {
    for (const [, spec] of readFileSync(file, 'utf8').matchAll(/from '([^']+)'/g)) {
      if (!spec!.startsWith('.')) continue;
      const target = relative(join(ROOT, 'src'), join(file, '..', spec!));
      if (!target.startsWith('mailbox/') && !target.startsWith('attest/') && !target.startsWith('core/'))
        offenders.push(`${relative(ROOT, file)} → ${spec}`);
    }
  }
  expect(offenders).toEqual([]);
});
