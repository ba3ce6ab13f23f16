/**
 * @module
 * Codex keeps its MCP servers in TOML (`~/.codex/config.toml`, `[mcp_servers.NAME]`
 * with `command` and `args`). No TOML library is needed to add one: a new table
 * appended at the end of a TOML file leaves every other key where it was, and our
 * values are strings, which JSON quotes the way TOML basic strings read them
 * (`\"`, `\\`, `\n`, `\uXXXX`). An existing table of that name is found by its
 * header and spans up to the next header; it is replaced only when forced.
 */
import { WitnessError } from '../../core/errors.js';

export interface TomlEdit {
  /** The file's new text; equal to `before` when the entry is already there. */
  after: string;
  /** A different entry of that name was there (replaced only with `force`). */
  replaced: boolean;
}

/** The `[mcp_servers.NAME]` table for a stdio server. */
export function codexTable(name: string, command: string, args: string[]): string {
  return `[mcp_servers.${name}]\ncommand = ${JSON.stringify(command)}\nargs = [${args.map((a) => JSON.stringify(a)).join(', ')}]\n`;
}

export function addCodexServer(before: string, file: string, name: string, table: string, force: boolean): TomlEdit {
  const header = new RegExp(
    `^[ \\t]*\\[[ \\t]*mcp_servers[ \\t]*\\.[ \\t]*(?:${name}|"${name}")[ \\t]*\\][ \\t]*(?:#.*)?$`,
    'm',
  );
  const found = header.exec(before);
  if (!found) {
    const gap = before === '' ? '' : before.endsWith('\n') ? '\n' : '\n\n';
    return { after: `${before}${gap}${table}`, replaced: false };
  }
  const afterHeader = found.index + found[0].length;
  const next = /^[ \t]*\[/m.exec(before.slice(afterHeader));
  const end = next ? afterHeader + next.index : before.length;
  const existing = before.slice(found.index, end);
  if (existing.trimEnd() === table.trimEnd()) return { after: before, replaced: false };
  if (!force)
    throw new WitnessError(
      'USAGE',
      `${file} already has a different [mcp_servers.${name}] table. Pick another --name, or pass --force to replace it. Nothing was changed.`,
    );
  const tail = before.slice(end);
  return { after: `${before.slice(0, found.index)}${table}${tail === '' ? '' : `\n${tail}`}`, replaced: true };
}
