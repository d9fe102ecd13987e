"""AutumnBench's published environments and tasks, fetched at run time into the user cache (never into the repo).

The official harness (BasisResearch/MARAProtocol, ``scripts/download_dataset.sh``) reads ``manifest_public.json``
from a public Firebase Storage bucket, then for each entry ``{id, program}`` downloads ``answers/<id>.json``,
``prompts/<id>.json``, ``programs/<program>.sexp`` and, for change detection, the prompt's ``wrong_program``.
discogym does the same (``discogym autumn data --fetch``), or takes a folder someone downloaded already
(``--from DIR``: that raw layout, or the harness's renamed ``example_benchmark/`` layout), validates every file,
and keeps them in the harness's program-named layout with the SHA-256 of each file in ``checksums.json``:

    programs/P.sexp  programs/P_change_detection_wrong_program.sexp
    prompts/P_mfp.json  prompts/P_planning.json  prompts/P_cd.json
    answers/P_mfp.json  answers/P_planning.json  answers/P_change_detection.json

No file of the release is committed to discogym; formats are described in docs/autumn-official.md.
"""

import hashlib
import json
import os
import shutil
import tempfile
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from discogym.core import UserError
from discogym.core.model.cache import cache_dir

URL_VARIABLE = "DISCOGYM_AUTUMNBENCH_URL"  # another base address (a mirror; the tests point it at nothing)
BASE_URL = "https://firebasestorage.googleapis.com/v0/b/prolific-server-123.firebasestorage.app/o/"
MANIFEST = "manifest_public.json"
INDEX = "checksums.json"
TIMEOUT = 30.0  # seconds per download
# The harness's colour table (example_benchmark/color_dict.yaml): index -> name; 0 marks a masked cell in MFP
# frames and options, and is "transparent" elsewhere.
COLOURS = (
    "transparent", "black", "gray", "grey", "gold", "green", "mediumpurple", "purple", "white", "yellow", "blue",
    "red", "orange", "sandybrown", "brown", "pink", "lightblue", "orangered", "skyblue", "lightcyan", "lightgreen",
    "magenta", "darkgray", "darkgrey", "darkblue", "darkgreen", "darkred", "tan", "lightpink", "crimson",
    "goldenrod", "steelblue", "coral", "silver", "seagreen", "limegreen", "cyan", "lightgray", "maroon", "darkorange",
)  # fmt: skip
MFP, PLANNING, CD = "masked_frame_prediction", "planning", "change_detection"
# task type -> (our kind, prompt suffix, answer suffix) in the harness's renamed layout
KIND_FILES = {
    MFP: ("mfp", "_mfp", "_mfp"),
    PLANNING: ("planning", "_planning", "_planning"),
    CD: ("cd", "_cd", "_change_detection"),
}
WRONG_SUFFIX = "_change_detection_wrong_program"

IntGrid = list[list[int]]


def data_dir() -> Path:
    """The cached release: ``cache_dir()/autumnbench``."""
    return cache_dir() / "autumnbench"


def get_help() -> str:
    """One line: how to get the data."""
    return (
        "AutumnBench's public tasks are not cached: run `discogym autumn data --fetch` (needs the network), or "
        "download them with MARAProtocol's scripts/download_dataset.sh and run `discogym autumn data --from DIR`"
    )


# ----------------------------------------------------------------------------------------------------------------
# The file formats


class _Strict(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore")


class FrameAction(_Strict):
    """The action that led to an MFP frame."""

    type: Literal["noop", "left", "right", "up", "down", "click"]
    x: int | None = None
    y: int | None = None

    @model_validator(mode="after")
    def _click_cell(self) -> "FrameAction":
        if self.type == "click" and (self.x is None or self.y is None):
            raise ValueError("a click needs x and y")
        return self

    def text(self) -> str:
        """The action in our syntax (``click X Y``)."""
        return f"click {self.x} {self.y}" if self.type == "click" else self.type


class MfpFrame(_Strict):
    """One observation: the grid (colour indices, 0 masked) and the action that led to it (none for the first)."""

    masked_grid: IntGrid
    action: FrameAction | None = None


class MfpPrompt(_Strict):
    """``prompts/P_mfp.json``."""

    type: Literal["masked_frame_prediction"]
    program: str
    observations: list[MfpFrame] = Field(min_length=2)
    choices: list[IntGrid] = Field(min_length=6, max_length=6)


class MfpAnswer(_Strict):
    """``answers/P_mfp.json``."""

    correct_idx: int = Field(ge=0, lt=6)


class PlanningPrompt(_Strict):
    """``prompts/P_planning.json``: the goal grid and the mask (1: the cell is checked)."""

    type: Literal["planning"]
    program: str
    goal: IntGrid
    mask: IntGrid


class PlanningAnswer(_Strict):
    """``answers/P_planning.json`` (optional)."""

    optimal_actions_count: int | None = None


class ChangePrompt(_Strict):
    """``prompts/P_cd.json``."""

    type: Literal["change_detection"]
    program: str
    wrong_program: str


class ChangeAnswer(_Strict):
    """``answers/P_change_detection.json``: the trigger condition, an Autumn predicate."""

    condition: str = Field(min_length=1)


PROMPTS: dict[str, type[_Strict]] = {MFP: MfpPrompt, PLANNING: PlanningPrompt, CD: ChangePrompt}
ANSWERS: dict[str, type[_Strict]] = {MFP: MfpAnswer, PLANNING: PlanningAnswer, CD: ChangeAnswer}


def colour_name(index: int, masked: str = "transparent") -> str:
    """A colour index as the harness names it (0: ``masked``)."""
    if index == 0:
        return masked
    if not 0 < index < len(COLOURS):
        raise UserError(f"colour index {index} is not in the harness's table (0 to {len(COLOURS) - 1})")
    return COLOURS[index]


# ----------------------------------------------------------------------------------------------------------------
# Reading a folder (raw or renamed layout) into the cache's layout


def _json(path: Path, name: str) -> Any:
    try:
        return json.loads(path.read_bytes())
    except json.JSONDecodeError as err:
        raise UserError(f"{name}: not JSON (line {err.lineno}, column {err.colno}: {err.msg})") from None
    except UnicodeDecodeError:
        raise UserError(f"{name}: not UTF-8 text") from None


def _validated(model: type[_Strict], document: Any, name: str) -> _Strict:
    try:
        return model.model_validate(document)
    except ValidationError as err:
        problem = err.errors(include_url=False)[0]
        where = ".".join(str(part) for part in problem["loc"]) or "the document"
        raise UserError(f"{name}: {where}: {problem['msg']}") from None


def _first_file(folder: Path, candidates: list[str], what: str) -> str:
    for candidate in candidates:
        if (folder / candidate).is_file():
            return candidate
    raise UserError(f"{folder}: {what} is missing (looked for {' or '.join(candidates)})")


def _program_name(name: str) -> str:
    if not name or "/" in name or "\\" in name or name.startswith("."):
        raise UserError(f"{name!r} is not a program name")
    return name


def collect(folder: Path) -> dict[str, bytes]:
    """Every task of the folder, validated, as the cache's files (relative path -> bytes); UserError with one line
    at the first problem. Prompts are read in sorted order; the folder may hold the raw or the renamed layout."""
    prompts = folder / "prompts"
    if not prompts.is_dir():
        raise UserError(f"{folder}: no prompts/ folder (give the folder that holds prompts/, answers/, programs/)")
    files: dict[str, bytes] = {}
    for path in sorted(prompts.glob("*.json")):
        files |= _task_files(folder, path)
    if not files:
        raise UserError(f"{folder}: prompts/ holds no task (*.json)")
    return files


def _task_files(folder: Path, prompt_path: Path) -> dict[str, bytes]:
    name = f"prompts/{prompt_path.name}"
    document = _json(prompt_path, name)
    kind = document.get("type") if isinstance(document, dict) else None
    if kind not in PROMPTS:
        raise UserError(f"{name}: type is {kind!r}; expected one of {', '.join(PROMPTS)}")
    prompt = _validated(PROMPTS[kind], document, name)
    program = _program_name(str(document["program"]))
    _, prompt_suffix, answer_suffix = KIND_FILES[kind]
    answer_candidates = [f"answers/{program}{answer_suffix}.json", f"answers/{prompt_path.name}"]
    out: dict[str, bytes] = {f"prompts/{program}{prompt_suffix}.json": prompt_path.read_bytes()}
    answer_file = next((c for c in answer_candidates if (folder / c).is_file()), None)
    if answer_file is None and kind != PLANNING:  # the planning answer (optimal actions) is information only
        raise UserError(f"{folder}: the answer of {name} is missing (looked for {' or '.join(answer_candidates)})")
    if answer_file is not None:
        _validated(ANSWERS[kind], _json(folder / answer_file, answer_file), answer_file)
        out[f"answers/{program}{answer_suffix}.json"] = (folder / answer_file).read_bytes()
    out[f"programs/{program}.sexp"] = _program_bytes(folder, [f"programs/{program}.sexp"], f"the program of {name}")
    if isinstance(prompt, ChangePrompt):
        wrong = [f"programs/{program}{WRONG_SUFFIX}.sexp", f"programs/{_program_name(prompt.wrong_program)}.sexp"]
        out[f"programs/{program}{WRONG_SUFFIX}.sexp"] = _program_bytes(folder, wrong, f"the wrong program of {name}")
    return out


def _program_bytes(folder: Path, candidates: list[str], what: str) -> bytes:
    found = _first_file(folder, candidates, what)
    data = (folder / found).read_bytes()
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        raise UserError(f"{found}: not UTF-8 text") from None
    return data


def sha256_hex(data: bytes) -> str:
    """SHA-256 as hex."""
    return hashlib.sha256(data).hexdigest()


def install(files: dict[str, bytes], source: str) -> Path:
    """Write the files and their checksums into the cache, replacing what was there (atomically: a folder
    written beside it, then renamed)."""
    target = data_dir()
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".autumnbench-", dir=target.parent))
    try:
        for relative in sorted(files):
            path = staging / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(files[relative])
        index = {"source": source, "files": {rel: sha256_hex(files[rel]) for rel in sorted(files)}}
        (staging / INDEX).write_text(json.dumps(index, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        if target.exists():
            shutil.rmtree(target)
        staging.rename(target)
    finally:
        if staging.exists():
            shutil.rmtree(staging)
    return target


def install_from(folder: Path) -> Path:
    """``--from DIR``: validate a downloaded folder and copy it into the cache."""
    if not folder.is_dir():
        raise UserError(f"{folder}: no such folder")
    return install(collect(folder), f"folder {folder.resolve()}")


# ----------------------------------------------------------------------------------------------------------------
# Downloading


def base_url() -> str:
    """The address the files are read from (``$DISCOGYM_AUTUMNBENCH_URL`` overrides the official bucket)."""
    return os.environ.get(URL_VARIABLE) or BASE_URL


def file_url(relative: str) -> str:
    """A file's address, as download_dataset.sh builds it (the path URL-encoded, ``?alt=media``)."""
    return base_url() + urllib.parse.quote(relative, safe="") + "?alt=media"


def download(relative: str) -> bytes:
    """One file of the release; UserError (one line) when it cannot be had."""
    url = file_url(relative)
    try:
        with urllib.request.urlopen(url, timeout=TIMEOUT) as response:
            return bytes(response.read())
    except urllib.error.HTTPError as err:
        reason = f"HTTP {err.code}"
    except urllib.error.URLError as err:
        reason = str(err.reason)
    except (OSError, ValueError) as err:
        reason = str(err) or type(err).__name__
    host = urllib.parse.urlsplit(url).netloc or url
    raise UserError(
        f"cannot download {relative} from {host}: {reason} (offline? download the release elsewhere and run "
        "`discogym autumn data --from DIR`)"
    )


def fetch() -> Path:
    """``--fetch``: the manifest and every file it lists, validated, into the cache."""
    manifest = download(MANIFEST)
    try:
        entries = json.loads(manifest)["files"]
        pairs = sorted({(str(e["id"]), _program_name(str(e["program"]))) for e in entries})
    except (ValueError, KeyError, TypeError):
        raise UserError(f"{MANIFEST}: not a manifest (expected {{files: [{{id, program}}, ...]}})") from None
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        for task_id, program in pairs:
            _fetch_task(root, task_id, program)
        return install(collect(root), base_url() + MANIFEST)


def _fetch_task(root: Path, task_id: str, program: str) -> None:
    wanted = [f"answers/{task_id}.json", f"prompts/{task_id}.json", f"programs/{program}.sexp"]
    for relative in wanted:
        _save(root, relative)
    prompt = _json(root / wanted[1], wanted[1])
    if isinstance(prompt, dict) and prompt.get("type") == CD and prompt.get("wrong_program"):
        _save(root, f"programs/{_program_name(str(prompt['wrong_program']))}.sexp")


def _save(root: Path, relative: str) -> None:
    path = root / relative
    if path.exists():
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(download(relative))


# ----------------------------------------------------------------------------------------------------------------
# What is cached


@dataclass(frozen=True)
class CacheCheck:
    """The cache's index and whether every file still has its recorded checksum."""

    source: str
    files: dict[str, str]
    mismatched: list[str]


def check_cache(folder: Path | None = None) -> CacheCheck | None:
    """The cached release's index, each file's checksum checked (None when nothing is cached)."""
    root = folder or data_dir()
    index_path = root / INDEX
    if not index_path.is_file():
        return None
    index = _json(index_path, str(index_path))
    files = {str(k): str(v) for k, v in dict(index.get("files", {})).items()}
    mismatched = [rel for rel in sorted(files) if not (root / rel).is_file() or _file_sha(root / rel) != files[rel]]
    return CacheCheck(source=str(index.get("source", "")), files=files, mismatched=mismatched)


def _file_sha(path: Path) -> str:
    return sha256_hex(path.read_bytes())
