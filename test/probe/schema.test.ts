/**
 * docs/schemas/probe-report.schema.json describes what `witness probe --json`
 * prints: a passing report, a report with failures and their evidence, one with
 * shadowing built-ins, one with push results and the negotiated protocol, and a
 * report blocked at preflight all validate.
 */
import { readFileSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { expect, it } from 'vitest';
import { runProbe } from '../../src/probe/index.js';
import { witnessBundle } from '../support/witness-bundle.js';

const schema = JSON.parse(
  readFileSync(join(resolve(import.meta.dirname, '../..'), 'docs', 'schemas', 'probe-report.schema.json'), 'utf8'),
) as object;
const validate = new Ajv2020({ allErrors: true, strict: false }).compile(schema);

it('probe reports — passing, failing with evidence, and blocked at preflight — match probe-report.schema.json', async () => {
  const serverCommand = await witnessBundle();
  const reports = [
    await runProbe({ runtime: 'reference', serverCommand, checks: ['send'], push: true }),
    await runProbe({ runtime: 'log-forger', serverCommand, checks: ['send'], keep: true }),
    await runProbe({ runtime: 'builtin-sender', serverCommand, checks: ['send'] }),
    await runProbe({ runtime: 'claude', serverCommand, bin: '/nonexistent/claude' }),
  ];
  rmSync(reports[1]!.workspace!, { recursive: true, force: true });
  expect(reports.map((r) => r.checks.map((c) => c.verdict).join())).toEqual([
    'pass',
    'fail',
    'fail',
    'undecided,undecided,undecided',
  ]);
  expect(reports[0]!.push?.map((p) => p.path)).toEqual(['resource', 'channel']);
  expect(reports[0]!.protocol?.versions).toHaveLength(1);
  for (const r of reports) {
    const report = JSON.parse(JSON.stringify(r)) as unknown;
    expect(validate(report) ? [] : validate.errors).toEqual([]);
  }
}, 60_000);
