#!/usr/bin/env bash
# Builds the benchmark peer: llama.cpp's server as packaged by llama-cpp-python on PyPI
# (compiled from source here; CPU only), in a venv under the bench cache.
set -euo pipefail
CACHE="${PUSTAKA_BENCH_CACHE:-$HOME/.cache/pustaka/bench}"
VENV="$CACHE/llama-server-venv"
mkdir -p "$CACHE"
[ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
if ! "$VENV/bin/python" -c "import llama_cpp.server" 2>/dev/null; then
  echo "building llama-cpp-python[server] 0.3.36 from source (10-20 minutes on 2 cores)..." >&2
  "$VENV/bin/pip" install --quiet "llama-cpp-python[server]==0.3.36"
fi
"$VENV/bin/python" -c "import llama_cpp; print('llama-cpp-python', llama_cpp.__version__)"
