/**
 * @module
 * node-llama-cpp, found where `witness setup embedded` puts it. It is not a dependency
 * of the package: its prebuilt GPU builds weigh ~700 MB, and only `--agents embedded`
 * needs it. It is looked up first as an ordinary package (a user who ran
 * `npm install node-llama-cpp` gets theirs), then in this package's `.tools/embedded/`. The
 * types below are the part of its API Witness uses, so the package type-checks
 * without it installed.
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { WitnessError } from '../core/errors.js';

/** The version `witness setup embedded` installs and the tests run against. */
export const NODE_LLAMA_CPP_VERSION = '3.21.1';

/** Where `witness setup embedded` installs it: `.tools/embedded/` at this package's root (next to dist/ and src/; the tests' scripts/tools.mjs uses the same folder). */
export function toolsDir(): string {
  return resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '.tools', 'embedded');
}

export interface LlamaContextSequence {
  readonly tokenMeter: { readonly usedInputTokens: number; readonly usedOutputTokens: number };
  clearHistory(): Promise<void>;
}
export type LlamaGrammar = object;
export interface LlamaContext {
  readonly totalSequences: number;
  getSequence(): LlamaContextSequence;
  dispose(): Promise<void>;
}
export interface LlamaModel {
  createContext(options: { contextSize: number; sequences: number; threads: number }): Promise<LlamaContext>;
  dispose(): Promise<void>;
}
export interface Llama {
  loadModel(options: { modelPath: string }): Promise<LlamaModel>;
  createGrammarForJsonSchema(schema: never): Promise<LlamaGrammar>;
  dispose(): Promise<void>;
}
export interface LlamaChatSession {
  prompt(
    text: string,
    options: {
      grammar: LlamaGrammar;
      maxTokens?: number;
      temperature?: number;
      topP?: number;
      topK?: number | undefined;
      signal?: AbortSignal | undefined;
    },
  ): Promise<string>;
  dispose(options: { disposeSequence: boolean }): void;
}
export interface NodeLlamaCpp {
  getLlama(options: { gpu: 'auto' | false; build: 'never'; maxThreads: number; logLevel: unknown }): Promise<Llama>;
  LlamaLogLevel: { error: unknown };
  LlamaChatSession: new (options: { contextSequence: LlamaContextSequence; systemPrompt: string }) => LlamaChatSession;
}

/** Imports node-llama-cpp, or says the one command that installs it. */
export async function importNodeLlamaCpp(): Promise<NodeLlamaCpp> {
  const specifier = 'node-llama-cpp'; // a variable: TypeScript must not look for the package
  try {
    return (await import(specifier)) as NodeLlamaCpp;
  } catch {
    // not an ordinary dependency here: try .tools/
  }
  const manifest = join(toolsDir(), 'package.json');
  try {
    const entry = createRequire(existsSync(manifest) ? manifest : join(toolsDir(), 'x.js')).resolve(specifier);
    return (await import(pathToFileURL(entry).href)) as NodeLlamaCpp;
  } catch (error) {
    throw new WitnessError(
      'NOT_FOUND',
      `Embedded models need node-llama-cpp, which is installed on demand: run \`npx witness setup embedded\` (about 70 MB for the CPU build, into ${toolsDir()}), or use --agents llm with a server.`,
      { cause: error },
    );
  }
}
