/**
 * A random-weight llama model in GGUF, written from scratch for tests: F32, 2 layers,
 * n_embd 64, a byte-level SentencePiece vocabulary (every byte is a token, plus the
 * ChatML markers), and a ChatML chat template. About 0.3 MB; node-llama-cpp loads it,
 * tokenizes, generates, and obeys JSON-schema grammars. The weights come from a
 * seeded generator, so the file is the same every time.
 */
import { writeFileSync } from 'node:fs';

const N_EMBD = 64;
const N_FF = 128;
const N_LAYER = 2;
const N_HEAD = 4;
const CHATML =
  "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";

// GGUF value types.
const U32 = 4;
const I32 = 5;
const F32 = 6;
const STRING = 8;
const ARRAY = 9;

type Value =
  | { type: typeof U32 | typeof I32 | typeof F32; value: number }
  | string
  | { array: typeof STRING | typeof F32 | typeof I32; values: (string | number)[] };

export function writeTinyGguf(path: string, seed = 1): void {
  const tokens = [
    '<unk>',
    '<s>',
    '</s>',
    ...Array.from({ length: 256 }, (_, b) => `<0x${b.toString(16).toUpperCase().padStart(2, '0')}>`),
    '<|im_start|>',
    '<|im_end|>',
  ];
  // Token types: 2 unknown, 3 control, 6 byte.
  const types = tokens.map((_t, i) => (i === 0 ? 2 : i < 3 || i >= 259 ? 3 : 6));
  const imEnd = tokens.length - 1;
  const meta: [string, Value][] = [
    ['general.architecture', 'llama'],
    ['general.name', 'witness-tiny-random'],
    ['general.file_type', { type: U32, value: 0 }],
    ['llama.context_length', { type: U32, value: 16384 }],
    ['llama.embedding_length', { type: U32, value: N_EMBD }],
    ['llama.block_count', { type: U32, value: N_LAYER }],
    ['llama.feed_forward_length', { type: U32, value: N_FF }],
    ['llama.attention.head_count', { type: U32, value: N_HEAD }],
    ['llama.attention.head_count_kv', { type: U32, value: N_HEAD }],
    ['llama.rope.dimension_count', { type: U32, value: N_EMBD / N_HEAD }],
    ['llama.attention.layer_norm_rms_epsilon', { type: F32, value: 1e-5 }],
    ['tokenizer.ggml.model', 'llama'],
    ['tokenizer.ggml.tokens', { array: STRING, values: tokens }],
    ['tokenizer.ggml.scores', { array: F32, values: tokens.map(() => 0) }],
    ['tokenizer.ggml.token_type', { array: I32, values: types }],
    ['tokenizer.ggml.bos_token_id', { type: U32, value: 1 }],
    ['tokenizer.ggml.eos_token_id', { type: U32, value: imEnd }],
    ['tokenizer.ggml.unknown_token_id', { type: U32, value: 0 }],
    ['tokenizer.chat_template', CHATML],
  ];
  const vocab = tokens.length;
  const tensors: [string, number[]][] = [
    ['token_embd.weight', [N_EMBD, vocab]],
    ['output_norm.weight', [N_EMBD]],
    ['output.weight', [N_EMBD, vocab]],
  ];
  for (let l = 0; l < N_LAYER; l++) {
    tensors.push(
      [`blk.${l}.attn_norm.weight`, [N_EMBD]],
      [`blk.${l}.attn_q.weight`, [N_EMBD, N_EMBD]],
      [`blk.${l}.attn_k.weight`, [N_EMBD, N_EMBD]],
    );
    tensors.push(
      [`blk.${l}.attn_v.weight`, [N_EMBD, N_EMBD]],
      [`blk.${l}.attn_output.weight`, [N_EMBD, N_EMBD]],
      [`blk.${l}.ffn_norm.weight`, [N_EMBD]],
    );
    tensors.push(
      [`blk.${l}.ffn_gate.weight`, [N_EMBD, N_FF]],
      [`blk.${l}.ffn_up.weight`, [N_EMBD, N_FF]],
      [`blk.${l}.ffn_down.weight`, [N_FF, N_EMBD]],
    );
  }
  const out: Buffer[] = [];
  const u32 = (n: number) => out.push(_int(4, n));
  const u64 = (n: number) => out.push(_int(8, n));
  const str = (s: string) => {
    const b = Buffer.from(s, 'utf8');
    u64(b.length);
    out.push(b);
  };
  out.push(Buffer.from('GGUF', 'latin1'));
  u32(3);
  u64(tensors.length);
  u64(meta.length);
  for (const [key, value] of meta) {
    str(key);
    if (typeof value === 'string') {
      u32(STRING);
      str(value);
    } else if ('array' in value) {
      u32(ARRAY);
      u32(value.array);
      u64(value.values.length);
      for (const v of value.values)
        typeof v === 'string' ? str(v) : out.push(_scalar(value.array as typeof F32 | typeof I32, v));
    } else {
      u32(value.type);
      out.push(_scalar(value.type, value.value));
    }
  }
  let offset = 0;
  for (const [name, dims] of tensors) {
    str(name);
    u32(dims.length);
    for (const d of dims) u64(d);
    u32(0); // F32
    u64(offset);
    offset += _align(dims.reduce((a, b) => a * b, 1) * 4);
  }
  const headerLength = out.reduce((n, b) => n + b.length, 0);
  out.push(Buffer.alloc(_align(headerLength) - headerLength));
  let state = seed >>> 0 || 1;
  const random = () => {
    // xorshift32: a fixed stream of weights in [-0.5, 0.5).
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) / 2 ** 32 - 0.5;
  };
  for (const [name, dims] of tensors) {
    const count = dims.reduce((a, b) => a * b, 1);
    const data = new Float32Array(_align(count * 4) / 4);
    for (let i = 0; i < count; i++) data[i] = name.endsWith('norm.weight') ? 1 : random() * 0.2;
    out.push(Buffer.from(data.buffer));
  }
  writeFileSync(path, Buffer.concat(out));
}

function _align(n: number): number {
  return Math.ceil(n / 32) * 32;
}

function _int(bytes: 4 | 8, n: number): Buffer {
  const b = Buffer.alloc(bytes);
  if (bytes === 4) b.writeUInt32LE(n);
  else b.writeBigUInt64LE(BigInt(n));
  return b;
}

function _scalar(type: typeof U32 | typeof I32 | typeof F32, n: number): Buffer {
  const b = Buffer.alloc(4);
  if (type === U32) b.writeUInt32LE(n);
  else if (type === I32) b.writeInt32LE(n);
  else b.writeFloatLE(n);
  return b;
}
