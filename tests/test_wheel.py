"""The wheel built from the repo holds every file of the package that git tracks (about 15 s: it builds one)."""

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


def tracked(under: str) -> list[str]:
    """The files git tracks under ``under``, relative to the repo; skip when this is not a git checkout."""
    if shutil.which("git") is None or not (REPO / ".git").exists():
        pytest.skip("not a git checkout: which files the package has is unknown")
    done = subprocess.run(["git", "ls-files", under], cwd=REPO, capture_output=True, text=True, check=True)
    return done.stdout.split()


def test_the_built_wheel_holds_every_tracked_file_of_the_package(tmp_path: Path):
    source = tmp_path / "source"  # a copy of the tracked files only: nothing stray, no build/ left in the repo
    for name in ["pyproject.toml", "README.md", *tracked("src")]:
        (source / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / name, source / name)
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "wheel", "--quiet", "--no-deps"]
    subprocess.run([*pip, str(source), "-w", str(tmp_path / "dist")], check=True, capture_output=True)
    (wheel,) = (tmp_path / "dist").glob("discogym-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        held = set(archive.namelist())
    wanted = {name.removeprefix("src/") for name in tracked("src/discogym")}
    assert {name for name in wanted if not name.endswith(".py")} > {"discogym/suites/redstone/_core.c"}
    assert sorted(wanted - held) == []
    assert not [name for name in held if "__pycache__" in name or name.endswith(".pyc")]
