"""The builder passes all 25 tasks through the harness, and both engine backends write the same episodes."""

import pytest

from discogym.core.running.storage import RunDir
from tests.conftest import run_discogym


@pytest.fixture
def backend() -> str:
    """These runs name their backends themselves (overrides the conftest's parametrized fixture)."""
    return "explicit"


def test_the_builder_passes_all_25_and_the_backends_write_identical_episodes(tmp_path):
    for out, backend in (("compiled", "compiled"), ("python", "python")):
        done = run_discogym(
            "run",
            "redstone",
            "--agent",
            "builder",
            "--quiet",
            "--out",
            str(tmp_path / out),
            DISCOGYM_REDSTONE_BACKEND=backend,
        )
        assert done.returncode == 0, done.stderr
    episodes = list(RunDir(tmp_path / "compiled").iter_episodes())
    assert len(episodes) == 25 and all(e.score.success for e in episodes)
    assert all(e.outcome.termination == "submitted" and e.outcome.env["check"]["passed"] for e in episodes)
    paths = sorted((tmp_path / "compiled" / "episodes").glob("*.json"))
    assert len(paths) == 25
    for path in paths:
        assert path.read_bytes() == (tmp_path / "python" / "episodes" / path.name).read_bytes()


def test_the_reference_command_writes_each_device_as_files(tmp_path):
    done = run_discogym(
        "redstone", "reference", "A_simultaneous_lights_L1", "E_pulse_shaping_L2", "--out", str(tmp_path)
    )
    assert done.returncode == 0, done.stderr
    assert "2/2 pass" in done.stdout
    for task in ("A_simultaneous_lights_L1", "E_pulse_shaping_L2"):
        for suffix in (".txt", ".schem", "-top.png", "-iso.png"):
            assert (tmp_path / f"{task}{suffix}").stat().st_size > 0
    check = run_discogym("redstone", "check", "E_pulse_shaping_L2", str(tmp_path / "E_pulse_shaping_L2.txt"))
    assert check.returncode == 0 and "passed" in check.stdout
    wrong = run_discogym("redstone", "check", "E_pulse_shaping_L3", str(tmp_path / "E_pulse_shaping_L2.txt"), "--json")
    assert wrong.returncode == 1 and '"passed": false' in wrong.stdout


def test_device_files_run_on_the_lab_floor_with_lab(tmp_path):
    device = tmp_path / "d.txt"
    device.write_text("0 4 0 stone_button[face=floor]\n1 4 0 redstone_wire\n2 4 0 redstone_lamp\n", encoding="utf-8")
    bare = run_discogym("redstone", "simulate", str(device), "--press", "0,4,0")
    assert bare.returncode == 2 and "add --lab" in bare.stderr
    done = run_discogym("redstone", "simulate", str(device), "--lab", "--press", "0,4,0", "--ticks", "30")
    assert done.returncode == 0, done.stderr
    assert "t=    0         2,4,0  redstone_lamp: lit false->true" in done.stdout
    assert "t=   24         2,4,0  redstone_lamp: lit true->false" in done.stdout
