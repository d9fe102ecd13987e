"""``discogym autumn baseline`` shows its progress on stderr, and nothing there with --quiet or --json."""

import json

from tests.conftest import run_discogym

SMALL = ("autumn", "baseline", "--runs", "2", "--timeout", "20", "--env", "gravity")


def test_the_baseline_shows_a_progress_bar_on_stderr():
    done = run_discogym(*SMALL)
    assert done.returncode == 0, done.stderr
    assert "random baseline: gravity" in done.stderr and "2/2" in done.stderr
    assert done.stdout.startswith("random agent, 2 runs of at most 20 steps per environment")


def test_the_baseline_is_quiet_with_quiet_or_json():
    quiet = run_discogym(*SMALL, "--quiet")
    assert quiet.returncode == 0 and quiet.stderr == ""
    as_json = run_discogym(*SMALL, "--json")
    assert as_json.returncode == 0 and as_json.stderr == ""
    assert json.loads(as_json.stdout)["runs"] == 2


def test_the_baseline_is_the_same_in_two_processes_and_on_either_set():
    small = ("autumn", "baseline", "--runs", "2", "--timeout", "30", "--env", "gravity", "--env", "counter", "--json")
    one, two = run_discogym(*small), run_discogym(*small, "--jobs", "2")
    assert one.returncode == 0 and one.stdout == two.stdout
    assert json.loads(one.stdout)["set"] == "v2"
    first = json.loads(run_discogym(*small, "--set", "v1").stdout)
    assert first["set"] == "v1" and [row["env"] for row in first["environments"]] == ["gravity", "counter"]
