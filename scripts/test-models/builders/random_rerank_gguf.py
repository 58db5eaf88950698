"""Write a small, randomly initialised BERT cross-encoder (reranker) as GGUF.

Runs inside the prepare.py venv (needs ``numpy`` and the PyPI ``gguf`` package).

No package on the index ships the weights of a real cross-encoder reranker
(see README.md), so this file exists only to exercise the reranking path end
to end: node-llama-cpp's ranking context, llama.cpp's rank pooling, the
``rerank`` model type and ``POST /v1/rerank``. **Its scores carry no meaning**:
they are deterministic numbers between 0 and 1, nothing more.

* Architecture: llama.cpp ``bert``, hidden 128, 2 heads, 2 layers, FFN 512,
  512 positions, pooling type RANK (``gguf.PoolingType.RANK``).
* Classification head, as llama.cpp's ``build_pooling`` (RANK) reads it for
  ``bert`` (src/models/bert.cpp): the [CLS] row goes through ``cls.weight``
  {n_embd, n_embd} + ``cls.bias`` {n_embd}, tanh (BERT's pooler), then
  ``cls.output.weight`` {n_embd, 1} + ``cls.output.bias`` {1} (the
  classifier, one label). The logit is turned into a probability by
  node-llama-cpp (sigmoid). The presence of ``cls.weight`` /
  ``cls.output.weight`` is what node-llama-cpp's ``supportsRanking`` checks.
* Tokenizer: copied verbatim (every ``tokenizer.*`` key) from the
  all-MiniLM-L6-v2 GGUF that prepare.py builds first ([CLS]/[SEP] are what
  the ranking context puts around query and document).
* Weights: numpy's legacy ``RandomState`` with a fixed seed; encoder weights
  N(0, 0.02) as in BERT's initialiser, stored as f16 (position and token-type
  embeddings as f32, as llama.cpp requires); LayerNorm weights 1, biases 0.
  The head is drawn wider (N(0, 1/sqrt(hidden)) and N(0, 2/sqrt(hidden))) so
  the scores spread over (0, 1) instead of all sitting at 0.5. The GGUF writer
  adds no timestamps, so the file is byte-for-byte reproducible.

``--shape minilm-l6`` writes the same kind of file at the size of the common small
cross-encoder ms-marco-MiniLM-L-6-v2 (hidden 384, 12 heads, 6 layers, FFN 1536): its
scores are as meaningless, but it costs what a real reranker of that size costs, which
is what the latency benchmark (bench/rag-scale.ts) needs.

Usage: python random_rerank_gguf.py <tokenizer-source.gguf> <out.gguf> [--shape minilm-l6]
"""

from __future__ import annotations

import sys

import gguf
import numpy as np

from random_bert_gguf import encoder_tensors, random_matrix, write_bert

SEED = 4242
HIDDEN = 128
HEADS = 2
LAYERS = 2
FFN = 512
CONTEXT = 512
# Other shapes: (hidden, heads, layers, ffn).
SHAPES = {"test": (HIDDEN, HEADS, LAYERS, FFN), "minilm-l6": (384, 12, 6, 1536)}


def tensors(rng: np.random.RandomState, vocab_size: int, hidden: int, layers: int, ffn: int):
    """The encoder's tensors, then the classification head, in a fixed order."""
    yield from encoder_tensors(rng, vocab_size, hidden, layers, ffn, CONTEXT)
    # The classification head (numpy shape is ggml's reversed: {n_embd, n_out} -> (n_out, n_embd)).
    yield "cls.weight", random_matrix(rng, hidden, hidden, np.float32, 1.0 / np.sqrt(hidden))
    yield "cls.bias", np.zeros(hidden, dtype=np.float32)
    yield "cls.output.weight", random_matrix(rng, 1, hidden, np.float32, 2.0 / np.sqrt(hidden))
    yield "cls.output.bias", np.zeros(1, dtype=np.float32)


def main() -> None:
    args = sys.argv[1:]
    shape = "test"
    if len(args) == 4 and args[2] == "--shape" and args[3] in SHAPES:
        shape = args[3]
        args = args[:2]
    if len(args) != 2:
        raise SystemExit(__doc__)
    tokenizer_source, out_path = args
    hidden, heads, layers, ffn = SHAPES[shape]
    rng = np.random.RandomState(SEED)
    vocab_size = write_bert(
        out_path,
        tokenizer_source,
        name=f"random-rerank-{hidden} (seed {SEED}, test fixture, scores carry no meaning)",
        hidden=hidden,
        heads=heads,
        layers=layers,
        ffn=ffn,
        context=CONTEXT,
        pooling=gguf.PoolingType.RANK,
        tensors=lambda vocab: tensors(rng, vocab, hidden, layers, ffn),
    )
    print(f"wrote {out_path}: hidden {hidden}, {layers} layers, vocab {vocab_size}, rank pooling, seed {SEED}")


if __name__ == "__main__":
    main()
