"""What acts on the whole process: an exception raised into a thread, the one event loop and the objects kept for
the process, the paused collector, the frozen heap and the pool of worker processes."""

import asyncio
import gc
import itertools
import threading
import time
import weakref
from collections.abc import Iterator

import pytest

from discogym.core.running import process
from discogym.core.running.process import (
    WAKE_SECONDS,
    CollectorFreezer,
    collector_paused,
    deferring_raised,
    event_loop,
    raise_in_thread,
    run_on_event_loop,
    shared,
)


class Stop(BaseException):
    """What the tests raise into a thread."""


def test_a_thread_raises_what_is_raised_into_it():
    running, stopped = threading.Event(), threading.Event()

    def work() -> None:
        try:
            while True:
                running.set()
                time.sleep(0.01)
        except Stop:
            stopped.set()

    thread = threading.Thread(target=work, daemon=True)
    thread.start()
    assert running.wait(5) and thread.ident is not None
    raise_in_thread(thread.ident, Stop)
    thread.join(5)
    assert stopped.is_set() and not thread.is_alive()


def test_what_is_raised_into_a_deferring_block_is_raised_when_it_ends():
    inside, raised = threading.Event(), threading.Event()
    steps: list[str] = []

    def work() -> None:
        try:
            with deferring_raised():
                with deferring_raised():  # nested: one block, the outer one's end raises
                    inside.set()
                    assert raised.wait(5)
                    for _ in range(100):  # instructions enough to have met an exception raised at once
                        time.sleep(0.001)
                    steps.append("inner block done")
                steps.append("outer block done")
            steps.append("after the block")
        except Stop:
            steps.append("stopped")

    thread = threading.Thread(target=work, daemon=True)
    thread.start()
    assert inside.wait(5) and thread.ident is not None
    raise_in_thread(thread.ident, Stop)
    raised.set()
    thread.join(5)
    assert steps == ["inner block done", "outer block done", "stopped"]
    assert process._deferring == {}  # a later thread with the same ident is not deferred


def test_every_thread_gets_the_one_event_loop_running_in_a_daemon_thread():
    loops: list[asyncio.AbstractEventLoop] = []
    threads = [threading.Thread(target=lambda: loops.append(event_loop())) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(5)
    assert len(loops) == 4 and all(loop is event_loop() for loop in loops) and event_loop().is_running()
    runners = [thread for thread in threading.enumerate() if thread.name == "discogym-models"]
    assert len(runners) == 1 and runners[0].daemon


def test_a_coroutine_run_on_the_event_loop_gives_its_result_or_raises_its_error():
    async def answer() -> int:
        await asyncio.sleep(0)
        return 42

    async def fail() -> None:
        raise ValueError("no")

    assert run_on_event_loop(answer()) == 42
    with pytest.raises(ValueError, match="no"):
        run_on_event_loop(fail())


def test_a_thread_stopped_while_it_waits_on_the_event_loop_cancels_its_coroutine():
    started, cancelled = threading.Event(), threading.Event()

    async def slow_reply() -> None:
        started.set()
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            cancelled.set()
            raise

    stopped: list[type[BaseException]] = []

    def episode() -> None:
        try:
            run_on_event_loop(slow_reply())
        except BaseException as err:
            stopped.append(type(err))

    thread = threading.Thread(target=episode, daemon=True)
    thread.start()
    assert started.wait(5) and thread.ident is not None
    time.sleep(2 * WAKE_SECONDS)  # the request may start before the thread holds its future: let it wait on it
    raise_in_thread(thread.ident, KeyboardInterrupt)  # how a stopping run ends its episodes' threads
    thread.join(5)
    assert not thread.is_alive() and stopped == [KeyboardInterrupt] and cancelled.wait(5)


def test_an_object_is_made_once_per_key_and_kept():
    made = itertools.count()
    first = shared(("test-once", 1), lambda: [next(made)])
    assert shared(("test-once", 1), lambda: [next(made)]) is first
    assert shared(("test-once", 2), lambda: [next(made)]) is not first
    assert next(made) == 2  # two made, one per key


def test_threads_asking_for_a_new_key_at_once_all_get_the_first_object_kept():
    ready = threading.Barrier(4)
    got: list[object] = []

    def make() -> object:
        time.sleep(0.05)  # every thread is making one meanwhile
        return object()

    def ask() -> None:
        ready.wait(5)
        got.append(shared(("test-race",), make))

    threads = [threading.Thread(target=ask) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(5)
    assert len(got) == 4 and all(one is got[0] for one in got) and shared(("test-race",), object) is got[0]


def test_the_collector_is_paused_inside_and_runs_again_after_the_last_pause():
    assert gc.isenabled()
    with collector_paused():
        assert not gc.isenabled()
        with collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the outer pause still holds
    assert gc.isenabled()


def test_pauses_in_two_threads_end_with_the_last_one():
    entered, release = threading.Event(), threading.Event()

    def hold() -> None:
        with collector_paused():
            entered.set()
            release.wait(10)

    other = threading.Thread(target=hold)
    other.start()
    entered.wait(10)
    with collector_paused():
        pass
    assert not gc.isenabled()  # the other thread's pause is still on
    release.set()
    other.join(10)
    assert gc.isenabled()


def test_a_collector_turned_off_before_stays_off():
    gc.disable()
    try:
        with collector_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


class Clock:
    """A monotonic clock the test moves."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class Cycle:
    """Garbage only the cyclic collector frees."""

    def __init__(self) -> None:
        self.me = self


@pytest.fixture
def unfrozen() -> Iterator[None]:
    """The heap unfrozen before and after the test, whatever it did."""
    gc.unfreeze()
    yield
    gc.unfreeze()


@pytest.fixture
def collections(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The full collections asked for (gc.collect, counted and still run)."""
    asked: list[int] = []
    collect = gc.collect

    def counted(generation: int = 2) -> int:
        asked.append(generation)
        return collect(generation)

    monkeypatch.setattr(gc, "collect", counted)
    return asked


def test_while_paced_work_runs_the_heap_is_frozen_and_its_garbage_kept(unfrozen):
    freezer = CollectorFreezer(most_ended=100, most_seconds=600.0)
    cycle = Cycle()
    kept = weakref.ref(cycle)
    freezer.tend(paced=True)
    assert gc.get_freeze_count() > 0
    del cycle
    gc.collect()
    assert kept() is not None  # frozen: not collected, not even as garbage


def test_once_no_paced_work_runs_the_heap_is_unfrozen_and_collected_whole(unfrozen, collections):
    freezer = CollectorFreezer(most_ended=100, most_seconds=600.0)
    cycle = Cycle()
    kept = weakref.ref(cycle)
    freezer.tend(paced=True)
    del cycle
    freezer.tend(paced=False)
    assert gc.get_freeze_count() == 0 and kept() is None and collections == [2]
    freezer.tend(paced=False)
    assert collections == [2]  # nothing was frozen: no collection


def test_after_so_many_ended_the_heap_is_collected_whole_then_frozen_again(unfrozen, collections):
    freezer = CollectorFreezer(most_ended=2, most_seconds=600.0)
    freezer.tend(paced=True)
    freezer.note_ended()
    freezer.tend(paced=True)
    assert gc.get_freeze_count() > 0 and collections == []  # one ended: not yet
    freezer.note_ended()
    freezer.tend(paced=True)
    assert gc.get_freeze_count() == 0 and collections == [2]
    freezer.tend(paced=True)  # counted from zero again
    assert gc.get_freeze_count() > 0 and collections == [2]


def test_after_so_long_the_heap_is_collected_whole_then_frozen_again(unfrozen, collections):
    clock = Clock()
    freezer = CollectorFreezer(most_ended=100, most_seconds=600.0, clock=clock)
    freezer.tend(paced=True)
    clock.now += 600.0
    freezer.tend(paced=True)
    assert gc.get_freeze_count() > 0 and collections == []  # not longer than the bound yet
    clock.now += 1.0
    freezer.tend(paced=True)
    assert gc.get_freeze_count() == 0 and collections == [2]
    clock.now += 600.0
    freezer.tend(paced=True)  # timed from that collection
    assert gc.get_freeze_count() > 0 and collections == [2]


def test_a_time_without_paced_work_restarts_the_count_and_the_time(unfrozen, collections):
    clock = Clock()
    freezer = CollectorFreezer(most_ended=2, most_seconds=600.0, clock=clock)
    freezer.note_ended()
    clock.now += 500.0
    freezer.tend(paced=False)
    freezer.note_ended()
    clock.now += 500.0
    freezer.tend(paced=True)
    assert gc.get_freeze_count() > 0 and collections == []


def test_released_the_heap_is_unfrozen(unfrozen):
    freezer = CollectorFreezer(most_ended=100, most_seconds=600.0)
    freezer.tend(paced=True)
    freezer.release()
    assert gc.get_freeze_count() == 0


def pid_and(value: int) -> tuple[int, int]:
    """Where it ran, and what it was given (a module-level function: a worker process can look it up)."""
    import os

    return os.getpid(), value


def die(value: int) -> int:
    """Kills the process it runs in: a worker that dies."""
    import os

    if os.getpid() != value:
        os._exit(3)
    return value


def test_computed_runs_in_a_worker_process_inside_the_block_and_here_outside_it(capfd):
    import os

    from discogym.core.running.process import computed, computing_in_workers

    assert computed(pid_and, 1) == (os.getpid(), 1)
    with computing_in_workers(1):
        where, value = computed(pid_and, 2)
        assert value == 2 and where != os.getpid()
        with pytest.raises(ValueError, match="one pool per process"), computing_in_workers(1):
            pass
        assert computed(die, os.getpid()) == os.getpid()  # the worker died: computed here instead, said once
        assert computed(die, os.getpid()) == os.getpid()
        assert computed(pid_and, 3) == (os.getpid(), 3)
    assert capfd.readouterr().err.count("a worker process died; computing in the server's own threads") == 1
    assert computed(pid_and, 4) == (os.getpid(), 4)
    with computing_in_workers(0):  # no workers: here
        assert computed(pid_and, 5) == (os.getpid(), 5)
