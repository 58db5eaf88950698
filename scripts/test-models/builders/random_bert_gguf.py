"""Write a small, randomly initialised 1024-dimension BERT encoder as GGUF.

Runs inside the prepare.py venv (needs ``numpy`` and the PyPI ``gguf`` package).

No package on the index ships the weights of a real 1024-dimension embedding
model (see README.md), so this file exists only to exercise the
``svc-embed-1024`` dimension contract: its vectors carry no meaning.

* Architecture: llama.cpp ``bert``, hidden 1024, 16 heads, 2 layers, FFN 2048,
  512 positions, mean pooling.
* Tokenizer: copied verbatim (every ``tokenizer.*`` key) from the
  all-MiniLM-L6-v2 GGUF that prepare.py builds first, so llama.cpp gets a real
  WordPiece vocabulary (30522 tokens) it already accepts.
* Weights: numpy's legacy ``RandomState`` (its stream is frozen by numpy's
  compatibility policy) with a fixed seed, N(0, 0.02) as in BERT's
  initialiser, stored as f16 (position and token-type embeddings as f32,
  as llama.cpp requires); LayerNorm weights 1, all biases 0. The GGUF
  writer adds no timestamps, so the file is byte-for-byte reproducible.

Usage: python random_bert_gguf.py <tokenizer-source.gguf> <out.gguf>
"""

from __future__ import annotations

import sys

import gguf
import numpy as np

SEED = 1024
HIDDEN = 1024
HEADS = 16
LAYERS = 2
FFN = 2048
CONTEXT = 512
TYPE_VOCAB = 2
INIT_STD = 0.02


def copy_tokenizer(source_path: str, writer: gguf.GGUFWriter) -> int:
    """Copy every ``tokenizer.*`` key of ``source_path`` into ``writer``; return the vocab size."""
    reader = gguf.GGUFReader(source_path)
    vocab_size = 0
    for key, field in reader.fields.items():
        if not key.startswith("tokenizer."):
            continue
        value = field.contents()
        main_type = field.types[0]
        sub_type = field.types[-1] if main_type == gguf.GGUFValueType.ARRAY else None
        writer.add_key_value(key, value, main_type, sub_type=sub_type)
        if key == gguf.Keys.Tokenizer.LIST:
            vocab_size = len(value)
    if not vocab_size:
        raise SystemExit(f"{source_path}: no tokenizer.ggml.tokens to copy")
    return vocab_size


def random_matrix(rng: np.random.RandomState, rows: int, cols: int, dtype=np.float16, std: float = INIT_STD) -> np.ndarray:
    """N(0, std) matrix, drawn in a fixed order from ``rng``."""
    return (rng.standard_normal((rows, cols)) * std).astype(dtype)


def encoder_tensors(rng: np.random.RandomState, vocab_size: int, hidden: int, layers: int, ffn: int, context: int):
    """Yield (gguf_name, array) for every tensor of a BERT encoder, in a fixed order."""
    ones = np.ones(hidden, dtype=np.float32)
    zeros = np.zeros(hidden, dtype=np.float32)
    yield "token_embd.weight", random_matrix(rng, vocab_size, hidden)
    # llama.cpp adds these two to f32 activations directly: they must be f32.
    yield "position_embd.weight", random_matrix(rng, context, hidden, np.float32)
    yield "token_types.weight", random_matrix(rng, TYPE_VOCAB, hidden, np.float32)
    yield "token_embd_norm.weight", ones
    yield "token_embd_norm.bias", zeros
    for layer in range(layers):
        blk = f"blk.{layer}"
        for proj in ("attn_q", "attn_k", "attn_v", "attn_output"):
            yield f"{blk}.{proj}.weight", random_matrix(rng, hidden, hidden)
            yield f"{blk}.{proj}.bias", zeros
        yield f"{blk}.attn_output_norm.weight", ones
        yield f"{blk}.attn_output_norm.bias", zeros
        yield f"{blk}.ffn_up.weight", random_matrix(rng, ffn, hidden)
        yield f"{blk}.ffn_up.bias", np.zeros(ffn, dtype=np.float32)
        yield f"{blk}.ffn_down.weight", random_matrix(rng, hidden, ffn)
        yield f"{blk}.ffn_down.bias", zeros
        yield f"{blk}.layer_output_norm.weight", ones
        yield f"{blk}.layer_output_norm.bias", zeros


def write_bert(out_path: str, tokenizer_source: str, *, name: str, hidden: int, heads: int, layers: int, ffn: int, context: int, pooling: gguf.PoolingType, tensors) -> int:
    """Write a BERT GGUF with the tokenizer of ``tokenizer_source`` and the tensors ``tensors(vocab_size)`` yields; return the vocab size."""
    writer = gguf.GGUFWriter(out_path, arch="bert")
    writer.add_type(gguf.GGUFType.MODEL)
    writer.add_name(name)
    writer.add_license("apache-2.0")
    writer.add_context_length(context)
    writer.add_embedding_length(hidden)
    writer.add_feed_forward_length(ffn)
    writer.add_block_count(layers)
    writer.add_head_count(heads)
    writer.add_layer_norm_eps(1e-12)
    writer.add_causal_attention(False)
    writer.add_pooling_type(pooling)
    writer.add_file_type(gguf.LlamaFileType.MOSTLY_F16)
    vocab_size = copy_tokenizer(tokenizer_source, writer)
    for tensor_name, array in tensors(vocab_size):
        writer.add_tensor(tensor_name, array)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return vocab_size


def main() -> None:
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    tokenizer_source, out_path = sys.argv[1:]
    rng = np.random.RandomState(SEED)
    vocab_size = write_bert(
        out_path,
        tokenizer_source,
        name=f"random-bert-{HIDDEN} (seed {SEED}, test fixture, no meaning)",
        hidden=HIDDEN,
        heads=HEADS,
        layers=LAYERS,
        ffn=FFN,
        context=CONTEXT,
        pooling=gguf.PoolingType.MEAN,
        tensors=lambda vocab: encoder_tensors(rng, vocab, HIDDEN, LAYERS, FFN, CONTEXT),
    )
    print(f"wrote {out_path}: hidden {HIDDEN}, {LAYERS} layers, vocab {vocab_size}, seed {SEED}")


if __name__ == "__main__":
    main()
