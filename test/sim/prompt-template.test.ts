import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { TEMPLATE_VARIABLES, type TemplateVariable } from '../../src/sim/prompts/pack.js';
import { fillTemplate } from '../../src/sim/prompts/template.js';

type Variables = Record<TemplateVariable, string>;

/** The definition: lone lines of empty variables removed by one scan, then every variable replaced by another. */
function byScanning(template: string, variables: Variables): string {
  return template
    .replace(/^[ \t]*\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}[ \t]*(?:\r?\n|$)/gm, (line, name: string) =>
      variables[name as TemplateVariable] ? line : '',
    )
    .replace(/\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}/g, (_, name: string) => variables[name as TemplateVariable] ?? '');
}

const name = fc.constantFrom(...TEMPLATE_VARIABLES.slice(0, 5));
/** Templates of variables (spaced or not), lone lines, line ends of both kinds, braces and plain text. */
const template = fc
  .array(
    fc.oneof(
      name.map((n) => `{{${n}}}`),
      name.map((n) => `{{ ${n} }}`),
      name.map((n) => `\n  {{${n}}}\t\n`),
      name.map((n) => `{{${n}}}\r\n`),
      fc.constantFrom('\n', '\r\n', ' ', '\t', '{{', '}}', '{', 'x', 'Round: ', '{{ 9bad }}'),
    ),
    { maxLength: 24 },
  )
  .map((parts) => parts.join(''));
/** Values empty or not, some holding what looks like a variable (never filled again). */
const variables = fc
  .array(fc.constantFrom('', 'v', 'two\nlines', '{{id}}', ' '), {
    minLength: TEMPLATE_VARIABLES.length,
    maxLength: TEMPLATE_VARIABLES.length,
  })
  .map((values) => Object.fromEntries(TEMPLATE_VARIABLES.map((n, i) => [n, values[i]!])) as Variables);

describe('filling a template', () => {
  it('gives what the two scans give, for any template and values, asked once or again', () => {
    fc.assert(
      fc.property(template, variables, variables, (t, first, second) => {
        expect(fillTemplate(t, first)).toBe(byScanning(t, first));
        expect(fillTemplate(t, second)).toBe(byScanning(t, second));
        expect(fillTemplate(t, first)).toBe(byScanning(t, first));
      }),
    );
  });
  it('leaves out a line that holds only an empty variable and keeps it when the value is not empty', () => {
    const t = 'A {{id}}\n  {{cues}}\nB\n';
    const values = Object.fromEntries(TEMPLATE_VARIABLES.map((n) => [n, ''])) as Variables;
    expect(fillTemplate(t, { ...values, id: '1' })).toBe('A 1\nB\n');
    expect(fillTemplate(t, { ...values, id: '1', cues: 'cue' })).toBe('A 1\n  cue\nB\n');
  });
  it('fills a template with more lone lines than it keeps splits for, by scanning', () => {
    // Past 31 lines one bit per line would wrap around onto the first lines.
    const t = `${'{{cues}}\n'.repeat(32)}${'{{id}}\n'.repeat(8)}`;
    const values = Object.fromEntries(TEMPLATE_VARIABLES.map((n) => [n, ''])) as Variables;
    expect(fillTemplate(t, { ...values, id: 'x' })).toBe('x\n'.repeat(8));
  });
});
