"""The official split: AutumnBench's published format, read from the user cache, posed and scored as the official
harness does. Every file here is written by the tests (official_fixture.py); no third-party file is used."""

import json
import math
from types import SimpleNamespace
from typing import Any, cast

import pytest

from discogym.core import Event, Task, ToolCall, UserError, get_suite
from discogym.core.model.protocol import figures_beside
from discogym.core.running.storage import RunDir
from discogym.suites.autumn import protocols
from discogym.suites.autumn.baseline import APPENDIX_C, appendix_c, official_baseline
from discogym.suites.autumn.challenges import ChangeTask, MfpTask, PlanningTask, official_change_reward
from discogym.suites.autumn.env import Presentation
from discogym.suites.autumn.interpreter import parse_action
from discogym.suites.autumn.official import OFFICIAL_SPLIT, load_official, trigger_frame
from discogym.suites.autumn.official_data import install_from
from discogym.suites.autumn.suite import official_value
from discogym.suites.autumn.tasks import AutumnTask, source_of, task_spec
from discogym.suites.autumn.verdict import recompute
from tests.conftest import run_discogym
from tests.suites.autumn import official_fixture as fx


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """A user cache of our own, holding the fixture release."""
    monkeypatch.setenv("DISCOGYM_CACHE_DIR", str(tmp_path / "cache"))
    install_from(fx.write_release(tmp_path / "release"))
    return tmp_path / "cache"


def _by_kind() -> dict[str, Task]:
    return {task_spec(t).kind: t for t in get_suite("autumn").tasks(OFFICIAL_SPLIT)}


def test_not_cached_is_one_line_saying_how_to_get_it(tmp_path, monkeypatch):
    monkeypatch.setenv("DISCOGYM_CACHE_DIR", str(tmp_path))
    suite = get_suite("autumn")
    assert OFFICIAL_SPLIT in suite.splits() and suite.task_count(OFFICIAL_SPLIT) is None
    with pytest.raises(UserError) as err:
        suite.tasks(OFFICIAL_SPLIT)
    assert "\n" not in str(err.value) and "--fetch" in str(err.value) and "--from" in str(err.value)


def test_fetch_offline_exits_non_zero_with_one_line(tmp_path):
    done = run_discogym(
        "autumn", "data", "--fetch", DISCOGYM_CACHE_DIR=str(tmp_path), DISCOGYM_AUTUMNBENCH_URL="http://127.0.0.1:9/"
    )
    assert done.returncode != 0
    assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr
    assert "manifest_public.json" in done.stderr and not (tmp_path / "autumnbench").exists()


@pytest.mark.parametrize("layout", ["renamed", "raw"])
def test_from_a_folder_in_either_layout(tmp_path, monkeypatch, layout):
    monkeypatch.setenv("DISCOGYM_CACHE_DIR", str(tmp_path / "cache"))
    install_from(fx.write_release(tmp_path / "release", layout))
    loaded = load_official()
    assert loaded.environments == (fx.NAME,) and not loaded.refused
    assert sorted(t.kind for t in loaded.tasks) == ["cd", "mfp", "planning"]
    index = json.loads((tmp_path / "cache" / "autumnbench" / "checksums.json").read_text())
    assert f"prompts/{fx.NAME}_mfp.json" in index["files"] and len(index["files"]) == 8


def test_the_data_command_reports_the_cache(cache):
    done = run_discogym("autumn", "data", "--json", DISCOGYM_CACHE_DIR=str(cache))
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    assert document["checksums_ok"] and document["tasks"] == 3 and document["environments"] == [fx.NAME]
    (cache / "autumnbench" / "programs" / f"{fx.NAME}.sexp").write_text(fx.PROGRAM + " ", encoding="utf-8")
    done = run_discogym("autumn", "data", DISCOGYM_CACHE_DIR=str(cache))
    assert "checksums MISMATCH" in done.stdout


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda root: (root / "prompts" / f"{fx.NAME}_mfp.json").write_text("{", encoding="utf-8"), "not JSON"),
        (lambda root: (root / "answers" / f"{fx.NAME}_mfp.json").write_text('{"correct_idx": 9}'), "correct_idx"),
        (lambda root: (root / "answers" / f"{fx.NAME}_change_detection.json").unlink(), "answer"),
        (lambda root: (root / "prompts" / f"{fx.NAME}_cd.json").write_text('{"type": "quiz"}'), "type"),
    ],
)
def test_malformed_files_give_one_line(tmp_path, monkeypatch, edit, message):
    monkeypatch.setenv("DISCOGYM_CACHE_DIR", str(tmp_path / "cache"))
    release = fx.write_release(tmp_path / "release")
    edit(release)
    with pytest.raises(UserError) as err:
        install_from(release)
    assert message in str(err.value) and "\n" not in str(err.value)
    assert not (tmp_path / "cache" / "autumnbench").exists()


def test_a_program_our_interpreter_cannot_run_is_refused_with_its_reason(tmp_path, monkeypatch):
    monkeypatch.setenv("DISCOGYM_CACHE_DIR", str(tmp_path / "cache"))
    release = fx.write_release(tmp_path / "release")
    wrong = release / "programs" / f"{fx.NAME}_change_detection_wrong_program.sexp"
    wrong.write_text(fx.WRONG.replace("(on left", "(on (undefinedThing 3)"), encoding="utf-8")
    install_from(release)
    loaded = load_official()
    assert [r.kind for r in loaded.refused] == ["cd"] and "undefinedThing" in loaded.refused[0].reason
    assert len(loaded.tasks) == 2


def test_the_tasks_are_posed_as_the_harness_poses_them(cache):
    tasks = _by_kind()
    mfp = task_spec(tasks["mfp"]).challenge
    assert isinstance(mfp, MfpTask)
    assert mfp.frames is not None and len(mfp.frames) == len(fx.MFP_ACTIONS) + 1
    assert mfp.mask == fx.BOX and mfp.answer == fx.ANSWER and mfp.actions == fx.MFP_ACTIONS
    cells = [[c for row in frame for c in row] for frame in mfp.frames]
    assert "mask" in cells[-1] and "mask" not in cells[0]
    planning = task_spec(tasks["planning"]).challenge
    assert isinstance(planning, PlanningTask)
    assert len(planning.goal) == 36 and (3, 2, "red") in planning.goal and planning.optimal_actions == 6
    cd = task_spec(tasks["cd"]).challenge
    assert isinstance(cd, ChangeTask)
    assert cd.condition == fx.CONDITION and cd.modified == fx.WRONG
    for task in tasks.values():  # ground truth stays out of what the agent sees
        env = get_suite("autumn").make_env(task, get_suite("autumn").conditions()[0], 0)
        seen = env.brief() + task.brief + task.id
        assert fx.CONDITION not in seen and "correct_idx" not in seen and "jumped" not in seen


def test_the_oracle_solves_and_the_random_agent_mostly_does_not(cache, tmp_path):
    out = tmp_path / "run"
    done = run_discogym(
        "run", "autumn", "--split", OFFICIAL_SPLIT, "--agent", "oracle", "--agent", "random", "--repeats", "3",
        "--out", str(out), "--quiet", DISCOGYM_CACHE_DIR=str(cache),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    episodes = list(RunDir(out).iter_episodes())
    oracle = [e for e in episodes if e.key.agent == "oracle"]
    random = [e for e in episodes if e.key.agent == "random"]
    assert len(oracle) == 9 and all(e.score.value == 1.0 for e in oracle)
    assert len(random) == 9 and sum(e.score.value == 1.0 for e in random) <= 2
    for episode in episodes:  # the score recomputes from the episode file alone
        assert get_suite("autumn").score(episode).value == episode.score.value


def test_change_reward_is_the_harness_formula():
    # trigger frame 4: the harness's trigger time T = 5; frames 4 and 5 score 1, earlier -1, later decay
    assert official_change_reward(4, 3) == -1.0 and official_change_reward(4, 0) == -1.0
    assert official_change_reward(4, 4) == 1.0 and official_change_reward(4, 5) == 1.0
    late = official_change_reward(4, 8)
    ratio = 8 / 5
    assert late == pytest.approx(max(0.0, min(1.0, 1.377 / (1 - ratio * math.exp(-ratio)) - 1.178)))
    assert 0.0 <= late < 1.0 and official_change_reward(4, 30) <= late
    assert official_change_reward(None, 3) == -1.0 and official_change_reward(4, None) == 0.0


def _cd_value(spec: AutumnTask, actions: list[str], chosen: int) -> tuple[float, dict[str, Any]]:
    """The official score of a change-detection episode whose logged calls are these (the scorer's own walk)."""
    calls = [ToolCall(tool="go_to_test", args={})]
    calls += [ToolCall(tool="act", args={"action": a}) for a in actions]
    calls += [ToolCall(tool="found_change", args={}), ToolCall(tool="choose_frame", args={"index": chosen})]
    events = cast("list[Event]", [SimpleNamespace(call=c) for c in calls])  # the scorer reads only their calls
    verdict = recompute(spec, source_of(spec), Presentation(), events)
    return official_value(spec, verdict)


def test_change_detection_scores_before_at_and_after_the_trigger(cache):
    spec = task_spec(_by_kind()["cd"])
    actions = ["click 5 5", "click 5 5", "noop", "right", "noop", "noop", "noop", "noop"]
    assert trigger_frame(spec, [parse_action(a) for a in actions]) == 4  # after the first right past two clicks
    values = {chosen: _cd_value(spec, actions, chosen)[0] for chosen in (0, 3, 4, 5, 8)}
    assert values[0] == values[3] == -1.0 and values[4] == values[5] == 1.0
    assert values[8] == pytest.approx(official_change_reward(4, 8)) and values[8] < 1.0
    value, parts = _cd_value(spec, ["noop", "up"], 1)  # never triggered
    assert value == -1.0 and parts["trigger_frame"] is None


def test_appendix_c_transcription():
    document = json.loads(APPENDIX_C.read_text(encoding="utf-8"))
    rows = document["rows"]
    codes = [row["env"] for row in rows]
    assert len(codes) == 43 == len(set(codes)) and {"paper", "table", "columns"} <= set(document["source"])
    table = appendix_c()
    assert all(0.0 <= p <= 1.0 for pair in table.values() for p in pair)
    triggers = [t for t, _ in table.values()]
    goals = [g for _, g in table.values()]
    # Appendix C's text: mean 0.80, 24 at 1.0, 2 never; goal mean 0.399, 9 at 1.0, 13 at 0.0
    assert round(sum(triggers) / 43, 2) == 0.80 and triggers.count(1.0) == 24 and triggers.count(0.0) == 2
    assert abs(sum(goals) / 43 - 0.399) < 0.002 and goals.count(1.0) == 9 and goals.count(0.0) == 13
    # the codes are those of the paper's Table E.1, shipped with the published figures (subsets "KIND / CODE")
    e1 = {f.subset.split(" / ")[1] for f in figures_beside(protocols.__file__) if f.source.table == "Table E.1"}
    assert sorted(e1) == sorted(codes)


def test_the_official_baseline_reads_the_paper_beside_ours(cache):
    rows = official_baseline(load_official().tasks, runs=6, timeout=200)
    assert [row.env for row in rows] == [fx.NAME] and rows[0].paper_trigger is None
    assert rows[0].p_trigger is not None and rows[0].p_goal is not None
