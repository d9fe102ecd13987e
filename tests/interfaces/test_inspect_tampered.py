"""`discogym report LOG.eval` on tampered Inspect logs: every bad field is one line naming the sample and the field,
a zip bomb is refused unread with the memory kept low, a log of samples at the entry caps is read under 500 MB,
and the report is titled after the log. The logs are a toy run exported with discogym's own export, edited inside
their zip. Skipped when inspect-ai is not installed."""

import json
import struct
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest

from discogym.core import UserError, register_suite
from discogym.core.running.runner import RunConfig, Runner
from tests.conftest import REPO, cli_environment, run_discogym
from tests.core.toy_suite import suite as toy

pytest.importorskip("inspect_ai", reason="inspect-ai is not installed: pip install 'discogym[inspect]'")
from discogym.interfaces.inspect.log_entries import MAX_LOG_ENTRY_BYTES, MAX_LOG_ENTRY_VALUES, VALUE_MARKS
from discogym.interfaces.inspect.logs import episodes_of_log, export_run

MEMORY_LIMIT_KB = 500 * 10**6 // 2**10  # 500 MB, in the kB (KiB) /proc reports
# The peak memory of the report itself, in KB: VmHWM, which starts afresh when the process executes Python. Not
# ru_maxrss: Linux carries that over from the forked test process (whose size depends on the tests it ran before).
PEAK_MEMORY = """
import re, sys
from discogym.interfaces.cli import main
try:
    main(["report", sys.argv[1]])
except SystemExit:
    pass
with open("/proc/self/status") as status:
    print(re.search(r"VmHWM:\\s+(\\d+) kB", status.read()).group(1))
"""


@pytest.fixture
def log(tmp_path: Path) -> Path:
    """An Inspect log of one toy episode (task tiny-00, repeat 0), exported by discogym."""
    register_suite(toy)
    config = RunConfig.for_suite(toy, ["bisect"], split="tiny", tasks=["tiny-00"])
    Runner(toy, config, tmp_path / "run").run()
    (path,) = export_run(tmp_path / "run", tmp_path / "logs")
    return path


def the_sample(path: Path) -> tuple[str, dict[str, Any]]:
    """The name and the JSON document of the log's one sample entry."""
    with zipfile.ZipFile(path) as archive:
        (name,) = [entry for entry in archive.namelist() if entry.startswith("samples/")]
        return name, json.loads(archive.read(name))


def append_entry(path: Path, name: str, data: bytes) -> None:
    """Add the entry ``name`` holding ``data`` to the log, deflated."""
    with zipfile.ZipFile(path, "a", compression=zipfile.ZIP_DEFLATED, compresslevel=1) as archive:
        archive.writestr(name, data)


def peak_memory_of_report(path: Path) -> tuple[int, list[str]]:
    """``discogym report LOG`` in a fresh process: its peak memory (kB) and its lines on stderr."""
    done = subprocess.run(
        [sys.executable, "-c", PEAK_MEMORY, str(path)],
        capture_output=True, text=True, env=cli_environment(), cwd=REPO, timeout=120,
    )  # fmt: skip
    return int(done.stdout.strip().splitlines()[-1]), done.stderr.strip().splitlines()


def edit_sample(path: Path, **changes: object) -> None:
    """Rewrite the log with ``changes`` made to its one sample (``metadata_NAME`` for a metadata field)."""
    with zipfile.ZipFile(path) as archive:
        entries = {info.filename: archive.read(info) for info in archive.infolist()}
    name, sample = the_sample(path)
    for field, value in changes.items():
        if field.startswith("metadata_"):
            sample["metadata"][field.removeprefix("metadata_")] = value
        else:
            sample[field] = value
    entries[name] = json.dumps(sample).encode()
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for entry, data in entries.items():
            archive.writestr(entry, data)


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"metadata_task": ["a"]}, "metadata.task"),
        ({"metadata_split": {"x": 1}}, "metadata.split"),
        ({"metadata_suite": 7}, "metadata.suite"),
        ({"epoch": 10**30}, "epoch"),
        ({"epoch": 0}, "epoch"),
    ],
)
def test_a_tampered_field_is_one_line_naming_the_sample_and_the_field(log: Path, changes: dict[str, object], field):
    edit_sample(log, **changes)
    with pytest.raises(UserError) as refused:
        episodes_of_log(log)
    message = str(refused.value)
    assert f"{log} sample toy/tiny-00/plain" in message and f": {field} " in message and "\n" not in message


def test_the_cli_says_a_tampered_field_in_one_line_and_titles_a_report_after_the_log(log: Path):
    report = run_discogym("report", str(log))
    assert report.returncode == 0, report.stderr
    assert report.stdout.splitlines()[0] == f"# discogym report: {log}"
    edit_sample(log, metadata_task=["a"])
    refused = run_discogym("report", str(log))
    assert refused.returncode != 0 and "Traceback" not in refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1 and "metadata.task ['a'] is not valid" in refused.stderr


@pytest.mark.parametrize("size", [MAX_LOG_ENTRY_BYTES + 1, 640 * 2**20], ids=["one-byte-over-the-cap", "640MiB"])
def test_a_zip_bomb_is_refused_in_one_line_unread_and_the_memory_stays_low(log: Path, size: int):
    # Spaces, a few MB compressed: read whole, 640 MiB alone would take more than the memory bound.
    with (
        zipfile.ZipFile(log, "a", compression=zipfile.ZIP_DEFLATED, compresslevel=1) as archive,
        archive.open("samples/bomb_epoch_1.json", "w", force_zip64=True) as entry,
    ):
        for start in range(0, size, 2**20):
            entry.write(b" " * min(2**20, size - start))
    assert log.stat().st_size < 20 * 2**20
    peak, lines = peak_memory_of_report(log)
    assert peak < MEMORY_LIMIT_KB
    assert len(lines) == 1 and "is refused unread" in lines[0] and "'samples/bomb_epoch_1.json'" in lines[0]
    assert f"decompresses to {size:,} bytes, more than the {MAX_LOG_ENTRY_BYTES:,} allowed" in lines[0]


def values(data: bytes) -> int:
    """The most JSON values and keys ``data`` may hold, as the reader counts them."""
    return sum(data.count(mark) for mark in VALUE_MARKS)


def at_the_caps(sample: dict[str, Any], epoch: int) -> bytes:
    """``sample`` as epoch ``epoch``, padded to both entry caps with what costs a report the most memory: its
    values as a model_usage of empty entries (each about 300 bytes once validated), its bytes as a string with
    one emoji (a text of 4 bytes a character while it is parsed)."""
    sample = {**sample, "epoch": epoch, "target": ""}
    room = MAX_LOG_ENTRY_VALUES - values(json.dumps(sample).encode()) - 4
    sample["model_usage"] = {str(number): {} for number in range(room // 3)}  # 3 marks each: "7": {},
    fill = MAX_LOG_ENTRY_BYTES - len(json.dumps(sample, ensure_ascii=False).encode()) - 4  # the emoji's 4 bytes
    data = json.dumps({**sample, "target": "x" * fill + "\U0001f600"}, ensure_ascii=False).encode()
    assert len(data) == MAX_LOG_ENTRY_BYTES and MAX_LOG_ENTRY_VALUES - 10 < values(data) <= MAX_LOG_ENTRY_VALUES
    return data


def test_memory_a_log_of_samples_at_the_entry_caps_is_read_one_sample_at_a_time_under_500_mb(log: Path):
    # The memory test (about 10 s): three more samples of the worst kind the caps admit, each read, validated,
    # replayed and dropped before the next; together they would take about 600 MB. Each caps' worst alone, and a
    # whole 1 GiB of them: benchmarks/inspect_log_memory.py.
    name, sample = the_sample(log)
    for epoch in (2, 3, 4):
        append_entry(log, name.replace("_epoch_1.json", f"_epoch_{epoch}.json"), at_the_caps(sample, epoch))
    assert log.stat().st_size < 5 * 2**20
    peak, lines = peak_memory_of_report(log)
    assert not any(line.startswith("error") for line in lines), lines
    assert peak < MEMORY_LIMIT_KB


def lie_about_size(path: Path, name: str, size: int) -> None:
    """Make the zip's directory say that the entry ``name`` (the last one) decompresses to ``size`` bytes."""
    data = bytearray(path.read_bytes())
    record = data.rfind(b"PK\x01\x02")  # the directory's last record: the entry appended last
    assert data[record + 46 : record + 46 + len(name)] == name.encode()
    struct.pack_into("<I", data, record + 24, size)
    path.write_bytes(bytes(data))


@pytest.mark.parametrize(
    ("bad", "said"),
    [
        ("lying-size", "does not hold the 1,048,576 bytes the zip's directory declares"),
        ("too-many-values", f"JSON values and keys (its characters [ {{ , :), more than the {MAX_LOG_ENTRY_VALUES:,}"),
        ("error-flood", "is not an Inspect EvalSample: messages.0."),
    ],
    ids=["lying-size", "too-many-values", "error-flood"],
)
def test_an_entry_past_the_readers_bounds_is_refused_in_one_line_naming_it(log: Path, bad: str, said: str):
    name, sample = the_sample(log)
    extra = name.replace("_epoch_1.json", "_epoch_2.json")
    if bad == "lying-size":  # its directory says 1 MiB; it inflates to 64 MiB (Inspect's reader inflates it all)
        append_entry(log, extra, b" " * 64 * 2**20)
        lie_about_size(log, extra, 2**20)
    elif bad == "too-many-values":  # values cost more memory than bytes: 400,001 of them fit in 800 KB
        append_entry(log, extra, json.dumps({**sample, "epoch": 2, "metadata": [0] * MAX_LOG_ENTRY_VALUES}).encode())
    else:  # 10,000 bad items in a union: Inspect's own validator makes 560,000 errors of them (760 MB)
        flood = [{"role": "user", "content": [{}] * 10_000}]
        append_entry(log, extra, json.dumps({**sample, "epoch": 2, "messages": flood}).encode())
    with pytest.raises(UserError) as refused:
        episodes_of_log(log)
    message = str(refused.value)
    assert said in message and repr(extra) in message and "\n" not in message
    if bad == "error-flood":
        assert int(message.rsplit("(and ", 1)[1].split()[0]) < 100


def test_an_entry_a_report_does_not_read_is_not_held_to_the_entry_cap(log: Path):
    # Summaries grow with the samples (about 2 KB each): a big log's pass the entry cap, and are never read.
    append_entry(log, "_journal/summaries/99.json", b" " * (MAX_LOG_ENTRY_BYTES + 1))
    (episode,) = episodes_of_log(log)
    assert episode.key.task == "tiny-00"
