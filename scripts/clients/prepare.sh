#!/usr/bin/env bash
# Creates (or refreshes) the Python venv that test/clients/ runs in: the official openai and
# anthropic clients, LangChain (with its standard test suites) and LlamaIndex, exactly as
# pinned, with hashes, in requirements.txt beside this file.
#
#   bash scripts/clients/prepare.sh        # = npm run clients:setup
#
# The venv lives at $PUSTAKA_CLIENTS_VENV (default ~/.cache/pustaka/clients-venv), apart from
# the test models' tool venv. It is left as it is when its stamp file holds the sha256 of
# requirements.txt; otherwise it is rebuilt from scratch. Its path is printed last, alone on
# its line. Needs CPython 3.11 (the version requirements.txt was compiled for): python3.11,
# or python3 when that is 3.11, or $PUSTAKA_CLIENTS_PYTHON.
#
# To re-pin (maintainers): edit requirements.in, then, with pip-tools 7.6.2 in any Python 3.11
# venv, run the pip-compile command written at the top of requirements.in in this folder.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
requirements="$here/requirements.txt"
venv="${PUSTAKA_CLIENTS_VENV:-$HOME/.cache/pustaka/clients-venv}"
stamp="$venv/pustaka-clients.sha256"

log() { echo "[clients] $*" >&2; }

wanted="$(sha256sum "$requirements" | cut -d' ' -f1)"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$wanted" ] && [ -x "$venv/bin/python" ]; then
  log "client venv up to date: $venv"
  echo "$venv"
  exit 0
fi

python="${PUSTAKA_CLIENTS_PYTHON:-}"
if [ -z "$python" ]; then
  if command -v python3.11 >/dev/null 2>&1; then python=python3.11; else python=python3; fi
fi
version="$("$python" -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null || true)"
if [ "$version" != "3.11" ]; then
  log "needs CPython 3.11 (requirements.txt is compiled for it); '$python' is ${version:-not runnable}."
  log "Install python3.11 or point PUSTAKA_CLIENTS_PYTHON at one."
  exit 1
fi

started=$SECONDS
log "creating client venv $venv with $("$python" --version 2>&1)"
mkdir -p "$(dirname "$venv")"
rm -rf "$venv"
"$python" -m venv "$venv"
log "installing $(grep -cE '^[a-z0-9]' "$requirements") pinned, hash-checked packages"
# --require-hashes: every file must match a hash in requirements.txt, whatever index or
# wheel cache pip is configured with; --no-deps: requirements.txt already lists them all.
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-input \
  --require-hashes --no-deps --only-binary :all: -r "$requirements" >&2
"$venv/bin/python" -m pip check >&2
"$venv/bin/python" -c 'import openai, anthropic, langchain_openai, langchain_anthropic, langchain_tests, llama_index.llms.openai_like, pytest' >&2
echo "$wanted" >"$stamp"
log "client venv ready in $((SECONDS - started))s"
echo "$venv"
