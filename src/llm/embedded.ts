/**
 * @module
 * A local GGUF model through node-llama-cpp (installed on demand by `witness setup
 * embedded`, imported only when this backend is used). Every answer is constrained by a grammar built from the
 * request's JSON schema, so even a tiny model returns schema-valid JSON. Threads
 * default to every core: node-llama-cpp's own default of 4 threads is hundreds of
 * times slower on a 2-core machine (dependencies.md).
 */
import { availableParallelism } from 'node:os';
import { basename, resolve } from 'node:path';
import { WitnessError } from '../core/errors.js';
import {
  importNodeLlamaCpp,
  type Llama,
  type LlamaContext,
  type LlamaContextSequence,
  type LlamaGrammar,
  type LlamaModel,
  type NodeLlamaCpp,
} from './node-llama-cpp.js';
import { type ThinkingSwitch, thinkingFor, withNoThinkSuffix } from './thinking.js';
import type { ChatBackend, ChatCallOptions, ChatReply, ChatRequest } from './types.js';

export interface EmbeddedOptions {
  /** Path of the GGUF file. */
  modelPath: string;
  /** Tokens of context per sequence (default 8192, as in the study). */
  contextSize?: number;
  /** CPU threads (default: every core). */
  threads?: number;
  /** Parallel sequences evaluated in one batch (default 1). */
  sequences?: number;
  /** Use a GPU if node-llama-cpp finds one (default false: CPU, prebuilt binary). */
  gpu?: boolean;
  /** Qwen3 thinking (thinking.ts), judged from the file name; default `auto`. Only the suffix applies here. */
  thinking?: ThinkingSwitch;
}

type _Llama = NodeLlamaCpp;
type _Sequence = LlamaContextSequence;
type _Grammar = LlamaGrammar;

export class EmbeddedBackend implements ChatBackend {
  private readonly free: _Sequence[];
  private readonly waiting: Array<(sequence: _Sequence) => void> = [];
  private readonly grammars = new Map<string, Promise<_Grammar>>();
  private readonly endpoint: string;

  private constructor(
    private readonly lib: _Llama,
    private readonly llama: Llama,
    private readonly model: LlamaModel,
    private readonly context: LlamaContext,
    modelPath: string,
    thinking: ThinkingSwitch,
  ) {
    this.free = Array.from({ length: context.totalSequences }, () => context.getSequence());
    this.endpoint = `embedded:${basename(modelPath)}`;
    const resolved = thinkingFor(basename(modelPath), thinking);
    this.suffix = resolved === 'suffix' || resolved === 'both';
  }

  private readonly suffix: boolean;

  static async open(options: EmbeddedOptions): Promise<EmbeddedBackend> {
    const lib = await importNodeLlamaCpp();
    const modelPath = resolve(options.modelPath);
    const threads = options.threads ?? availableParallelism();
    const llama = await lib.getLlama({
      gpu: options.gpu ? 'auto' : false,
      build: 'never',
      maxThreads: threads,
      logLevel: lib.LlamaLogLevel.error,
    });
    let model: LlamaModel;
    try {
      model = await llama.loadModel({ modelPath });
    } catch (error) {
      await llama.dispose();
      throw new WitnessError('INVALID_INPUT', `Cannot load the GGUF model ${modelPath}: ${(error as Error).message}`, {
        cause: error,
      });
    }
    const context = await model.createContext({
      contextSize: options.contextSize ?? 8192,
      sequences: options.sequences ?? 1,
      threads,
    });
    return new EmbeddedBackend(lib, llama, model, context, modelPath, options.thinking ?? 'auto');
  }

  async complete(request: ChatRequest, { signal }: ChatCallOptions): Promise<ChatReply> {
    const grammar = await this._grammar(request);
    const sequence = await this._acquire(signal);
    const started = performance.now();
    const before = { input: sequence.tokenMeter.usedInputTokens, output: sequence.tokenMeter.usedOutputTokens };
    const messages = this.suffix ? withNoThinkSuffix(request.messages) : request.messages;
    const system = messages
      .filter((m) => m.role === 'system')
      .map((m) => m.content)
      .join('\n\n');
    const user = messages
      .filter((m) => m.role !== 'system')
      .map((m) => m.content)
      .join('\n\n');
    const session = new this.lib.LlamaChatSession({ contextSequence: sequence, systemPrompt: system });
    try {
      // node-llama-cpp samples with top-k 40 and top-p 0.95 unless told; 0 turns its top-k off (our -1).
      const topK = request.topK === undefined ? undefined : Math.max(0, request.topK);
      const content = await session.prompt(user, {
        grammar,
        maxTokens: request.maxTokens,
        temperature: request.temperature,
        topP: request.topP,
        topK,
        signal,
      });
      return {
        content,
        usage: {
          promptTokens: sequence.tokenMeter.usedInputTokens - before.input,
          completionTokens: sequence.tokenMeter.usedOutputTokens - before.output,
        },
        latencyMs: Math.round(performance.now() - started),
        retries: 0,
        endpoint: this.endpoint,
      };
    } catch (error) {
      if (signal?.aborted)
        throw new WitnessError('CANCELLED', 'The embedded model call was cancelled (interrupted).', { cause: error });
      throw error;
    } finally {
      session.dispose({ disposeSequence: false });
      await sequence.clearHistory();
      this._release(sequence);
    }
  }

  async close(): Promise<void> {
    await this.context.dispose();
    await this.model.dispose();
    await this.llama.dispose();
  }

  private _grammar(request: ChatRequest): Promise<_Grammar> {
    const key = JSON.stringify(request.schema);
    let grammar = this.grammars.get(key);
    if (!grammar) {
      grammar = this.llama.createGrammarForJsonSchema(toGrammarSchema(request.schema) as never) as Promise<_Grammar>;
      this.grammars.set(key, grammar);
    }
    return grammar;
  }

  private _acquire(signal: AbortSignal | undefined): Promise<_Sequence> {
    signal?.throwIfAborted();
    const sequence = this.free.pop();
    if (sequence) return Promise.resolve(sequence);
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  private _release(sequence: _Sequence): void {
    const next = this.waiting.shift();
    if (next) next(sequence);
    else this.free.push(sequence);
  }
}

/** Small integer ranges become an enum (grammars have no minimum/maximum). */
const MAX_ENUM_RANGE = 1000;

/**
 * The schema in the dialect of node-llama-cpp's grammar builder: `anyOf` becomes
 * `oneOf`, a small integer range becomes an enum, other bounds are dropped (the
 * answer is still checked against the full schema afterwards).
 */
export function toGrammarSchema(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(toGrammarSchema);
  if (typeof schema !== 'object' || schema === null) return schema;
  const s = schema as Record<string, unknown>;
  const { minimum, maximum, anyOf, ...rest } = s;
  if (
    s.type === 'integer' &&
    typeof minimum === 'number' &&
    typeof maximum === 'number' &&
    maximum - minimum <= MAX_ENUM_RANGE
  ) {
    return { enum: Array.from({ length: maximum - minimum + 1 }, (_, i) => minimum + i) };
  }
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(rest))
    out[key] = key === 'enum' || key === 'const' ? value : toGrammarSchema(value);
  if (anyOf !== undefined) out.oneOf = toGrammarSchema(anyOf);
  return out;
}
