#!/usr/bin/env bash
# Builds the benchmark peers, CPU only, into the bench cache (each step is skipped when its
# result is already there):
# - llama.cpp's own server, `llama-server` (continuous batching, batched embeddings, prompt
#   cache): compiled from the llama.cpp that the llama-cpp-python 0.3.36 source package from
#   PyPI vendors (about 30 minutes on 2 cores), portable as llama.cpp's releases and Pustaka's
#   own build are (every CPU backend variant, the best loaded at run time): a -march=native
#   peer died with SIGILL (AMX) on another CPU of this kind, and would not be the same
#   comparison as Pustaka's portable build;
# - llama-cpp-python[server] 0.3.36: the same llama.cpp behind a Python HTTP server.
set -euo pipefail
VERSION=0.3.36
CACHE="${PUSTAKA_BENCH_CACHE:-$HOME/.cache/pustaka/bench}"
mkdir -p "$CACHE"

# llama-server: the binary's path is printed last; bench/run.ts looks for it there.
LLAMA_DIR="$CACHE/llama-server"
LLAMA_BIN="$LLAMA_DIR/build/bin/llama-server"
# A peer built by an earlier version of this script (native, static) is rebuilt.
if [ -x "$LLAMA_BIN" ] && ! ls "$LLAMA_DIR/build/bin"/libggml-cpu-*.so >/dev/null 2>&1; then rm -rf "$LLAMA_DIR"; fi
if ! LD_LIBRARY_PATH="$LLAMA_DIR/build/bin" "$LLAMA_BIN" --version >/dev/null 2>&1; then
  echo "building llama-server (portable) from llama-cpp-python $VERSION's vendored llama.cpp (about 30 minutes on 2 cores)..." >&2
  work="$(mktemp -d)"
  trap 'rm -rf "$work"' EXIT
  python3 -m pip download --quiet --no-binary :all: --no-deps "llama-cpp-python==$VERSION" -d "$work"
  tar xzf "$work/llama_cpp_python-$VERSION.tar.gz" -C "$work"
  rm -rf "$LLAMA_DIR"
  mv "$work/llama_cpp_python-$VERSION/vendor/llama.cpp" "$LLAMA_DIR"
  # Shared libraries (loadable CPU variants need them), found beside the binary. No curl or
  # OpenSSL: models are local files.
  cmake -S "$LLAMA_DIR" -B "$LLAMA_DIR/build" -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=ON \
    -DLLAMA_BUILD_SERVER=ON -DLLAMA_BUILD_TOOLS=ON -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF \
    -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF -DGGML_NATIVE=OFF -DGGML_BACKEND_DL=ON -DGGML_CPU_ALL_VARIANTS=ON >&2
  cmake --build "$LLAMA_DIR/build" --target llama-server -j"$(nproc)" >&2
fi
LD_LIBRARY_PATH="$LLAMA_DIR/build/bin" "$LLAMA_BIN" --version 2>&1 | grep -m1 version >&2

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
echo "$LLAMA_BIN"
