/**
 * The public entry points (src/<part>/index.ts, the package's exports) never export
 * two different things under one name: a user importing `Receipt` or `readKeyFile`
 * from two parts of Witness gets the same one, or only one exists.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { expect, it } from 'vitest';

const SRC = join(import.meta.dirname, '..', 'src');

it('no name is exported by two public entry points from different modules', () => {
  const sources = new Map<string, Set<string>>();
  for (const part of readdirSync(SRC, { withFileTypes: true }).filter((e) => e.isDirectory())) {
    const dir = join(SRC, part.name);
    const index = readdirSync(dir).includes('index.ts') ? readFileSync(join(dir, 'index.ts'), 'utf8') : '';
    for (const [, names, from] of index.matchAll(/export (?:type )?\{([^}]+)\} from '([^']+)'/g)) {
      for (const name of names!
        .split(',')
        .map(
          (n) =>
            n
              .trim()
              .split(/\s+as\s+/)
              .pop()!,
        )
        .filter(Boolean)) {
        const where = sources.get(name) ?? new Set<string>();
        where.add(resolve(dir, from!));
        sources.set(name, where);
      }
    }
  }
  const twice = [...sources]
    .filter(([, where]) => where.size > 1)
    .map(([name, where]) => `${name}: ${[...where].map((w) => w.slice(SRC.length + 1)).join(', ')}`);
  expect(twice).toEqual([]);
});
