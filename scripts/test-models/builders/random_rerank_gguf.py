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

Usage: python random_rerank_gguf.py <tokenizer-source.gguf> <out.gguf>
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
CLS_STD = 1.0 / np.sqrt(HIDDEN)
CLS_OUT_STD = 2.0 / np.sqrt(HIDDEN)


def tensors(rng: np.random.RandomState, vocab_size: int):
    """The encoder's tensors, then the classification head, in a fixed order."""
    yield from encoder_tensors(rng, vocab_size, HIDDEN, LAYERS, FFN, CONTEXT)
    # The classification head (numpy shape is ggml's reversed: {n_embd, n_out} -> (n_out, n_embd)).
    yield "cls.weight", random_matrix(rng, HIDDEN, HIDDEN, np.float32, CLS_STD)
    yield "cls.bias", np.zeros(HIDDEN, dtype=np.float32)
    yield "cls.output.weight", random_matrix(rng, 1, HIDDEN, np.float32, CLS_OUT_STD)
    yield "cls.output.bias", np.zeros(1, dtype=np.float32)


def main() -> None:
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    tokenizer_source, out_path = sys.argv[1:]
    rng = np.random.RandomState(SEED)
    vocab_size = write_bert(
        out_path,
        tokenizer_source,
        name=f"random-rerank-{HIDDEN} (seed {SEED}, test fixture, scores carry no meaning)",
        hidden=HIDDEN,
        heads=HEADS,
        layers=LAYERS,
        ffn=FFN,
        context=CONTEXT,
        pooling=gguf.PoolingType.RANK,
        tensors=lambda vocab: tensors(rng, vocab),
    )
    print(f"wrote {out_path}: hidden {HIDDEN}, {LAYERS} layers, vocab {vocab_size}, rank pooling, seed {SEED}")


if __name__ == "__main__":
    main()
