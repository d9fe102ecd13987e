"""Plancraft's data, read from its pinned PyPI wheel: items, stack sizes, tags, recipes, splits and pictures.

discogym does not vendor these files nor import the ``plancraft`` package. The wheel is fetched once
(``pip download``), its checksum checked, and kept in the user cache directory; everything is read
straight from the zip, once per process.
"""

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from discogym.core import UserError
from discogym.core.model.cache import cache_dir

WHEEL_VERSION = "0.4.9"
WHEEL_NAME = f"plancraft-{WHEEL_VERSION}-py3-none-any.whl"
WHEEL_SHA256 = "e212277c0c0f7ea8d7a899fc61f224124fbab2242f46e79422017ed9e5296d79"
WHEEL_VARIABLE = "DISCOGYM_PLANCRAFT_WHEEL"

# The official task sets, in the order the suite lists them (the first is the default).
SPLITS = ("test", "val", "train", "test.small", "val.small", "test.small.easy", "val.small.easy")

_ENV = "plancraft/environment/"
RECIPE_PREFIX = _ENV + "recipes/"
TAG_PREFIX = _ENV + "tags/"
ICON_PREFIX = _ENV + "assets/images/"
CONSTANTS = _ENV + "assets/constants.json"
BACKGROUND = _ENV + "assets/table.png"
FONT = _ENV + "assets/minecraft_font.ttf"
DATA_PREFIX = "plancraft/data/"


def cached_wheel_path() -> Path:
    """Where the fetched wheel lives in the cache."""
    return cache_dir() / "crafting" / WHEEL_NAME


def sha256_of(path: Path) -> str:
    """The file's SHA-256 as hex."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


OFFLINE_HELP = (
    f"Plancraft's data is not available. discogym reads it from the plancraft=={WHEEL_VERSION} wheel on PyPI "
    f"and caches it in {{cache}}. Fetch it with `discogym crafting data --fetch` on a machine with access to "
    f"PyPI; offline, download {WHEEL_NAME} elsewhere (`pip download --no-deps plancraft=={WHEEL_VERSION}`) and "
    f"install it with `discogym crafting data --wheel PATH`, or point {WHEEL_VARIABLE} at it."
)


def _check_wheel(path: Path) -> Path:
    if not path.is_file():
        raise UserError(f"{path}: no such file")
    actual = sha256_of(path)
    if actual != WHEEL_SHA256:
        raise UserError(f"{path}: SHA-256 is {actual}, expected {WHEEL_SHA256} for {WHEEL_NAME}")
    return path


def find_wheel() -> Path | None:
    """The wheel to read: ``$DISCOGYM_PLANCRAFT_WHEEL`` if set (checked), else the cached one, else None."""
    override = os.environ.get(WHEEL_VARIABLE)
    if override:
        return _check_wheel(Path(override))
    cached = cached_wheel_path()
    return cached if cached.is_file() else None


def install_wheel(source: Path) -> Path:
    """Copy a wheel the user supplies into the cache, after checking its checksum."""
    _check_wheel(source)
    target = cached_wheel_path()
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_suffix(".partial")
    shutil.copyfile(source, partial)
    partial.replace(target)
    return target


def fetch_wheel() -> Path:
    """Download the pinned wheel with pip (no dependencies), check it and cache it; return its path."""
    with tempfile.TemporaryDirectory() as scratch:
        command = [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--no-deps",
            "--only-binary=:all:",
            "--disable-pip-version-check",
            "--quiet",
            "--dest",
            scratch,
            f"plancraft=={WHEEL_VERSION}",
        ]
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        downloaded = Path(scratch) / WHEEL_NAME
        if done.returncode != 0 or not downloaded.is_file():
            detail = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no wheel was written"]
            raise UserError(f"could not download {WHEEL_NAME}: {detail[0]}\n" + offline_help())
        return install_wheel(downloaded)


def offline_help() -> str:
    """How to provide the wheel by hand."""
    return OFFLINE_HELP.format(cache=cached_wheel_path().parent)


def ensure_wheel() -> Path:
    """The wheel, fetched on first use."""
    return find_wheel() or fetch_wheel()


class Example(BaseModel):
    """One task of Plancraft's dataset, as published (fields discogym uses; the rest are ignored)."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    id: str
    split: str
    target: str
    slotted_inventory: dict[int, "SlotItem"]
    num_distractors: int
    impossible: bool
    optimal_path_length: int | None = None
    optimal_path: list[str] | None = None
    items_used: int | None = None
    unique_items_used: int | None = None
    complexity: int | None = None
    complexity_bin: int
    complexity_split: str
    unseen_in_train: bool = False
    unseen_in_val: bool = False

    def table(self) -> dict[int, tuple[str, int]]:
        """The starting table: slot index -> (item, quantity)."""
        return {index: (stack.type, stack.quantity) for index, stack in self.slotted_inventory.items()}


class SlotItem(BaseModel):
    """An item stack in one slot."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    type: str
    quantity: int = Field(ge=1, le=64)


Example.model_rebuild()


@dataclass(frozen=True)
class RawData:
    """The wheel's files, parsed, in a fixed order (recipes and tags sorted by file name)."""

    wheel: Path
    items: tuple[str, ...]
    stack_sizes: dict[str, int]
    tags: dict[str, tuple[str, ...]]
    recipes: tuple[tuple[str, dict[str, Any]], ...]


def strip_namespace(name: str) -> str:
    """``minecraft:oak_planks`` -> ``oak_planks``."""
    return name.removeprefix("minecraft:")


def _stem(member: str, prefix: str) -> str:
    return member[len(prefix) :].removesuffix(".json")


@cache
def raw_data() -> RawData:
    """Items, stack sizes, tags and recipe files from the wheel (fetched on first use); read once per process."""
    wheel = ensure_wheel()
    with zipfile.ZipFile(wheel) as archive:
        names = sorted(archive.namelist())
        constants = json.loads(archive.read(CONSTANTS))
        tags = {
            _stem(n, TAG_PREFIX): tuple(json.loads(archive.read(n))["values"])
            for n in names
            if n.startswith(TAG_PREFIX) and n.endswith(".json")
        }
        recipes = tuple(
            (_stem(n, RECIPE_PREFIX), json.loads(archive.read(n)))
            for n in names
            if n.startswith(RECIPE_PREFIX) and n.endswith(".json")
        )
    items = tuple(entry["type"] for entry in constants["items"])
    stack_sizes = {entry["type"]: (entry["stackSize"] if entry["stackable"] else 1) for entry in constants["items"]}
    return RawData(wheel=wheel, items=items, stack_sizes=stack_sizes, tags=tags, recipes=recipes)


@cache
def split_size(name: str) -> int:
    """How many examples an official split has, without validating them (fast enough for ``discogym list``)."""
    if name not in SPLITS:
        raise UserError(f"crafting has no task set '{name}'; sets: {', '.join(SPLITS)} (or a generated file)")
    with zipfile.ZipFile(ensure_wheel()) as archive:
        return len(json.loads(archive.read(f"{DATA_PREFIX}{name}.json")))


def load_split(name: str) -> tuple[Example, ...]:
    """The examples of one official split, in the file's order."""
    if name not in SPLITS:
        raise UserError(f"crafting has no task set '{name}'; sets: {', '.join(SPLITS)} (or a generated file)")
    with zipfile.ZipFile(ensure_wheel()) as archive:
        rows = json.loads(archive.read(f"{DATA_PREFIX}{name}.json"))
    return tuple(Example.model_validate(row) for row in rows)


@cache
def _archive() -> zipfile.ZipFile:
    """The wheel, opened once per process for the pictures' files (read one by one as they are needed)."""
    return zipfile.ZipFile(ensure_wheel())


@cache
def read_asset(member: str) -> bytes:
    """One file of the wheel (icons, background, font), read once per process."""
    return _archive().read(member)


@cache
def icon_names() -> frozenset[str]:
    """The items that have an icon."""
    return frozenset(
        n[len(ICON_PREFIX) :].removesuffix(".png")
        for n in _archive().namelist()
        if n.startswith(ICON_PREFIX) and n.endswith(".png")
    )


def data_status() -> dict[str, Any]:
    """What ``discogym crafting data`` reports, without fetching anything."""
    wheel = find_wheel()
    status: dict[str, Any] = {
        "version": WHEEL_VERSION,
        "sha256": WHEEL_SHA256,
        "cache": str(cached_wheel_path()),
        "wheel": None if wheel is None else str(wheel),
        "available": wheel is not None,
    }
    return status
