"""`discogym report LOG.eval` on tampered Inspect logs: every bad field is one line naming the sample and the field,
a zip bomb is refused unread with the memory kept low, and the report is titled after the log. The logs are a toy
run exported with discogym's own export, edited inside their zip. Skipped when inspect-ai is not installed."""

import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from discogym.core import UserError, register_suite
from discogym.core.running.runner import RunConfig, Runner
from tests.conftest import REPO, cli_environment, run_discogym
from tests.core.toy_suite import suite as toy

pytest.importorskip("inspect_ai", reason="inspect-ai is not installed: pip install 'discogym[inspect]'")
from discogym.interfaces.inspect.logs import MAX_LOG_ENTRY_BYTES, episodes_of_log, export_run

MEMORY_LIMIT_KB = 500 * 1024
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


def edit_sample(path: Path, **changes: object) -> None:
    """Rewrite the log with ``changes`` made to its one sample (``metadata_NAME`` for a metadata field)."""
    with zipfile.ZipFile(path) as archive:
        entries = {info.filename: archive.read(info) for info in archive.infolist()}
    (name,) = [entry for entry in entries if entry.startswith("samples/")]
    sample = json.loads(entries[name])
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


def test_a_zip_bomb_is_refused_in_one_line_unread_and_the_memory_stays_low(log: Path):
    # 640 MiB of spaces, 3 MB compressed: read whole, this entry alone would take more than the memory bound.
    with (
        zipfile.ZipFile(log, "a", compression=zipfile.ZIP_DEFLATED, compresslevel=1) as archive,
        archive.open("samples/bomb_epoch_1.json", "w", force_zip64=True) as entry,
    ):
        for _ in range(640):
            entry.write(b" " * 2**20)
    assert log.stat().st_size < 20 * 2**20
    done = subprocess.run(
        [sys.executable, "-c", PEAK_MEMORY, str(log)],
        capture_output=True, text=True, env=cli_environment(), cwd=REPO, timeout=120,
    )  # fmt: skip
    assert int(done.stdout.strip().splitlines()[-1]) < MEMORY_LIMIT_KB
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "is refused unread" in lines[0] and "'samples/bomb_epoch_1.json'" in lines[0]
    assert f"more than the {MAX_LOG_ENTRY_BYTES:,} allowed" in lines[0]
