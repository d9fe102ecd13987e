"""What discogym does to the whole Python process, in one place: five mechanisms that reach past the code calling
them to every thread, or to every object alive. Each is safe only under conditions its callers keep; they are listed
here together so that a change to one can be checked against the others.

**An exception raised into another thread** (:func:`raise_in_thread`). CPython's ``PyThreadState_SetAsyncExc``
has a thread raise an exception at its next Python instruction; a thread blocked in C (on a socket, a lock, a
sleep) raises once that call returns. It is the one way to stop a Python thread from outside. The threaded
executor (``--concurrency N``, :mod:`discogym.core.running.executors`) uses it to stop the episodes in flight
when a run stops, so each closes its environment and ends unwritten. What must hold:

- the thread is a daemon thread, so one blocked in C never keeps the process from exiting;
- the ident names a thread that is still inside the work to stop: a thread's ident is reused once it ends, so
  the caller keeps the threads it may stop under its own lock and raises only into those (as the executor does);
- the exception is a ``BaseException`` no agent or environment code catches as one of its own errors;
- a thread that waits where it must be stoppable waits in short steps (:func:`run_on_event_loop` wakes every
  :data:`WAKE_SECONDS`), since a long wait in C delays the exception until it ends.

**One event loop per process, and objects shared on it** (:func:`event_loop`, :func:`run_on_event_loop`,
:func:`shared`). Inspect's model API is asynchronous and the episode driver is not: every model request of a
process runs on one asyncio event loop in a background daemon thread (``discogym-models``), started on first
use, and the thread that asked waits for the result. One loop, because an SDK client and its connection pool
belong to the loop they were made on: with one loop, the episodes played in threads share each model's client
and its connections. :func:`shared` keeps such objects, one per key, for the life of the process. The model
engine (:mod:`discogym.llm.engine`) uses all three: every request goes through :func:`run_on_event_loop`, and its
Inspect models are made on the loop and kept with :func:`shared`. What must hold:

- the loop and its thread are made only by :func:`event_loop` (one loop thread per process); nothing else runs
  it or closes it, and nothing blocks on it (a blocking call there stalls every request of the process);
- :func:`run_on_event_loop` is never called from the loop's own thread (it would wait on itself forever);
- the loop thread is a daemon: requests still in flight when the process exits are dropped, not waited for;
- no process is forked once the loop runs: the child would have the loop but not its thread, and wait on it for
  ever (discogym's worker processes are spawned);
- a key of :func:`shared` begins with the kind of object it names, so that two users never share a key, and
  the keys are few (a model, its endpoint, key and backoff): nothing kept is ever freed;
- ``make`` may run more than once for a key when threads ask at the same moment; only the first object made is
  kept and given to all, so making one must have no effect beyond the object itself.

**The cyclic garbage collector paused** (:func:`collector_paused`). ``gc.disable()`` while many episodes are read
and scored: a thousand episodes are millions of objects with no reference cycles, and the collector traversed
them again and again while they were made (1,000 redstone episodes: 3.5 s to read with it, 1.0 s without);
memory is still freed by reference counting. Reports use it (:mod:`discogym.core.reporting.run_report`, the
``report`` and ``cite`` commands). What must hold:

- pauses nest, across threads too: the collector runs again when the last pause ends, and only if it was
  running when the first began; the context manager pairs each pause with its end;
- nothing else in the process turns the collector on or off meanwhile (a ``gc.enable()`` elsewhere would end
  every pause at once);
- the work paused makes few reference cycles, since none is freed before the last pause ends (an explicit
  ``gc.collect()`` still runs, and frees them).

**The heap frozen** (:class:`CollectorFreezer`). ``gc.freeze()`` moves every object the collector tracks into a
permanent generation that its passes skip; ``gc.unfreeze()`` moves them all back. The web apps' game server
(:mod:`discogym.interfaces.web.games`, one per app and process) keeps the collector's full passes, which walk
every object alive (the logs of the games running: millions of them), away from games played at a frame rate,
where a pass stopped every player for up to a second: while such a game runs the heap is frozen again every
second, so a pass walks only what is newer; once none runs, or after so many games ended or so much time passed,
the heap is unfrozen and collected whole, which frees the reference cycles of the games that ended meanwhile. What
must hold:

- one freezer per process: freezing is process-wide and not counted (frozen twice, unfrozen once, nothing is
  frozen any more), so two freezers would undo each other's work;
- its bounds are kept small enough: nothing frozen is freed, not even garbage, until the heap is unfrozen;
- :meth:`CollectorFreezer.release` is called when the server stops, so that no object stays frozen after it;
- the whole collection it makes runs even during a pause of the collector (``gc.collect()`` always does).

**Heavy computation in worker processes** (:func:`computing_in_workers`, :func:`computed`). Threads of one
process share the GIL: a petri simulation (up to half a second of numpy in small steps) in one game's thread took
the GIL from the event loop that answers every player's frames. Inside :func:`computing_in_workers` (the web apps'
game server, while it serves), :func:`computed` runs a function in a pool of spawned worker processes, at a lower
CPU priority than the server, and the calling thread waits without the GIL; outside it, or with no workers, it
runs the function in the caller's thread. Results are the same either way: a worker runs the same code on the same
arguments. What must hold:

- a function given to :func:`computed` is pure (its result depends on its arguments alone, and it changes
  nothing the caller could see) and picklable with its arguments and its result: a module-level function or a
  bound method of an object of a module-level class;
- one pool per process (a second :func:`computing_in_workers` inside the first is refused); it is shut down
  when the block ends, after the work still queued in it;
- a worker that dies (killed, out of memory) breaks the pool: that call, and every call after it, is computed in
  the caller's thread instead, and standard error says so once;
- workers are spawned, never forked (the process has threads, and may have an event loop).
"""

import asyncio
import concurrent.futures
import contextlib
import ctypes
import gc
import multiprocessing
import os
import sys
import threading
import time
from collections.abc import Callable, Coroutine, Hashable, Iterator
from concurrent.futures.process import BrokenProcessPool
from typing import Any, TypeVar, cast

T = TypeVar("T")

WAKE_SECONDS = 0.25  # how often a thread waiting on the event loop wakes, to meet an exception raised into it


_deferring: dict[int, list[type[BaseException] | None]] = {}  # threads in deferring_raised(): what waits for each
_deferring_lock = threading.Lock()


def raise_in_thread(ident: int, exception: type[BaseException]) -> None:
    """Have the thread ``ident`` raise ``exception`` at its next Python instruction (CPython's
    PyThreadState_SetAsyncExc; a thread blocked in C, on a socket say, raises once the call returns), or at the
    end of its :func:`deferring_raised` block if it is in one."""
    with _deferring_lock:  # (held while raising: the thread cannot enter a block between the check and the raise)
        waiting = _deferring.get(ident)
        if waiting is not None:
            waiting[0] = exception
            return
        ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(ident), ctypes.py_object(exception))


@contextlib.contextmanager
def deferring_raised() -> Iterator[None]:
    """A block that :func:`raise_in_thread` does not cut short: what it raises into this thread meanwhile is raised
    when the block ends (an environment is then never left half made or half closed). Nested blocks are one."""
    me = threading.get_ident()
    waiting: list[type[BaseException] | None] = [None]
    try:
        with _deferring_lock:
            _deferring.setdefault(me, waiting)
        yield
    finally:
        with _deferring_lock:
            mine = _deferring.get(me) is waiting
            if mine:
                del _deferring[me]
        if mine and waiting[0] is not None:
            raise waiting[0]


_loop: asyncio.AbstractEventLoop | None = None
_loop_lock = threading.Lock()
_shared: dict[Hashable, object] = {}
_shared_lock = threading.Lock()


def event_loop() -> asyncio.AbstractEventLoop:
    """The process's one event loop, running in a daemon thread of its own (started by the first call)."""
    global _loop
    with _loop_lock:
        if _loop is None:
            loop = asyncio.new_event_loop()
            threading.Thread(target=loop.run_forever, name="discogym-models", daemon=True).start()
            _loop = loop
        return _loop


def run_on_event_loop(coroutine: Coroutine[Any, Any, T]) -> T:
    """Run ``coroutine`` on the process's event loop and wait for its result in this thread.

    The wait wakes every :data:`WAKE_SECONDS`, so an exception raised into this thread (a run that stops its
    episodes) is met within that time; the coroutine is then cancelled rather than left running.
    """
    future: concurrent.futures.Future[T] | None = None
    try:
        future = asyncio.run_coroutine_threadsafe(coroutine, event_loop())
        while not future.done():
            concurrent.futures.wait([future], timeout=WAKE_SECONDS)
    except BaseException:
        if future is not None:
            future.cancel()
        raise
    return future.result()


def shared(key: Hashable, make: Callable[[], T]) -> T:
    """The object kept for ``key`` in this process, made by ``make`` on the first call and kept for good.

    ``make`` runs outside the lock (it may take a while, or wait on the event loop): threads asking for a new key
    at the same moment may each make one, and all get the first one kept. Begin ``key`` with the kind of object it
    names (say ``("inspect-model", ...)``), so that different kinds never meet.
    """
    with _shared_lock:
        if key in _shared:
            return cast(T, _shared[key])
    made = make()
    with _shared_lock:
        return cast(T, _shared.setdefault(key, made))


_collector_pauses = 0
_collector_was_enabled = False
_collector_lock = threading.Lock()


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """Python's cyclic garbage collector paused while many episodes are read and scored.

    A thousand episodes are millions of objects that hold no reference cycles, and the collector would traverse
    them again and again while they are made (1,000 redstone episodes: 3.5 s to read with it, 1.0 s without).
    Memory is still freed by reference counting. Pauses in several threads nest: the collector runs again when
    the last one ends, if it was running when the first began.
    """
    global _collector_pauses, _collector_was_enabled
    with _collector_lock:
        if _collector_pauses == 0:
            _collector_was_enabled = gc.isenabled()
            gc.disable()
        _collector_pauses += 1
    try:
        yield
    finally:
        with _collector_lock:
            _collector_pauses -= 1
            if _collector_pauses == 0 and _collector_was_enabled:
                gc.enable()


class CollectorFreezer:
    """Keeps the cyclic garbage collector's full passes away from work that must not stall (games at a frame rate).

    Call :meth:`tend` regularly (the study server: every second) with whether such work is running: while it is,
    what is alive is frozen (``gc.freeze``), so that a pass walks only what is newer. Once none runs, or after
    ``most_ended`` ended (each told with :meth:`note_ended`) or ``most_seconds`` passed since the heap was last
    collected whole, the heap is unfrozen and collected whole, which frees the reference cycles left meanwhile.
    Call :meth:`release` at shutdown. One freezer per process (see the module's notes).
    """

    def __init__(self, most_ended: int, most_seconds: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.most_ended = most_ended
        self.most_seconds = most_seconds
        self._clock = clock
        self._lock = threading.Lock()
        self._ended = 0  # ended since the heap was last collected whole
        self._collected = clock()  # when that was

    def note_ended(self) -> None:
        """Count one more ended (a game whose objects, cycles included, are garbage now)."""
        with self._lock:
            self._ended += 1

    def tend(self, paced: bool) -> None:
        """Freeze the heap if ``paced`` (work that must not stall is running) and the heap is not due to be
        collected; otherwise unfreeze it and collect it whole, if it was frozen."""
        now = self._clock()
        with self._lock:
            due = self._ended >= self.most_ended or now - self._collected > self.most_seconds
            if not paced or due:
                self._ended, self._collected = 0, now
        if paced and not due:
            gc.freeze()
        elif gc.get_freeze_count():
            gc.unfreeze()
            gc.collect()

    def release(self) -> None:
        """Unfreeze the heap for good (the server is stopping)."""
        gc.unfreeze()


WORKER_NICENESS = 5  # how much lower the workers' CPU priority is than the server's


class _Workers:
    """The process's pool of workers for :func:`computed`, while :func:`computing_in_workers` runs."""

    pool: concurrent.futures.ProcessPoolExecutor | None = None
    broken = False  # a worker died: the rest is computed in the callers' threads
    lock = threading.Lock()


def _lower_priority() -> None:
    os.nice(WORKER_NICENESS)


@contextlib.contextmanager
def computing_in_workers(workers: int) -> Iterator[None]:
    """While the block runs, :func:`computed` runs its functions in ``workers`` spawned processes (none: in the
    caller's thread, as outside the block). A ValueError when the process has a pool already."""
    if workers <= 0:
        yield
        return
    with _Workers.lock:
        if _Workers.pool is not None:
            raise ValueError("the process computes in workers already: one pool per process")
        spawn = multiprocessing.get_context("spawn")
        _Workers.pool = concurrent.futures.ProcessPoolExecutor(workers, spawn, initializer=_lower_priority)
        _Workers.broken = False
    try:
        yield
    finally:
        with _Workers.lock:
            pool, _Workers.pool = _Workers.pool, None
        assert pool is not None
        pool.shutdown(wait=True, cancel_futures=False)


def computed(function: Callable[..., T], *args: Any) -> T:
    """``function(*args)``, in a worker process while :func:`computing_in_workers` runs, else here. ``function``
    must be pure and picklable with its arguments and its result (the module's notes)."""
    with _Workers.lock:
        pool = None if _Workers.broken else _Workers.pool
    if pool is None:
        return function(*args)
    future: concurrent.futures.Future[T] | None = None
    try:
        future = pool.submit(function, *args)
        while True:  # in short waits, to meet an exception raised into this thread
            with contextlib.suppress(TimeoutError):
                return future.result(timeout=WAKE_SECONDS)
    except BrokenProcessPool:
        with _Workers.lock:
            said, _Workers.broken = _Workers.broken, True
        if not said:
            print("discogym: a worker process died; computing in the server's own threads from now on", file=sys.stderr)
        return function(*args)
    except RuntimeError:  # the pool was shut down meanwhile (the block ended); the function's own go on
        if future is not None:
            raise
        return function(*args)
