// vitest global setup: installs into .tools/ the pinned tools the real-runtime,
// conformance and embedded tests need (scripts/tools.mjs), once, before any test file
// loads, so `npm test` on a fresh clone runs those tests instead of skipping them.
// @ts-expect-error a plain .mjs script without types
import { installTools } from '../../scripts/tools.mjs';

export default function setup(): void {
  for (const line of installTools() as string[]) process.stderr.write(`${line}\n`);
}
