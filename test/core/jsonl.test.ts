import { mkdtempSync, readFileSync, writeFileSync, appendFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openJsonlWriter, readJsonl } from '../../src/core/jsonl.js';

const tempFile = () => join(mkdtempSync(join(tmpdir(), 'witness-jsonl-')), 'data.jsonl');

describe('JSONL', () => {
  it('appends one line per record and reads them back in order', () => {
    const path = tempFile();
    const w = openJsonlWriter(path, { fsync: 'always' });
    w.append({ a: 1 });
    w.append({ b: 'two' });
    w.close();
    expect(readFileSync(path, 'utf8')).toBe('{"a":1}\n{"b":"two"}\n');
    expect(readJsonl(path).records.map((r) => r.value)).toEqual([{ a: 1 }, { b: 'two' }]);
  });
  it('appends encoded lines as given, and refuses bytes that do not end a line (no half line for the next to glue onto)', () => {
    const path = tempFile();
    const w = openJsonlWriter(path, { fsync: 'always' });
    w.appendLineBytes(Buffer.from('{"a":"é"}\n'));
    expect(() => w.appendLineBytes(Buffer.from('{"b":2}'))).toThrow(/must end with its newline/);
    w.appendLine('{"c":3}');
    w.close();
    expect(readFileSync(path, 'utf8')).toBe('{"a":"é"}\n{"c":3}\n');
  });
  it('cuts only an unterminated torn tail when reopened, keeping earlier lines byte for byte', () => {
    const path = tempFile();
    writeFileSync(path, '{"a":1}\n{"b":2}\n{"c":');
    const before = readFileSync(path, 'utf8');
    const w = openJsonlWriter(path);
    expect(w.repairedBytes).toBe(5);
    w.append({ d: 4 });
    w.close();
    const after = readFileSync(path, 'utf8');
    expect(after.startsWith(before.slice(0, before.lastIndexOf('\n') + 1))).toBe(true);
    expect(after).toBe('{"a":1}\n{"b":2}\n{"d":4}\n');
  });
  it('reports a corrupt line by its number and still returns the others', () => {
    const path = tempFile();
    writeFileSync(path, '{"a":1}\nnot json\n{"c":3}\n');
    const out = readJsonl(path);
    expect(out.records.map((r) => r.line)).toEqual([1, 3]);
    expect(out.problems).toHaveLength(1);
    expect(out.problems[0]?.line).toBe(2);
  });
  it('flags a torn tail when reading without returning it as a record', () => {
    const path = tempFile();
    writeFileSync(path, '{"a":1}\n');
    appendFileSync(path, '{"b":');
    const out = readJsonl(path);
    expect(out.tornTail).toBe(true);
    expect(out.records).toHaveLength(1);
    expect(out.problems).toHaveLength(0);
  });
  it('reads a missing file as empty', () => {
    expect(readJsonl(join(tmpdir(), 'witness-does-not-exist.jsonl')).records).toEqual([]);
  });
});
