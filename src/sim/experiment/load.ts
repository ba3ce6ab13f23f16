/**
 * @module
 * Reading an experiment file (YAML or JSON, chosen by content: JSON is YAML).
 */
import { readFileSync } from 'node:fs';
import { parse, YAMLParseError } from 'yaml';
import { WitnessError } from '../../core/errors.js';
import { type Experiment, parseExperiment } from './schema.js';

export function loadExperimentFile(path: string): Experiment {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (cause) {
    throw new WitnessError(
      'NOT_FOUND',
      `Cannot read experiment file ${path}: ${(cause as NodeJS.ErrnoException).code ?? (cause as Error).message}. Check the path, or use --preset NAME.`,
      { cause },
    );
  }
  let data: unknown;
  try {
    // uniqueKeys: a key given twice is an error, not a silent override.
    data = parse(text, { uniqueKeys: true, prettyErrors: true });
  } catch (cause) {
    const where = cause instanceof YAMLParseError && cause.linePos ? ` at line ${cause.linePos[0].line}` : '';
    throw new WitnessError(
      'INVALID_INPUT',
      `${path} is not valid YAML or JSON${where}: ${(cause as Error).message.split('\n')[0]?.replace(/[:.]?\s*$/, '')}.`,
      { cause },
    );
  }
  if (typeof data !== 'object' || data === null || Array.isArray(data)) {
    throw new WitnessError(
      'INVALID_INPUT',
      `${path} must hold one experiment object with a "grid" (see docs/experiments.md).`,
    );
  }
  return parseExperiment(data, path);
}
