#!/usr/bin/env bash
# Builds the benchmark's second peer, CPU only, into the bench cache (skipped when it is
# already there): llama-cpp-python[server] 0.3.36 from PyPI, llama.cpp behind a Python HTTP
# server, the reference for the single-stream section. The main peer, llama.cpp's own
# `llama-server`, is built by `npm run llama:server` (scripts/build-llama-server.mjs) from the
# llama.cpp Pustaka's engine is built from, with the install's CPU backend variants, so that
# both servers run the same kernels; `npm run bench` builds it first.
set -euo pipefail
VERSION=0.3.36
CACHE="${PUSTAKA_BENCH_CACHE:-$HOME/.cache/pustaka/bench}"
mkdir -p "$CACHE"

# llama-cpp-python's server.
VENV="$CACHE/llama-server-venv"
[ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
if ! "$VENV/bin/python" -c "import llama_cpp.server" 2>/dev/null; then
  echo "building llama-cpp-python[server] $VERSION from source (10-20 minutes on 2 cores)..." >&2
  # Not native either: AVX2 kernels, which every CPU of this kind has (no AVX-512 or AMX).
  CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON" \
    "$VENV/bin/pip" install --quiet --no-binary llama-cpp-python "llama-cpp-python[server]==$VERSION"
fi
"$VENV/bin/python" -c "import llama_cpp; print('llama-cpp-python', llama_cpp.__version__)" >&2
