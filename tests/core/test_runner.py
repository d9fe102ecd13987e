"""The runner in-process: the episode grid, files, resume, faults, errors and reports."""

import contextlib
import errno
import json
import subprocess
import sys
from pathlib import Path

import pytest

from discogym.core import AgentOptions, Episode, EpisodeKey, InfrastructureError, UserError
from discogym.core.reporting.run_report import build_report
from discogym.core.running import executors, storage
from discogym.core.running.episode_loop import play_episode, score_episode
from discogym.core.running.executors import Executor, Faulted, Played, play_and_write
from discogym.core.running.runner import RunConfig, Runner, plan_episodes
from discogym.core.running.storage import RunDir, RunInUse, atomic_write
from tests.conftest import cli_environment, run_discogym
from tests.core.toy_suite import MALFORMED_CALLS, DigitEnv, DigitSuite, suite


def config(
    *agents: str,
    split: str = "tiny",
    conditions: tuple[str, ...] = ("plain",),
    repeats: int = 1,
    seed: int = 0,
    **options: str,
) -> RunConfig:
    requested = [AgentOptions(name=a, options=options) for a in agents or ("reference",)]
    return RunConfig.for_suite(suite, requested, split=split, conditions=list(conditions), repeats=repeats, seed=seed)


def run(out: Path, cfg: RunConfig, **kwargs):
    return Runner(suite, cfg, out, **kwargs).run()


def episodes(out: Path) -> list[Episode]:
    return list(RunDir(out).iter_episodes())


def test_plan_is_the_full_grid_in_a_fixed_order():
    planned = plan_episodes(suite, config("bisect", "random", conditions=("plain", "slow"), repeats=2))
    assert len(planned) == 2 * 2 * 2 * 2
    first = planned[0].key
    assert (first.task, first.condition, first.agent, first.repeat) == ("tiny-00", "plain", "bisect", 0)
    assert len({p.key for p in planned}) == 16
    # The world's seed is shared by agents (paired comparisons) but not by repeats.
    by_key = {(p.key.task, p.key.condition, p.key.agent, p.key.repeat): p for p in planned}
    assert by_key[("tiny-00", "plain", "bisect", 0)].env_seed == by_key[("tiny-00", "plain", "random", 0)].env_seed
    assert by_key[("tiny-00", "plain", "bisect", 0)].env_seed != by_key[("tiny-00", "plain", "bisect", 1)].env_seed
    assert by_key[("tiny-00", "plain", "bisect", 0)].agent_seed != by_key[("tiny-00", "plain", "random", 0)].agent_seed


def test_a_run_writes_one_file_per_episode_and_a_rerun_skips_them(tmp_path):
    cfg = config("bisect", "random", repeats=2)
    first = run(tmp_path, cfg)
    assert (first.planned, first.written, first.skipped, first.complete) == (8, 8, 0, True)
    assert len(RunDir(tmp_path).episode_paths()) == 8
    assert [r["suite"] for r in json.loads((tmp_path / "run.json").read_text())["runs"]] == ["toy"]
    before = {p.name: p.read_bytes() for p in RunDir(tmp_path).episode_paths()}
    second = run(tmp_path, cfg)
    assert (second.written, second.skipped, second.complete) == (0, 8, True)
    assert {p.name: p.read_bytes() for p in RunDir(tmp_path).episode_paths()} == before
    bisect = [e for e in episodes(tmp_path) if e.key.agent == "bisect"]
    assert all(e.score.value == 1.0 and e.outcome.termination == "submitted" for e in bisect)


def test_episodes_are_reproducible_to_the_byte(tmp_path):
    cfg = config("bisect", "random", conditions=("plain", "slow"))
    run(tmp_path / "a", cfg)
    run(tmp_path / "b", cfg, workers=2)
    a = {p.name: p.read_bytes() for p in RunDir(tmp_path / "a").episode_paths()}
    b = {p.name: p.read_bytes() for p in RunDir(tmp_path / "b").episode_paths()}
    assert a == b and len(a) == 8


def test_random_episodes_follow_the_seed(tmp_path):
    run(tmp_path / "s0", config("random", seed=0))
    run(tmp_path / "s1", config("random", seed=1))
    calls = [[e.events for e in episodes(tmp_path / s)] for s in ("s0", "s1")]
    assert calls[0] != calls[1]


def test_malformed_calls_are_logged_and_the_episode_continues(tmp_path):
    run(tmp_path, config("sloppy"))
    for episode in episodes(tmp_path):
        rejected = episode.events[: len(MALFORMED_CALLS)]
        assert all(not e.result.ok and e.result.error for e in rejected)
        assert episode.outcome.status == "completed" and episode.score.value == 1.0


def test_agent_and_environment_bugs_end_that_episode_only(tmp_path):
    run(tmp_path / "agent", config("crasher", "bisect"))
    by_agent = {e.key.agent: e for e in episodes(tmp_path / "agent")}
    crashed = by_agent["crasher"]
    assert crashed.outcome.status == "error" and crashed.outcome.termination == "agent_error"
    assert crashed.outcome.error == "ValueError: the crasher agent always fails"
    assert crashed.score.value is None and crashed.score.error
    assert by_agent["bisect"].score.value == 1.0
    runtime = json.loads(RunDir(tmp_path / "agent").runtime_path(crashed.key).read_text())
    assert "Traceback" in runtime["traceback"]

    transcript = tmp_path / "t.json"
    transcript.write_text(json.dumps([{"tool": "roll"}, {"tool": "explode"}, {"tool": "roll"}]))
    run(tmp_path / "env", config("replay", conditions=("buggy",), transcript=str(transcript)))
    for episode in episodes(tmp_path / "env"):
        assert episode.outcome.termination == "env_error"
        assert episode.outcome.error == "RuntimeError: the explode tool is broken"
        assert [e.call.tool for e in episode.events] == ["roll"]


def test_logged_values_are_plain_json_and_unstorable_ones_are_bugs_where_they_arise(tmp_path):
    transcript = tmp_path / "t.json"
    transcript.write_text('[{"tool": "roll"}, {"tool": "probe", "args": {"n": 100000000000000000000000}}]')
    run(tmp_path / "plain", config("replay", transcript=str(transcript)))
    for episode in episodes(tmp_path / "plain"):
        assert episode.outcome.status == "completed"
        roll, probe = episode.events
        assert isinstance(roll.result.data["value"], int)
        assert roll.result.data["faces"] == ["five", "four", "one", "six", "three", "two"]  # a set, sorted
        assert probe.call.args == {"n": "100000000000000000000000"}  # beyond 64 bits: kept as digits
        assert "less than or equal to 9" in (probe.result.error or "")

    transcript.write_text('[{"tool": "roll"}, {"tool": "garble"}]')
    run(tmp_path / "buggy", config("replay", conditions=("buggy",), transcript=str(transcript)))
    for episode in episodes(tmp_path / "buggy"):
        assert episode.outcome.termination == "env_error"
        assert "TypeError: a value of type object cannot be stored as JSON" in (episode.outcome.error or "")

    transcript.write_text('[{"tool": "roll"}, {"tool": "stash"}, {"tool": "stash"}, {"tool": "roll"}]')
    run(tmp_path / "spoiled", config("replay", conditions=("buggy",), transcript=str(transcript)))
    for episode in episodes(tmp_path / "spoiled"):  # data changed after it was handed over: cut the log there
        assert episode.outcome.termination == "env_error"
        assert "could not be stored: PydanticSerializationError" in (episode.outcome.error or "")
        assert [e.call.tool for e in episode.events] == ["roll"]

    transcript.write_text('[{"tool": "probe", "args": {"n": "\\ud800"}}, {"tool": "submit", "args": {"n": NaN}}]')
    run(tmp_path / "odd", config("replay", transcript=str(transcript)))
    for episode in episodes(tmp_path / "odd"):
        assert [e.call.args["n"] for e in episode.events] == ["\ufffd", None]

    run(tmp_path / "calls", config("random", conditions=("buggy",)))
    for episode in episodes(tmp_path / "calls"):  # the agent asked, the environment failed: its bug
        assert episode.outcome.termination == "env_error"
        assert episode.outcome.error == "LookupError: valid_calls is broken in the buggy condition"

    run(tmp_path / "mute", config("mute"))
    for episode in episodes(tmp_path / "mute"):
        assert episode.outcome.termination == "agent_error"
        assert episode.outcome.error == "TypeError: act() returned NoneType, not AgentDecision"


def test_the_same_episode_asked_for_twice_is_played_once(tmp_path):
    cfg = config("reference", "bisect").model_copy(update={"tasks": ["tiny-01", "tiny-01"]})
    summary = run(tmp_path, cfg)
    assert (summary.planned, summary.written) == (1, 1)


def test_agent_options_are_part_of_the_episode_key(tmp_path):
    first, second = tmp_path / "a.json", tmp_path / "b.json"
    first.write_text('[{"tool": "submit", "args": {"n": 1}}]')
    second.write_text('[{"tool": "submit", "args": {"n": 2}}]')
    assert run(tmp_path / "run", config("replay", transcript=str(first))).written == 2
    assert run(tmp_path / "run", config("replay", transcript=str(second))).written == 2
    submitted = sorted(
        (e.key.agent_options["transcript"][-6:], e.events[0].call.args["n"]) for e in episodes(tmp_path / "run")
    )
    assert submitted == [("a.json", 1), ("a.json", 1), ("b.json", 2), ("b.json", 2)]


class OddScorer(DigitSuite):
    def __init__(self, returns: object) -> None:
        self.returns = returns

    def score(self, episode):
        if isinstance(self.returns, Exception):
            raise self.returns
        return self.returns


def test_scores_are_validated_and_a_failing_judge_is_a_fault(tmp_path):
    run(tmp_path, config())
    episode = episodes(tmp_path)[0]
    assert score_episode(OddScorer({"value": 0.5}), episode).score.value == 0.5
    garbage = score_episode(OddScorer(42), episode).score
    assert garbage.value is None and (garbage.error or "").startswith("scorer failed: ValidationError")
    with pytest.raises(InfrastructureError):
        score_episode(OddScorer(InfrastructureError("judge endpoint down")), episode)


def test_the_report_tells_apart_agents_with_other_options(tmp_path):
    for name, n in (("a.json", 1), ("b.json", 2)):
        (tmp_path / name).write_text(f'[{{"tool": "submit", "args": {{"n": {n}}}}}]')
        run(tmp_path / "run", config("replay", transcript=str(tmp_path / name)))
    agents = [row[4] for row in build_report(tmp_path / "run").tables[0].rows]
    assert agents == [f"replay[transcript={tmp_path / 'a.json'}]", f"replay[transcript={tmp_path / 'b.json'}]"]


def test_an_agent_that_stops_ends_the_episode_with_its_message(tmp_path):
    run(tmp_path, config("quitter"))
    for episode in episodes(tmp_path):
        assert episode.outcome.termination == "agent_stopped"
        assert episode.outcome.agent_message == "I give up"
        assert episode.score.value == 0.0


@pytest.mark.parametrize("workers", [1, 2])
def test_infrastructure_faults_are_never_written_and_are_retried(tmp_path, workers):
    markers = str(tmp_path / "markers")
    cfg = config("flaky", fail_dir=markers)
    first = run(tmp_path / "run", cfg, workers=workers)
    assert (first.written, len(first.faults), first.complete) == (0, 2, False)
    assert all("model endpoint unavailable" in m for m in first.faults.values())
    assert RunDir(tmp_path / "run").episode_paths() == []
    # what each lost play had cost is known, also from a worker process, and kept in faults.jsonl
    assert (first.lost_plays, first.lost_unknown) == (2, 0)
    lost = RunDir(tmp_path / "run").lost_episodes()
    assert sorted(play.episode for play in lost.lost) == sorted(first.faults) and lost.unreadable == 0
    assert all(play.spent is not None for play in lost.lost)
    second = run(tmp_path / "run", cfg, workers=workers)
    assert (second.written, second.complete) == (2, True)
    assert all(e.score.value == 1.0 for e in episodes(tmp_path / "run"))

    retried = run(tmp_path / "retried", config("flaky", fail_dir=str(tmp_path / "m2")), workers=workers, retries=1)
    assert (retried.written, retried.faults, retried.complete) == (2, {}, True)


def test_a_worker_that_dies_is_a_fault_and_its_episode_is_retried(tmp_path):
    # Each episode's first attempt kills its worker, which also interrupts the episodes in flight beside it.
    cfg = config("flaky", split="dev", fail_dir=str(tmp_path / "m"), fault="die")
    died = run(tmp_path / "run", cfg, workers=2)
    assert not died.complete and set(died.faults.values()) == {"a worker process died"}
    assert died.lost_plays == died.lost_unknown == len(died.faults)  # what they had cost died with the worker
    assert died.written + len(died.faults) == 8
    passes = 1
    while not run(tmp_path / "run", cfg, workers=2).complete:
        passes += 1
        assert passes <= 8, "every pass gets at least one more episode past its first attempt"
    assert len(episodes(tmp_path / "run")) == 8
    assert all(e.score.value == 1.0 and e.outcome.status == "completed" for e in episodes(tmp_path / "run"))

    retried = config("flaky", split="dev", fail_dir=str(tmp_path / "m2"), fault="die")
    assert run(tmp_path / "retried", retried, workers=2, retries=8).complete


def test_a_rerun_must_keep_suite_and_seed(tmp_path):
    run(tmp_path, config())
    with pytest.raises(UserError, match="holds a run of suite 'toy' with seed 0"):
        run(tmp_path, config(seed=5))


def test_unknown_tasks_and_conditions_are_user_errors(tmp_path):
    cfg = config().model_copy(update={"tasks": ["tiny-00", "nope"]})
    with pytest.raises(UserError, match="has no task 'nope'"):
        run(tmp_path, cfg)
    with pytest.raises(UserError, match="no condition 'loud'; valid conditions: plain, slow, buggy, pictures"):
        run(tmp_path, config(conditions=("loud",)))


def test_report_aggregates_and_rescoring_reproduces_scores(tmp_path):
    run(tmp_path, config("bisect", "quitter", "crasher", split="dev"))
    report = build_report(tmp_path)
    table = report.tables[0]
    rows = {row[4]: dict(zip(table.columns, row, strict=True)) for row in table.rows}
    assert rows["bisect"]["episodes"] == 8 and rows["bisect"]["mean score"] == 1.0
    assert rows["quitter"]["mean score"] == 0.0 and rows["quitter"]["mean steps"] == 0.0
    assert rows["crasher"]["errors"] == 8 and rows["crasher"]["mean score"] is None
    endings = report.tables[1]
    kinds = {row[4]: dict(zip(endings.columns, row, strict=True)) for row in endings.rows}
    assert endings.title == "How the episodes ended"
    assert (kinds["bisect"]["by the task"], kinds["bisect"]["endings"]) == (8, "submitted 8")
    quitter = kinds["quitter"]
    assert (quitter["by the agent"], quitter["by the task"], quitter["endings"]) == (8, 0, "agent_stopped 8")
    assert (kinds["crasher"]["by an error"], kinds["crasher"]["endings"]) == (8, "agent_error 8")
    assert report.tables[2].title == "toy: episodes"
    assert build_report(tmp_path, rescore=True).tables == report.tables
    with pytest.raises(UserError, match="holds no episodes"):
        build_report(tmp_path / "episodes")


def test_an_interrupt_python_swallowed_still_stops_the_run_at_the_next_episode(tmp_path):
    from discogym.core.running.executors import RunListener

    class SwallowingListener(RunListener):
        """Delivers the interrupt where Python would drop it (as in an import's lock callback)."""

        runner: Runner | None = None

        def finished(self, done) -> None:
            assert self.runner is not None
            with contextlib.suppress(KeyboardInterrupt):
                self.runner.interrupt()

    listener = SwallowingListener()
    runner = Runner(suite, RunConfig.for_suite(suite, split="dev"), tmp_path / "run", listener=listener)
    listener.runner = runner
    with pytest.raises(KeyboardInterrupt):
        runner.run()
    assert len(RunDir(tmp_path / "run").episode_paths()) == 1  # stopped after the episode that was running


class FirstAttemptsLost(Executor):
    """An executor of another backend: reports each episode's first attempt as lost, plays the second."""

    def __init__(self) -> None:
        self.taken: list[str] = []

    def play(self, suite, root, pending):
        attempted = set()
        while pending:
            planned = pending.popleft()
            self.taken.append(f"{planned.key.task}/r{planned.key.repeat}")
            if planned.key in attempted:
                yield Played(planned, play_and_write(suite, planned, root))
            else:
                attempted.add(planned.key)
                yield Faulted(planned, "the node was lost")


def test_any_executor_plays_the_queue_and_the_runner_keeps_retries_and_resume(tmp_path):
    lost = FirstAttemptsLost()
    first = Runner(suite, config(repeats=2), tmp_path, executor=lost).run()
    assert (first.written, first.complete) == (0, False)
    assert set(first.faults.values()) == {"the node was lost"} and len(first.faults) == 4
    retried = FirstAttemptsLost()
    second = Runner(suite, config(repeats=2), tmp_path, executor=retried, retries=1).run()
    assert (second.written, second.faults, second.complete) == (4, {}, True)
    assert retried.taken == ["tiny-00/r0", "tiny-00/r1", "tiny-01/r0", "tiny-01/r1"] * 2  # retries go last
    finished = FirstAttemptsLost()
    assert Runner(suite, config(repeats=2), tmp_path, executor=finished).run().skipped == 4
    assert finished.taken == []  # finished episodes never reach the executor


HOLD_LOCK = """
import sys
from pathlib import Path
from discogym.core.running.storage import RunDir
with RunDir(Path(sys.argv[1])).locked():
    print("locked", flush=True)
    sys.stdin.read()
"""


def test_a_second_run_into_a_run_directory_in_use_is_refused_naming_the_first(tmp_path):
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD_LOCK, str(tmp_path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=cli_environment(),
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "locked\n"
        with pytest.raises(RunInUse, match=rf"{tmp_path} is in use by another discogym run \(pid {holder.pid}: "):
            run(tmp_path, config("bisect"))
        refused = run_discogym("run", "toy", "--split", "tiny", "--agent", "bisect", "--out", str(tmp_path))
        assert refused.returncode == 2 and len(refused.stderr.strip().splitlines()) == 1
        assert refused.stderr.startswith(f"error: {tmp_path} is in use by another discogym run (pid {holder.pid}")
        assert episodes(tmp_path) == []
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(timeout=30)
    # The holder is gone, and with it its lock: the run goes ahead, and releases the lock when it ends.
    assert run(tmp_path, config("bisect")).complete
    assert run(tmp_path, config("bisect"), workers=2).skipped == 2


def test_the_lock_is_released_when_a_run_fails(tmp_path):
    run(tmp_path, config())
    with pytest.raises(UserError, match="holds a run of suite 'toy' with seed 0"):
        run(tmp_path, config(seed=5))
    with RunDir(tmp_path).locked():  # nothing holds it any more
        pass


def test_a_full_disk_stops_the_run_instead_of_playing_every_remaining_episode(tmp_path, monkeypatch):
    played = []
    writes = []

    def counting_play(suite, planned):
        played.append(planned.key.task)
        return play_episode(suite, planned)

    def filling_write(path, content):
        writes.append(path)
        if len(writes) > 2:  # the first episode's two files fit; then the disk is full
            raise OSError(errno.ENOSPC, "No space left on device")
        atomic_write(path, content)

    monkeypatch.setattr(executors, "play_episode", counting_play)
    monkeypatch.setattr(storage, "atomic_write", filling_write)
    with pytest.raises(UserError) as refused:
        run(tmp_path, config("bisect", split="dev"))
    assert played == ["dev-00", "dev-01"]  # not the six others
    stem = RunDir(tmp_path).runtime_path(plan_episodes(suite, config("bisect", split="dev"))[1].key)
    assert str(refused.value) == (
        f"cannot write {stem}: No space left on device; the run stopped with 1 of 8 episodes finished in "
        f"{tmp_path}: fix that, then rerun the same command to resume"
    )
    monkeypatch.undo()
    resumed = run(tmp_path, config("bisect", split="dev"))
    assert (resumed.skipped, resumed.written, resumed.complete) == (1, 7, True)


def test_a_folder_at_an_episodes_path_is_named_before_anything_is_played(tmp_path):
    cfg = config("bisect")
    blocked = RunDir(tmp_path).episode_path(plan_episodes(suite, cfg)[1].key)
    blocked.mkdir(parents=True)
    with pytest.raises(UserError, match=rf"^{blocked} is a folder where an episode file goes: remove it, then rerun$"):
        run(tmp_path, cfg)
    assert RunDir(tmp_path).episode_paths() == [blocked]  # nothing was played
    blocked.rmdir()
    assert run(tmp_path, cfg).complete


def test_episode_file_names_never_start_with_a_dot_and_existing_names_are_kept():
    plain = EpisodeKey(suite="toy", task="t1", condition="plain", agent="random")
    assert plain.file_stem() == "t1_plain_random_-_r0-903ce11c714c"  # runs written before keep resuming
    dotted = EpisodeKey(suite="toy", task="..hidden", condition="plain", agent="random")
    assert dotted.file_stem().startswith("__hidden_plain_random_-_r0-")
    assert dotted.file_stem() != EpisodeKey(suite="toy", task="__hidden", condition="plain", agent="random").file_stem()


class DottedSuite(DigitSuite):
    """The toy suite with task ids that start with a dot."""

    def tasks(self, split):
        return [task.model_copy(update={"id": "." + task.id}) for task in super().tasks(split)]


def test_episodes_of_a_task_whose_id_starts_with_a_dot_are_reported(tmp_path):
    dotted = DottedSuite()
    cfg = RunConfig.for_suite(dotted, ["bisect"], split="tiny")
    assert Runner(dotted, cfg, tmp_path).run().complete
    assert [e.key.task for e in episodes(tmp_path)] == [".tiny-00", ".tiny-01"]


def test_repeats_and_the_planned_grid_are_bounded_before_anything_is_planned():
    with pytest.raises(UserError, match=r"^--repeats 99,999,999,999,999,999,999: a run may plan at most 1,000,000"):
        config(repeats=99999999999999999999)
    with pytest.raises(UserError, match=r"would plan 1,600,000 episodes \(.* = 2 x 1 x 1 x 800,000\)"):
        plan_episodes(suite, config(repeats=800_000))


def test_a_resume_plays_again_what_ended_in_an_error_and_keeps_the_earlier_file_aside(tmp_path, monkeypatch):
    def broken_submit(env, args):
        raise RuntimeError("the submit tool is broken today")

    planned = plan_episodes(suite, config("bisect"))
    first = planned[0].key
    original = DigitEnv.submit
    monkeypatch.setattr(
        DigitEnv, "submit", lambda env, args: (broken_submit if env.task_id == first.task else original)(env, args)
    )
    run(tmp_path, config("bisect"))
    errored = RunDir(tmp_path).read_episode(first)
    assert errored is not None and errored.outcome.termination == "env_error"
    monkeypatch.setattr(DigitEnv, "submit", original)

    kept = run(tmp_path, config("bisect"), keep_errors=True)
    assert (kept.skipped, kept.written, kept.retried) == (2, 0, 0)

    resumed = run(tmp_path, config("bisect"))
    assert (resumed.skipped, resumed.written, resumed.retried) == (1, 1, 1)
    assert [e.outcome.termination for e in episodes(tmp_path)] == ["submitted", "submitted"]
    aside = RunDir(tmp_path).retried_dir
    assert sorted(p.name for p in aside.iterdir()) == [
        f"{first.file_stem()}.1.json",
        f"{first.file_stem()}.1.runtime.json",
    ]
    assert Episode.model_validate_json((aside / f"{first.file_stem()}.1.json").read_bytes()) == errored
    assert RunDir(tmp_path).retried_count() == 1
    again = run(tmp_path, config("bisect"))  # nothing ended in an error now: nothing more to play
    assert (again.skipped, again.retried) == (2, 0)


def test_the_agents_own_endings_stay_final_on_resume(tmp_path):
    run(tmp_path, config("quitter"))
    assert {e.outcome.termination for e in episodes(tmp_path)} == {"agent_stopped"}
    assert run(tmp_path, config("quitter")).retried == 0


def test_a_setting_refused_as_an_episode_starts_is_a_config_error_and_the_run_is_refused_before_it(
    tmp_path, monkeypatch
):
    planned = plan_episodes(suite, config("bisect"))
    refused = planned[1].key.task

    def make_env(task, condition, seed):
        if task.id == refused:
            raise UserError(f"task {task.id} asks for a board this environment does not have")
        return DigitEnv(task, condition, seed)

    monkeypatch.setattr(suite, "make_env", make_env)
    run(tmp_path / "checked", config("bisect"))  # the first episode starts: the run goes on, the refusal is recorded
    by_task = {e.key.task: e.outcome for e in episodes(tmp_path / "checked")}
    assert by_task[refused].termination == "config_error" and by_task[refused].termination.kind == "error"
    assert "asks for a board this environment does not have" in str(by_task[refused].error)

    refused = planned[0].key.task
    with pytest.raises(UserError, match=f"task {refused}, condition plain: task {refused} asks for a board"):
        run(tmp_path / "refused", config("bisect"))
    assert not (tmp_path / "refused").exists()


def test_the_report_counts_the_episodes_played_again(tmp_path, monkeypatch):
    def broken_submit(env, args):
        raise RuntimeError("broken")

    monkeypatch.setattr(DigitEnv, "submit", broken_submit)
    run(tmp_path, config("bisect"))
    monkeypatch.undo()
    assert build_report(tmp_path).header.retried == 0
    run(tmp_path, config("bisect"))
    built = build_report(tmp_path)
    assert built.header.retried == 2 and "- played again after an error: 2 (earlier files in retried/)" in (
        built.markdown()
    )
