"""The game server of both web apps: people's games in the browser, from their start to their written episode.

A :class:`GameServer` holds the games in progress, each a :class:`BrowserGame` under a key of its app's (the runs
app's unguessable token, a study participant's number), and owns what every game needs whoever serves it:

- **Calls** (:meth:`GameServer.answer`): a call's arguments are capped (:data:`MAX_ARGS_BYTES` each, as JSON;
  :data:`MAX_GAME_ARGS_BYTES` a game), the harness's own tool is refused, at most :data:`CALLS_IN_FLIGHT` calls of
  one game are answered at once (429 beyond), and every refusal is one clear 409.
- **Pacing**, async only: a game at a frame rate waits for its frames on the event loop, without holding a thread
  (:class:`FrameCalls` answers those calls before FastAPI's routing, which costs more than a frame).
- **Endings**, each with its name: the person's End button (``agent_stopped``), a game left idle (``abandoned``),
  one past its time (``game_time_limit``), the server stopping (``server_stopped``), and whatever the task or the
  harness ended it with. A game that ended is booked by the app's ``on_end`` (a study's attempt) before a new
  game of the same key can start, and its episode is written, or kept and retried until it can be.
- **Journals** (optional): each call appended to the game's journal as it is answered, so a server killed in the
  middle can go on with the game after a restart (:mod:`discogym.interfaces.web.journal`).
- **The watcher** (:meth:`GameServer.watch`, run every ``watch_seconds`` while the app is up): ends idle and
  overlong games, forgets ended ones, retries unwritten episodes, syncs the journals and tends the garbage
  collector (:class:`~discogym.core.running.process.CollectorFreezer`).
"""

import asyncio
import contextlib
import re
import shutil
import sys
import threading
import time
from collections import Counter, deque
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

import orjson
from fastapi import APIRouter, HTTPException
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel, Field, ValidationError, field_validator
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import Headers
from starlette.types import ASGIApp, Receive, Scope, Send

from discogym.core import Termination, ToolResult, UserError, get_suite
from discogym.core.model.jsonsafe import json_safe
from discogym.core.model.tools import UNREADABLE_TOOL
from discogym.core.running.process import CollectorFreezer, computing_in_workers
from discogym.core.running.session import ClientMistake, ExternalEpisodes, Session
from discogym.core.terminal.console import plural
from discogym.interfaces.web.browse import replay_steps_of
from discogym.interfaces.web.guard import SmallerLimit, replayed
from discogym.interfaces.web.journal import Journal
from discogym.interfaces.web.pace import FramePace
from discogym.interfaces.web.study import shortened

HUMAN = "human"  # the agent name of people's episodes
# The most a call's arguments may take as JSON. Every suite's real actions are far shorter (a click, a move, a
# block, an experiment's few parameters); a longer one is refused before it reaches a game or its log.
MAX_ARGS_BYTES = 16 * 1024
# The most a call's whole body may take: twice the arguments' cap leaves room for the tool's name and for JSON
# written less tightly than orjson writes it. A longer body is refused (413) before it is read as JSON.
MAX_CALL_BODY_BYTES = 2 * MAX_ARGS_BYTES
MAX_GAME_ARGS_BYTES = 1024 * 1024  # what a game's calls may carry in all
CALLS_IN_FLIGHT = 2  # a game's calls answered at once (a page sends one at a time)
PAGE_STEPS = 200  # a play page shows the game's last steps, this many at most ...
PAGE_LOG_BYTES = 256 * 1024  # ... and this many bytes of them as JSON at most (the last step always)
PAGE_BURST = 20  # a participant's page loads in a row, then ...
PAGES_PER_SECOND = 1.0  # ... this many a second (a reload loop rendered 70 pages a second, each holding the GIL)
STARTS_PER_TURN = 4  # requests other than frames started in one turn of the event loop (FramesFirst)
FREE_SPACE_FLOOR = 128 * 1024 * 1024  # bytes free on the games' disk below which no new game starts
# While games at a frame rate run, the heap is kept frozen (CollectorFreezer) until this many games ended, or for
# this long at most; then it is collected whole
FROZEN_GAMES = 100
FROZEN_SECONDS = 600.0


class CallRequest(BaseModel):
    """One tool call from the play page."""

    tool: str = Field(max_length=200)
    args: dict[str, Any] = Field(default_factory=dict)

    @field_validator("args")
    @classmethod
    def _short(cls, args: dict[str, Any]) -> dict[str, Any]:
        size = len(orjson.dumps(args))
        if size > MAX_ARGS_BYTES:
            raise ValueError(f"a call's arguments are at most {MAX_ARGS_BYTES:,} bytes as JSON, not {size:,}")
        return args


class GameSpec(NamedTuple):
    """Which game to start: a task of a suite's task set, in a condition (the suite's first when None), at a pace
    (``frame-rate`` or ``turns`` for suites played at a frame rate, else None), for a participant; ``game_id``
    names its journal."""

    suite: str
    split: str
    task: str
    condition: str | None
    mode: str | None
    participant: str
    game_id: str = ""


@dataclass
class BrowserGame:
    """A person's game: the session that records it, its pace and journal, and how it ended."""

    key: str
    spec: GameSpec
    session: Session
    host: ExternalEpisodes
    condition: str  # as started (the suite's first when the spec named none)
    brief: str
    started: float  # time.monotonic() at the start
    last_seen: float  # time.monotonic() of the last request about it (page, call or end)
    journal: Journal | None = None
    pace: FramePace | None = None
    args_bytes: int = 0  # what its calls' arguments took so far, as JSON
    booked: bool = False  # its end was booked (GameServer._finish)
    lock: threading.Lock = field(default_factory=threading.Lock)  # one call or end at a time: a Session is not
    # safe for concurrent use, and a page's frame calls and its End button may arrive together
    frames: asyncio.Lock = field(default_factory=asyncio.Lock)  # a paced game's calls, in turn, each its frame

    @property
    def over(self) -> bool:
        return not self.session.playing

    @property
    def written(self) -> str | None:
        """The episode file's name, once written (or kept to be written)."""
        return self.session.written

    @property
    def ending(self) -> Termination:
        """How it ended (``abandoned`` when its episode could not even be recorded)."""
        return self.session.last_ending or Termination.ABANDONED

    @property
    def seconds(self) -> float:
        return time.monotonic() - self.started


class PageRate:
    """How often each key (a participant) may load a page: a bucket of :data:`PAGE_BURST` loads that refills at
    :data:`PAGES_PER_SECOND`. A person reloads now and then; a script reloading its own page as fast as the server
    answers would take the server's time from every player."""

    def __init__(self) -> None:
        self._buckets: dict[str, tuple[float, float]] = {}  # key -> (loads in hand, when counted)
        self._lock = threading.Lock()

    def allow(self, key: str) -> bool:
        """Whether ``key`` may load a page now (and count it)."""
        now = time.monotonic()
        with self._lock:
            loads, then = self._buckets.get(key, (PAGE_BURST, now))
            loads = min(PAGE_BURST, loads + (now - then) * PAGES_PER_SECOND)
            if loads < 1:
                return False
            self._buckets[key] = (loads - 1, now)
            return True


class GameServer:
    """The games in progress of one app, by key, written under ``out/SUITE`` (one recorder host per suite and
    task set). ``idle_seconds``: a game nobody asked about for this long is written as abandoned, and an ended
    one forgotten; ``longest_seconds``: a game running this long ends as ``game_time_limit``; ``journals``: the
    folder of the games' journals (none when None); ``on_end``: books a game that ended, before its key may
    start another; ``show_episodes``: answers name the episode written (never in a study); ``compute_workers``:
    the worker processes that compute the games' heavy pure work while the app serves (a petri simulation:
    :func:`~discogym.core.running.process.computed`), none to compute it in the games' threads."""

    def __init__(
        self,
        out: Path,
        *,
        idle_seconds: float,
        longest_seconds: float | None = None,
        journals: Path | None = None,
        on_end: Callable[[BrowserGame], None] | None = None,
        show_episodes: bool = True,
        watch_seconds: float = 1.0,
        compute_workers: int = 0,
    ) -> None:
        self.out = out
        self.idle_seconds = idle_seconds
        self.longest_seconds = longest_seconds
        self.journals = journals
        self.on_end = on_end
        self.show_episodes = show_episodes
        self.watch_seconds = watch_seconds
        self.compute_workers = compute_workers
        self.in_flight: Counter[str] = Counter()  # calls being answered, by key (touched on the event loop only)
        self.unsaved: list[str] = []  # episodes that could not be written even when the server stopped
        self._hosts: dict[tuple[str, str], ExternalEpisodes] = {}
        self._games: dict[str, BrowserGame] = {}
        self._starting: dict[str, threading.Lock] = {}  # held while a key's game starts or is booked
        self._kept_journals: list[BrowserGame] = []  # of ended games whose episode is not written yet
        self._collector = CollectorFreezer(FROZEN_GAMES, FROZEN_SECONDS)
        self.pages = PageRate()
        self._lock = threading.Lock()

    def host(self, suite: str, split: str) -> ExternalEpisodes:
        with self._lock:
            key = (suite, split)
            if key not in self._hosts:
                self._hosts[key] = ExternalEpisodes(get_suite(suite), self.out / suite, agent=HUMAN, split=split)
            return self._hosts[key]

    def game(self, key: str) -> BrowserGame | None:
        """The key's game, running or ended (until forgotten), or None."""
        with self._lock:
            return self._games.get(key)

    def running(self, key: str) -> BrowserGame | None:
        """The key's game while it runs, else None."""
        game = self.game(key)
        return game if game is not None and not game.booked else None

    def _starting_lock(self, key: str) -> threading.Lock:
        with self._lock:
            return self._starting.setdefault(key, threading.Lock())

    # Starting

    def open(
        self, key: str, choose: Callable[[], GameSpec], calls: Sequence[tuple[str, dict[str, Any]]] = ()
    ) -> BrowserGame:
        """The key's game: the one running (two starts at once start one game), else the game ``choose`` names,
        started, with ``calls`` played into it again (a game restored from its journal). No game starts while
        the disk has less than :data:`FREE_SPACE_FLOOR` free (its episode could not be written)."""
        with self._starting_lock(key):
            running = self.running(key)
            if running is not None:
                return running
            if free_bytes(self.out) < FREE_SPACE_FLOOR:
                raise UserError("the server cannot save new games just now; please come back to this page later")
            return self._start(key, choose(), calls)

    def _start(self, key: str, spec: GameSpec, calls: Sequence[tuple[str, dict[str, Any]]]) -> BrowserGame:
        host = self.host(spec.suite, spec.split)
        session = host.session(spec.participant, {"mode": spec.mode} if spec.mode else {})
        session.keep_views = True
        journal = None
        if self.journals is not None:
            journal = Journal(self.journals / f"{spec.game_id}.jsonl", spec._asdict())
        now = time.monotonic()
        game = BrowserGame(key, spec, session, host, spec.condition or "", "", now, now, journal)
        game.args_bytes = sum(len(orjson.dumps(args)) for _, args in calls)
        try:
            started = session.start(spec.task, spec.condition)
            game.condition, game.brief = started.condition, started.brief
            for tool, args in calls:
                if session.playing:
                    session.call(tool, args)
        except ClientMistake:  # the environment failed (its episode is written as an error), or was not written
            self._book(game)
            raise
        if spec.mode == "frame-rate":
            game.pace = FramePace.of_view(session.last_view)
        with self._lock:
            self._games[key] = game
        if not session.playing:  # a restored game whose last call ended it (the key's start lock is held here)
            self._book(game)
        return game

    # Calls

    async def answer(self, game: BrowserGame, call: CallRequest) -> Response:
        """The answer to one call in ``game``: the result as the page shows it, 409 when the call is refused, 429
        beyond :data:`CALLS_IN_FLIGHT` calls at once (which would hold the server's connections)."""
        if self.busy(game):
            return self.too_many()
        self.in_flight[game.key] += 1
        try:
            if game.pace is not None:
                result = await self._call_paced(game, call.tool, call.args)
            else:
                result = await run_in_threadpool(self.call, game, call.tool, call.args)
        except (UserError, ClientMistake) as err:
            return JSONResponse({"error": str(err)}, status_code=409)
        finally:
            self.in_flight[game.key] -= 1
            if not self.in_flight[game.key]:
                del self.in_flight[game.key]
        return json_response({**result_document(result, game.session, self.episode_shown(game)), **self.ended(game)})

    def busy(self, game: BrowserGame) -> bool:
        """Whether ``game`` has :data:`CALLS_IN_FLIGHT` calls being answered (a next one is refused)."""
        return self.in_flight[game.key] >= CALLS_IN_FLIGHT

    @staticmethod
    def too_many() -> Response:
        """The refusal of a call beyond :data:`CALLS_IN_FLIGHT` (429)."""
        message = f"at most {CALLS_IN_FLIGHT} calls at once: wait for an answer before the next call"
        return JSONResponse({"error": message}, status_code=429)

    def call(self, game: BrowserGame, tool: str, args: dict[str, Any]) -> ToolResult:
        """One call in ``game`` (in a worker thread)."""
        with game.lock:
            return self._call_locked(game, tool, args)

    def _call_locked(self, game: BrowserGame, tool: str, args: dict[str, Any]) -> ToolResult:
        if tool == UNREADABLE_TOOL:  # the harness's own: its text would be logged as the environment's
            raise UserError(f"no tool {shortened(tool)}")
        if not game.session.playing:
            shown = self.episode_shown(game)
            raise UserError("the game is over" + (f"; its episode is {shown}" if shown else ""))
        size = len(orjson.dumps(args))
        if game.args_bytes + size > MAX_GAME_ARGS_BYTES:
            raise UserError(f"this game's calls carried {MAX_GAME_ARGS_BYTES:,} bytes already: end the game")
        game.args_bytes += size
        if game.pace is not None:
            game.pace.tick()
            game.session.frame_intervals_s = game.pace.intervals
        try:
            result = game.session.call(tool, args)
            if game.journal is not None:
                game.journal.record(tool, args)
        finally:
            game.last_seen = time.monotonic()
            if not game.session.playing:
                self._finish(game)
        return result

    async def _call_paced(self, game: BrowserGame, tool: str, args: dict[str, Any]) -> ToolResult:
        """One call in a game at a frame rate: the calls wait for their frames one at a time on the event loop. A
        frame of a world being explored runs on the loop: it is small (half a millisecond on average), never ends
        the game, and a worker thread would cost more than the frame itself. Any other call (a test's frames and
        answers) may end the game, whose scoring and writing take some 0.1 s that no other player should wait
        for, and so does a frame whose game a thread holds (the page reloaded, the game ending): those run in a
        worker thread."""
        assert game.pace is not None
        async with game.frames:
            await game.pace.held()
            if exploring(game.session.last_view) and game.lock.acquire(blocking=False):
                try:
                    return self._call_locked(game, tool, args)
                finally:
                    game.lock.release()
            return await run_in_threadpool(self.call, game, tool, args)

    def episode_shown(self, game: BrowserGame) -> str | None:
        """The episode's name as answers show it (never in a study)."""
        return game.written if self.show_episodes else None

    def ended(self, game: BrowserGame) -> dict[str, Any]:
        """Whether the game is over, and once it is, whether its episode is on disk."""
        return {"over": game.over, "saved": self.saved(game) if game.over else None}

    def saved(self, game: BrowserGame) -> bool:
        written = game.written
        return written is not None and game.host.saved(written)

    # Endings

    def end(self, game: BrowserGame, termination: Termination, message: str) -> None:
        """End the game (the person's wish, or a limit of the server) and write it; nothing if it is over. A
        ClientMistake when its episode could not be recorded (the game is booked all the same)."""
        with game.lock:
            try:
                if game.session.playing:
                    if termination is Termination.ABANDONED:
                        game.session.leave()
                    else:
                        game.session.end(message, termination)
            finally:
                self._finish(game)

    def _finish(self, game: BrowserGame) -> None:
        """The game ended: book it (once), holding its key's start until it is booked, so a start racing the end
        never begins the same game again."""
        with self._starting_lock(game.key):
            with self._lock:
                if game.booked:
                    return
                game.booked = True
            self._collector.note_ended()
            self._book(game)

    def _book(self, game: BrowserGame) -> None:
        game.booked = True
        if self.on_end is not None:
            self.on_end(game)
        if game.journal is not None:
            kept = game.written is not None and not self.saved(game)
            game.journal.close(keep=kept)  # kept, with its calls, until the episode is written
            if kept:
                with self._lock:
                    self._kept_journals.append(game)

    def watch(self) -> None:
        """End idle games as ``abandoned`` and overlong ones as ``game_time_limit``; forget ended games left idle;
        retry unwritten episodes; sync the journals; tend the collector."""
        now = time.monotonic()
        with self._lock:
            games = list(self._games.values())
            hosts = list(self._hosts.values())
        for game in games:
            with contextlib.suppress(ClientMistake):
                if not game.booked and self.longest_seconds is not None and now - game.started > self.longest_seconds:
                    self.end(game, Termination.GAME_TIME_LIMIT, "the time for a game ran out")
                elif now - game.last_seen > self.idle_seconds:
                    self.end(game, Termination.ABANDONED, "idle")
                    self._forget(game)
                elif game.journal is not None and not game.booked:
                    with game.lock:  # no call appends meanwhile
                        game.journal.flush()
                    game.journal.sync()  # outside the lock: a frame never waits for the disk
        for host in hosts:
            host.retry_unsaved()
        self._drop_saved_journals()
        with self._lock:
            paced = any(game.pace is not None and not game.booked for game in self._games.values())
        self._collector.tend(paced)

    def _forget(self, game: BrowserGame) -> None:
        with self._lock:
            if self._games.get(game.key) is game:
                del self._games[game.key]

    def _drop_saved_journals(self) -> None:
        with self._lock:
            kept, self._kept_journals = self._kept_journals, []
        for game in kept:
            if self.saved(game) and game.journal is not None:
                game.journal.path.unlink(missing_ok=True)
            else:
                with self._lock:
                    self._kept_journals.append(game)

    def stop(self) -> list[str]:
        """The server is stopping: write every game still running as ``server_stopped`` (not the person's
        doing); return the episodes that could not be written even then."""
        with self._lock:
            running = [game for game in self._games.values() if not game.booked]
            hosts = list(self._hosts.values())
        for game in running:
            with contextlib.suppress(ClientMistake):
                self.end(game, Termination.SERVER_STOPPED, "the server stopped")
        self._collector.release()
        self.unsaved = [name for host in hosts for name in host.retry_unsaved()]
        return self.unsaved

    @contextlib.asynccontextmanager
    async def serving(self, where: Path) -> AsyncIterator[None]:
        """While the app serves: the watcher runs every ``watch_seconds`` and the games compute in
        ``compute_workers`` processes; when it stops, every game is written (and those that could not be are named
        on standard error)."""

        async def watching() -> None:
            while True:
                await asyncio.sleep(self.watch_seconds)
                await run_in_threadpool(self.watch)

        with computing_in_workers(self.compute_workers):
            watcher = asyncio.create_task(watching())
            try:
                yield
            finally:
                watcher.cancel()
                # written on the loop, which runs nothing else now: the requests uvicorn cancelled at its shutdown
                # (slow clients) are not woken to log their cancellation
                say_unsaved(self.stop(), where)

    # Pages and routes

    def play_context(self, game: BrowserGame, **shown: Any) -> dict[str, Any]:
        """What the play page shows of ``game`` (its header fields replaced by ``shown``): the last
        :data:`PAGE_STEPS` steps of its log, never more."""
        with game.lock:
            session = game.session
            recorder = session.recorder
            spec = game.spec
            header = {"suite": spec.suite, "task": spec.task, "condition": game.condition, "mode": spec.mode}
            return {
                "game": {
                    **header,
                    "participant": spec.participant,
                    "brief": game.brief,
                    "over": game.over,
                    "written": self.episode_shown(game),
                    **shown,
                },
                "tools": [spec.model_dump() for spec in session.tools()],
                "images": [f"data:{i.media_type};base64,{i.data_base64}" for i in session.brief_images()],
                "history": page_steps(replay_steps_of(recorder.events[-PAGE_STEPS:])) if recorder is not None else [],
                "view": session.last_view,
            }

    def router(self, path: str, find: Callable[[str], BrowserGame]) -> APIRouter:
        """The pages' calls: ``POST PATH/KEY/call`` and ``POST PATH/KEY/end``, the game found by ``find`` (which
        raises the app's 404 or 409)."""
        router = APIRouter()

        @router.post(path + "/{key}/call")
        async def call(key: str, request_body: CallRequest) -> Response:
            return await self.answer(find(key), request_body)

        @router.post(path + "/{key}/end")
        def end(key: str) -> dict[str, Any]:
            game = find(key)
            try:
                self.end(game, Termination.AGENT_STOPPED, "the person ended the game")
            except ClientMistake as err:  # e.g. the episode could not be recorded: abandoned
                raise HTTPException(409, str(err)) from None
            return {"over": True, "written": self.episode_shown(game), "saved": self.saved(game)}

        return router


class GamesMiddleware:
    """A middleware that knows the games' calls: ``path`` matches a call's path, its group the key that ``find``
    turns into a running game (or None)."""

    def __init__(
        self, app: ASGIApp, games: GameServer, path: re.Pattern[str], find: Callable[[str], BrowserGame | None]
    ) -> None:
        self.app = app
        self.games = games
        self.path = path
        self.find = find

    def call_path(self, scope: Scope) -> re.Match[str] | None:
        """The match of a call's path, if the request is a call."""
        if scope["type"] == "http" and scope["method"] == "POST":
            return self.path.fullmatch(scope["path"])
        return None


def call_bodies(path: re.Pattern[str]) -> SmallerLimit:
    """The pages' calls (``path`` matches a call's path) as guard.BodyLimit bounds them: a body over
    :data:`MAX_CALL_BODY_BYTES` is refused (413) before it is read as JSON, and one that says so by its
    Content-Length before it is read at all."""
    refusal = f"a call's arguments are at most {MAX_ARGS_BYTES:,} bytes as JSON"

    def limit(scope: Scope) -> tuple[int, str] | None:
        if scope["method"] == "POST" and path.fullmatch(scope["path"]):
            return MAX_CALL_BODY_BYTES, refusal
        return None

    return limit


class FrameCalls(GamesMiddleware):
    """The calls of games at a frame rate, some eight a second for each player, answered here, before FastAPI's
    routing, dependency solving and body validation, which cost more than a frame of the game itself (a call beyond
    :data:`CALLS_IN_FLIGHT` before its body is read). Anything else, and a call that is not a well-formed one in a
    running game at a frame rate, goes on to the app as it came."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        match = self.call_path(scope)
        if match is None:
            await self.app(scope, receive, send)
            return
        message = await receive()  # the whole body: BodyLimit read it (and bounded it: call_bodies)
        game = self.find(match[1])
        if game is None or game.pace is None or not json_content(scope):
            await self.app(scope, replayed(message, receive), send)
            return
        if self.games.busy(game):
            await self.games.too_many()(scope, receive, send)
            return
        try:
            call = CallRequest.model_validate(orjson.loads(message.get("body", b"")))
        except (orjson.JSONDecodeError, ValidationError):  # the app says what is wrong with it
            await self.app(scope, replayed(message, receive), send)
            return
        response = await self.games.answer(game, call)
        await response(scope, receive, send)


class FramesFirst(GamesMiddleware):
    """The frames of games at a frame rate before any other request. The event loop answers a frame call (a call
    that :class:`FrameCalls` answers: a well-formed path of a running game at a frame rate with room for another
    call in flight) as soon as it comes; any other request waits its turn in a queue, and
    :data:`STARTS_PER_TURN` of them start in each turn of the loop. However many requests a hostile participant
    sends, the players' frames then wait for a few requests' work at most, not for all of them; those requests
    wait instead (connections, which the connection cap bounds, not the server's time). Outermost of the app's
    middleware: the guard's refusals wait their turn too."""

    def __init__(
        self, app: ASGIApp, games: GameServer, path: re.Pattern[str], find: Callable[[str], BrowserGame | None]
    ) -> None:
        super().__init__(app, games, path, find)
        self._waiting: deque[asyncio.Future[None]] = deque()
        self._admitting = False

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and not self._frame(scope):
            await self._turn()
        await self.app(scope, receive, send)

    def _frame(self, scope: Scope) -> bool:
        match = self.call_path(scope)
        game = self.find(match[1]) if match is not None else None
        return game is not None and game.pace is not None and not self.games.busy(game)

    async def _turn(self) -> None:
        """Wait until this request may start."""
        waiting = asyncio.get_running_loop().create_future()
        self._waiting.append(waiting)
        if not self._admitting:
            self._admitting = True
            asyncio.get_running_loop().call_soon(self._admit)
        await waiting

    def _admit(self) -> None:
        """Start the next :data:`STARTS_PER_TURN` requests, and come back in the loop's next turn if more wait."""
        started = 0
        while self._waiting and started < STARTS_PER_TURN:
            waiting = self._waiting.popleft()
            if not waiting.done():  # else its request was cancelled while it waited
                waiting.set_result(None)
                started += 1
        if self._waiting:
            asyncio.get_running_loop().call_soon(self._admit)
        else:
            self._admitting = False


def page_steps(steps: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The last of a game's steps that a play page embeds: :data:`PAGE_STEPS` at most, and no more than
    :data:`PAGE_LOG_BYTES` as JSON (the last step always), so that reloading a page costs the server little
    whatever was played (the whole log is in the episode)."""
    kept: list[dict[str, Any]] = []
    size = 0
    for step in reversed(steps[-PAGE_STEPS:]):
        size += len(orjson.dumps(step, default=str))
        if kept and size > PAGE_LOG_BYTES:
            break
        kept.append(step)
    return kept[::-1]


def free_bytes(folder: Path) -> int:
    """The bytes free on the disk of ``folder`` (of its nearest existing parent while it is not made yet)."""
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    return shutil.disk_usage(folder).free


def json_content(scope: Scope) -> bool:
    """Whether FastAPI would read the request's body as JSON (no Content-Type, or application/json or /...+json)."""
    kind = Headers(scope=scope).get("content-type", "").split(";")[0].strip().lower()
    return not kind or kind == "application/json" or (kind.startswith("application/") and kind.endswith("+json"))


def exploring(view: dict[str, Any] | None) -> bool:
    """Whether a game at a frame rate is in its world's exploring phase (autumn's ``interaction``), whose frames
    never end the game (the exploring phase ends in a test)."""
    return view is not None and view.get("phase") == "interaction"


def result_document(result: ToolResult, session: Session, written: str | None) -> dict[str, Any]:
    """What the play page shows of a result: the text and pictures the agent would get, never ``data``; the
    episode it was written to (when shown); the session's view."""
    return {
        "ok": result.ok,
        "text": result.text,
        "images": [f"data:{image.media_type};base64,{image.data_base64}" for image in result.images],
        "written": written,
        "view": session.last_view,
    }


def json_response(content: dict[str, Any]) -> Response:
    """``content`` as a JSON answer, written by orjson (a view of another type than JSON's is made plain first)."""
    try:
        body = orjson.dumps(content, option=orjson.OPT_SERIALIZE_NUMPY)
    except TypeError:
        body = orjson.dumps(json_safe(content))
    return Response(body, media_type="application/json")


def say_unsaved(names: list[str], where: Path) -> None:
    """Name on standard error the finished games that could not be written even when the server stopped. Said in
    the app's shutdown: after a SIGTERM, uvicorn raises the signal again once it has stopped, and the process ends
    before the code that started the server could say it."""
    if names:
        games = plural(len(names), "finished game")
        print(f"discogym serve: {games} could not be written to {where}: {', '.join(names)}", file=sys.stderr)


__all__ = [
    "HUMAN",
    "BrowserGame",
    "CallRequest",
    "FrameCalls",
    "FramesFirst",
    "GameServer",
    "GameSpec",
    "json_response",
    "page_steps",
    "say_unsaved",
]
