"""--concurrency N: up to N episodes at once in threads of one process (the runner's, or each worker's), with the
same files, faults, retries, resume and interrupts as one at a time."""

import contextlib
import io
import os
import threading
from collections.abc import Sequence
from pathlib import Path

import pytest

from discogym.core import AgentContext, AgentDecision, AgentFactory, AgentOptions, EpisodeKey, Turn, UserError
from discogym.core.running import executors
from discogym.core.running.executors import EpisodeSummary, RunListener
from discogym.core.running.runner import RunConfig, Runner, plan_episodes
from discogym.core.running.storage import RunDir
from tests.core.closing_suite import EVENTS, ClosingSuite, opened_and_closed
from tests.core.toy_suite import Bisect

GATHER_VARIABLE = "DISCOGYM_TEST_GATHER"  # how many episodes a gatherer waits for (1: none)
GATHER_LOG_VARIABLE = "DISCOGYM_TEST_GATHER_LOG"  # where gatherers leave one file per episode, named by process
RELEASE = threading.Event()  # what the stuck agents wait for, as for a model's reply that does not come


class InFlight:
    """The gatherers of this process between their start and their close: how many now, and the most at once."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.now = 0
        self.peak = 0
        self.barriers: dict[int, threading.Barrier] = {}


IN_FLIGHT = InFlight()


class Gatherer(Bisect):
    """Bisect that waits, before its first move, until ``$DISCOGYM_TEST_GATHER`` episodes of its process are in
    flight at once: a barrier, broken after 10 s (the episode then ends in an agent error)."""

    def start(self, context: AgentContext) -> None:
        parties = int(os.environ.get(GATHER_VARIABLE, "1"))
        with IN_FLIGHT.lock:
            IN_FLIGHT.now += 1
            IN_FLIGHT.peak = max(IN_FLIGHT.peak, IN_FLIGHT.now)
            barrier = IN_FLIGHT.barriers.setdefault(parties, threading.Barrier(parties, timeout=10))
        if log := os.environ.get(GATHER_LOG_VARIABLE):
            Path(log).mkdir(exist_ok=True)
            (Path(log) / f"{os.getpid()}.{context.seed}").touch()
        barrier.wait()

    def close(self) -> None:
        with IN_FLIGHT.lock:
            IN_FLIGHT.now -= 1


class Stuck(Bisect):
    """Bisect whose first move waits for :data:`RELEASE`, as on a model that does not answer (blocked in C,
    where no exception reaches it until the wait returns)."""

    def act(self, history: Sequence[Turn]) -> AgentDecision:
        if not history:
            RELEASE.wait(30)
        return super().act(history)


class ConcurrencySuite(ClosingSuite):
    """The closing toy suite (environments that count their closes) with the agents above."""

    def reference_agents(self) -> dict[str, AgentFactory]:
        return {
            **super().reference_agents(),
            "gatherer": lambda options: Gatherer(),
            "stuck": lambda options: Stuck(),
        }


suite = ConcurrencySuite()


class Recorder(RunListener):
    """What the runner told its listener, and on which threads."""

    def __init__(self, interrupt_after: int | None = None) -> None:
        self.runner: Runner | None = None
        self.interrupt_after = interrupt_after
        self.threads: set[threading.Thread] = set()
        self.written: list[EpisodeKey] = []
        self.faults: list[tuple[EpisodeKey, bool]] = []

    def finished(self, done: EpisodeSummary) -> None:
        self.threads.add(threading.current_thread())
        self.written.append(done.key)
        if self.runner is not None and len(self.written) == self.interrupt_after:
            self.runner.interrupt()  # as Ctrl-C does

    def fault(self, key: EpisodeKey, message: str, will_retry: bool) -> None:
        self.threads.add(threading.current_thread())
        self.faults.append((key, will_retry))


@pytest.fixture(autouse=True)
def fresh_state():
    EVENTS.clear()
    IN_FLIGHT.peak = 0
    RELEASE.clear()
    yield
    RELEASE.set()  # a stuck agent left by a failed test ends
    EVENTS.clear()


def config(*agents: str, split: str = "tiny", conditions: tuple[str, ...] = ("plain",), repeats: int = 1, **options):
    requested = [AgentOptions(name=a, options=options) for a in agents]
    return RunConfig.for_suite(suite, requested, split=split, conditions=list(conditions), repeats=repeats)


def files(out: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in RunDir(out).episode_paths()}


def stray_files(out: Path) -> list[Path]:
    return [path for path in out.rglob("*") if path.name.endswith(".tmp")]


def test_episode_files_are_the_same_bytes_whatever_the_concurrency(tmp_path):
    cfg = config("bisect", "random", "sloppy", split="dev", conditions=("plain", "buggy"))
    one = Runner(suite, cfg, tmp_path / "one").run()
    listener = Recorder()
    four = Runner(suite, cfg, tmp_path / "four", concurrency=4, listener=listener).run()
    assert (one.written, four.written, four.complete) == (48, 48, True)
    assert files(tmp_path / "four") == files(tmp_path / "one")
    assert {e.outcome.termination for e in RunDir(tmp_path / "four").iter_episodes()} >= {"submitted", "env_error"}
    sidecars = {path.name for path in (tmp_path / "four" / "runtime").iterdir()}
    assert sidecars == set(files(tmp_path / "one"))  # written too, but they hold timings: not compared
    assert listener.threads == {threading.main_thread()}  # the listener is told on the runner's thread


def test_episodes_really_play_at_once_up_to_the_concurrency(tmp_path, monkeypatch):
    monkeypatch.setenv(GATHER_VARIABLE, "4")  # each episode waits until four are in flight
    summary = Runner(suite, config("gatherer", repeats=4), tmp_path, concurrency=4).run()
    assert (summary.written, summary.complete) == (8, True)
    assert all(e.outcome.termination == "submitted" for e in RunDir(tmp_path).iter_episodes())  # no barrier broke
    assert IN_FLIGHT.peak == 4


def test_a_fault_faults_only_its_episode_and_a_retry_plays_it_again(tmp_path):
    cfg = config("flaky", split="dev", fail_dir=str(tmp_path / "markers"))
    planned = plan_episodes(suite, cfg)
    unlucky = planned[3]
    for item in planned:  # Flaky faults an episode's first attempt unless its marker is there
        if item is not unlucky:
            (tmp_path / "markers").mkdir(exist_ok=True)
            (tmp_path / "markers" / f"failed-{item.agent_seed}").touch()
    first = Runner(suite, cfg, tmp_path / "run", concurrency=4).run()
    assert (first.written, list(first.faults), first.complete) == (7, [unlucky.key.file_stem()], False)
    resumed = Runner(suite, cfg, tmp_path / "run", concurrency=4).run()
    assert (resumed.skipped, resumed.written, resumed.complete) == (7, 1, True)

    (tmp_path / "markers" / f"failed-{unlucky.agent_seed}").unlink()
    listener = Recorder()
    retried = Runner(suite, cfg, tmp_path / "retried", concurrency=4, retries=1, listener=listener).run()
    assert (retried.written, retried.faults, retried.complete) == (8, {}, True)
    assert listener.faults == [(unlucky.key, True)]
    assert files(tmp_path / "retried") == files(tmp_path / "run")
    assert all(e.score.value == 1.0 for e in RunDir(tmp_path / "run").iter_episodes())


def test_an_interrupt_abandons_the_episodes_in_flight_and_a_rerun_resumes(tmp_path):
    cfg = config("bisect", split="dev", conditions=("slow",))  # calls of 50 ms: episodes are caught in flight
    listener = Recorder(interrupt_after=3)
    runner = Runner(suite, cfg, tmp_path / "run", concurrency=4, listener=listener)
    listener.runner = runner
    with pytest.raises(KeyboardInterrupt):
        runner.run()
    opened, closed = opened_and_closed()
    written = files(tmp_path / "run")  # the three reported, and any that was being written (whole) meanwhile
    assert 3 <= len(written) < len(opened), "the run stopped with episodes in flight"
    assert sorted(closed) == sorted(opened), "the abandoned episodes closed their environments"
    assert stray_files(tmp_path / "run") == []

    resumed = Runner(suite, cfg, tmp_path / "run", concurrency=4).run()
    assert (resumed.skipped, resumed.written, resumed.complete) == (len(written), 8 - len(written), True)
    Runner(suite, cfg, tmp_path / "whole", concurrency=8).run()
    assert files(tmp_path / "run") == files(tmp_path / "whole")


def test_a_stop_does_not_wait_for_an_episode_stuck_on_its_model(tmp_path, monkeypatch):
    monkeypatch.setattr(executors, "ABANDON_GRACE_SECONDS", 0.05)
    listener = Recorder(interrupt_after=1)
    runner = Runner(suite, config("stuck", "bisect"), tmp_path, concurrency=2, listener=listener)
    listener.runner = runner
    with pytest.raises(KeyboardInterrupt):
        runner.run()  # the bisect episode ends, the run is interrupted, the stuck one is still waiting
    stuck = [thread for thread in threading.enumerate() if thread.name.startswith("episode tiny-00_plain_stuck_")]
    assert len(stuck) == 1 and stuck[0].is_alive() and stuck[0].daemon
    assert [key.agent for key in listener.written] == ["bisect"]
    RELEASE.set()  # the model answers at last: the abandoned episode stops there, unwritten, and closes its env
    stuck[0].join(10)
    assert not stuck[0].is_alive()
    assert [p.name for p in RunDir(tmp_path).episode_paths()] == [f"{listener.written[0].file_stem()}.json"]
    opened, closed = opened_and_closed()
    assert len(opened) == 2 + 2 and sorted(closed) == sorted(opened)  # and one per agent to check the run first


def test_worker_processes_each_play_episodes_at_once(tmp_path, monkeypatch):
    cfg = config("gatherer", repeats=2)  # four episodes: two for each worker, which waits until it has both
    monkeypatch.setenv(GATHER_LOG_VARIABLE, str(tmp_path / "log"))
    monkeypatch.setenv(GATHER_VARIABLE, "1")
    Runner(suite, cfg, tmp_path / "one").run()
    monkeypatch.setenv(GATHER_VARIABLE, "2")
    pool = Runner(suite, cfg, tmp_path / "pool", workers=2, concurrency=2).run()
    assert (pool.written, pool.complete) == (4, True)
    assert files(tmp_path / "pool") == files(tmp_path / "one")  # no barrier broke: each worker had two at once
    by_process: dict[str, int] = {}
    for marker in (tmp_path / "log").iterdir():
        pid = marker.name.split(".")[0]
        by_process[pid] = by_process.get(pid, 0) + 1
    assert sorted(by_process.values()) == [2, 2, 4]  # this process (one at a time), then two workers


def cli(*args: str) -> tuple[int, str]:
    """Exit code and stderr of ``discogym ARGS``, run in this process."""
    from discogym.interfaces.cli import main  # here: worker processes import this module for its suite

    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        try:
            main(list(args))
        except SystemExit as done:
            return done.code if isinstance(done.code, int) else 1, err.getvalue()
    return 0, err.getvalue()


def test_run_and_sweep_take_concurrency_and_refuse_less_than_one(tmp_path):
    with pytest.raises(UserError, match=r"^--concurrency must be at least 1$"):
        Runner(suite, config("bisect"), tmp_path, concurrency=0)
    for command in (["run", "toy"], ["sweep", "toy"]):
        code, err = cli(*command, "--concurrency", "0", "--out", str(tmp_path / "refused"))
        assert code == 2 and "Invalid value for '--concurrency'" in err
        code, err = cli(*command, "--concurrency", "3", "--quiet", "--out", str(tmp_path / command[0]))
        assert code == 0, err
    assert len(RunDir(tmp_path / "run").episode_paths()) == len(RunDir(tmp_path / "sweep" / "toy").episode_paths())
    code, err = cli("run", "toy", "--backend", "ray", "--concurrency", "2", "--out", str(tmp_path / "ray"))
    assert code == 2 and "--concurrency is not supported with --backend ray" in err
    assert not (tmp_path / "refused").exists() and not (tmp_path / "ray").exists()
