"""The participants' web app of a study (``discogym serve --study STUDY.yaml``), made to face the internet.

A participant reaches only their own pages: the entry link, consent, the instructions before each game, the game
in progress and the completion page, all under ``/p/SECRET`` (the secret is also kept in a cookie). Nothing of the
researcher's app is here: no runs, reports, replays or other games. People's episodes are written under the study
folder (``STUDY_DIR/SUITE``), one run folder per suite, which the researcher browses with ``discogym serve --runs
STUDY_DIR`` on 127.0.0.1.

What keeps the study safe with anonymous participants: every game is written when it ends, and kept and retried if
its file cannot be written (the page says when it is saved); idle games are written as abandoned, and games past
the study's time as ``game_time_limit``, by a watcher thread; a SIGTERM writes every running game (uvicorn's
shutdown waits at most :data:`~discogym.interfaces.web.guard.SERVER_LIMITS` ``timeout_graceful_shutdown`` seconds
for open connections); request bodies, connections and new participants per address are capped; games at a frame
rate are held to the pace, and the times between frames are written in the episode's runtime sidecar; the
harness's own tools cannot be called from a page; no report or replay is ever built here.
"""

import asyncio
import contextlib
import gc
import re
import secrets
import shutil
import threading
import time
from collections import Counter
from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
from fastapi import FastAPI, HTTPException, Request
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from fastapi.templating import Jinja2Templates
from pydantic import ValidationError
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import Headers
from starlette.types import ASGIApp, Receive, Scope, Send

from discogym import __version__
from discogym.core import ToolResult, UserError, get_suite
from discogym.core.model.jsonsafe import json_safe
from discogym.core.model.termination import Termination
from discogym.core.model.tools import UNREADABLE_TOOL
from discogym.core.running.session import ClientMistake, ExternalEpisodes, Session
from discogym.interfaces.web.app import (
    HUMAN,
    CallRequest,
    handle_refusals,
    result_document,
    say_unsaved,
    serve_screens,
)
from discogym.interfaces.web.browse import replay_steps_of
from discogym.interfaces.web.guard import allowed_hosts, guard, replayed
from discogym.interfaces.web.journal import JOURNAL_DIR, Journal, read_journal
from discogym.interfaces.web.pace import FramePace
from discogym.interfaces.web.study import (
    ParticipantRecord,
    Slot,
    Study,
    StudyFull,
    StudyUnavailable,
    ascii_id,
    platform_key,
    shortened,
)

HERE = Path(__file__).resolve().parent
COOKIE_PREFIX = "discogym_participant_"  # + the study's name: studies on one host keep their own cookies
PLATFORM_FIELDS = ("PROLIFIC_PID", "STUDY_ID", "SESSION_ID")
CALL_PATH = re.compile(r"/api/p/([^/]+)/call")  # as the route's path matches it
WATCH_SECONDS = 1.0  # how often the watcher looks for idle and overlong games and retries unsaved episodes
FROZEN_GAMES = 100  # the heap is kept frozen until this many games ended ...
FREE_SPACE_FLOOR = 128 * 1024 * 1024  # bytes free on the study's disk below which no new game starts
CALLS_IN_FLIGHT = 2  # a participant's calls answered at once (the page sends one at a time)
PAGE_STEPS = 200  # a play page shows the game's last steps, this many at most
MAX_GAME_ARGS_BYTES = 1024 * 1024  # what a game's calls may carry in all, as JSON (the suites' take a few KiB)
FROZEN_SECONDS = 600.0  # ... or for this long at most; then it is collected whole (see StudyGames.tend_collector)


@dataclass
class StudyGame:
    """A participant's game in progress."""

    number: int  # the participant's
    game_id: str  # the attempt's opaque id (the only name of the game outside the server and the researcher's files)
    session: Session
    slot: Slot
    journal: Journal
    started: float  # time.monotonic() at the start
    last_seen: float  # time.monotonic() of the last call
    pace: FramePace | None = None  # for a game at a frame rate
    args_bytes: int = 0  # what its calls' arguments took so far, as JSON
    lock: threading.Lock = field(default_factory=threading.Lock)
    frames: asyncio.Lock = field(default_factory=asyncio.Lock)  # a paced game's calls, in turn, each waiting its frame


class StudyGames:
    """Every participant's game in progress (at most one each, by participant number) and the hosts that write
    them."""

    def __init__(self, study: Study) -> None:
        self.study = study
        self._hosts: dict[tuple[str, str], ExternalEpisodes] = {}
        self._games: dict[int, StudyGame] = {}
        self._starting: dict[int, threading.Lock] = {}  # held while a participant's game starts or is booked
        self._kept_journals: list[tuple[StudyGame, Journal]] = []  # of ended games whose episode is not written yet
        self._lock = threading.Lock()
        self._ended_frozen = 0  # games that ended since the heap was last collected whole
        self._collected = time.monotonic()  # when that was
        self.in_flight: Counter[int] = Counter()  # calls being answered, by participant (touched on the event loop)

    def host(self, slot: Slot) -> ExternalEpisodes:
        with self._lock:
            key = (slot.suite, slot.split)
            if key not in self._hosts:
                out = self.study.folder / slot.suite
                self._hosts[key] = ExternalEpisodes(get_suite(slot.suite), out, agent=HUMAN, split=slot.split)
            return self._hosts[key]

    def game(self, number: int) -> StudyGame | None:
        with self._lock:
            return self._games.get(number)

    def _starting_lock(self, number: int) -> threading.Lock:
        with self._lock:
            return self._starting.setdefault(number, threading.Lock())

    def start(self, record: ParticipantRecord) -> StudyGame:
        """The participant's next assigned game, started (or the one already running: two "start" requests at
        once start one game)."""
        with self._starting_lock(record.number):
            running = self.game(record.number)
            if running is not None:
                return running
            if shutil.disk_usage(self.study.folder).free < FREE_SPACE_FLOOR:  # its episode could not be saved
                raise UserError("the server cannot save new games just now; please come back to this page later")
            game_id = secrets.token_urlsafe(12)
            slot = self.study.slots[self.study.begin(record.number, game_id)]  # the attempt counts from here
            return self._open(record.number, game_id, slot, calls=[])

    def _open(self, number: int, game_id: str, slot: Slot, calls: list[tuple[str, dict[str, Any]]]) -> StudyGame:
        """Start the game's session, play ``calls`` into it again (a game restored after a crash) and journal
        what follows."""
        options = {"mode": slot.pace} if slot.pace else {}
        session = self.host(slot).session(f"p{number:05d}", options)
        session.keep_views = True
        header = {"game": game_id, "participant": number, "suite": slot.suite, "split": slot.split, "task": slot.task}
        journal = Journal(self.study.folder / JOURNAL_DIR / f"{game_id}.jsonl", header)
        now = time.monotonic()
        game = StudyGame(number, game_id, session, slot, journal, started=now, last_seen=now)
        game.args_bytes = sum(len(orjson.dumps(args)) for _, args in calls)
        try:
            session.start(slot.task, slot.condition)
            for tool, args in calls:
                if session.playing:
                    session.call(tool, args)
        except ClientMistake:  # the environment failed (its episode is written as an error), or could not be written
            self._book(game)
            raise
        if slot.pace == "frame-rate":
            game.pace = FramePace.of_view(session.last_view)
        with self._lock:
            self._games[number] = game
        if not session.playing:  # a restored game whose last call ended it
            self._finish(game)
        return game

    def restore(self) -> None:
        """Go on with the games that were running when the server was killed: each is played again from its
        journal, its attempt still counted, for its participant to take up (or, left idle, written as abandoned
        with every call it had)."""
        for number, attempt in self.study.running():
            calls = read_journal(self.study.folder / JOURNAL_DIR / f"{attempt.game}.jsonl")[1]
            with contextlib.suppress(ClientMistake, UserError):
                self._open(number, attempt.game, self.study.slots[attempt.slot], calls)

    def call(self, game: StudyGame, tool: str, args: dict[str, Any]) -> ToolResult:
        """One call in the participant's game; a frame comes no sooner than the frame rate allows."""
        refuse_internal(tool)
        with game.lock:
            return self._call_locked(game, tool, args)

    def _call_locked(self, game: StudyGame, tool: str, args: dict[str, Any]) -> ToolResult:
        if not game.session.playing:
            raise UserError("the game is over")
        size = len(orjson.dumps(args))
        if game.args_bytes + size > MAX_GAME_ARGS_BYTES:
            raise UserError(f"this game's calls carried {MAX_GAME_ARGS_BYTES:,} bytes already: end the game")
        game.args_bytes += size
        if game.pace is not None:
            game.pace.wait()
            game.session.frame_intervals_s = game.pace.intervals
        try:
            result = game.session.call(tool, args)
            game.journal.record(tool, args)
        finally:
            game.last_seen = time.monotonic()
            if not game.session.playing:
                self._finish(game)
        return result

    async def call_paced(self, game: StudyGame, tool: str, args: dict[str, Any]) -> ToolResult:
        """One call in a game at a frame rate, from the event loop: the calls wait for their frames one at a time
        without holding a thread. A frame of a world being explored runs on the loop: it is small (half a
        millisecond on average), never ends the game, and a worker thread would cost more than the frame itself.
        Any other call (a test's frames and answers) may end the game, whose scoring and writing take some 0.1 s
        that no other player should wait for, and so does a frame whose game a thread holds (the page reloaded,
        the game ending): those run in a worker thread."""
        assert game.pace is not None
        refuse_internal(tool)
        async with game.frames:
            await game.pace.held()
            if exploring(game.session.last_view) and game.lock.acquire(blocking=False):
                try:
                    return self._call_locked(game, tool, args)
                finally:
                    game.lock.release()
            return await run_in_threadpool(self.call, game, tool, args)

    def end(self, game: StudyGame, termination: Termination, message: str) -> None:
        """End the game (the person's wish, or a limit of the study) and write it; nothing if it is over."""
        with game.lock:
            if game.session.playing:
                if termination is Termination.ABANDONED:
                    game.session.leave()
                else:
                    with contextlib.suppress(ClientMistake):
                        game.session.end(message, termination)
            self._finish(game)

    def _finish(self, game: StudyGame) -> None:
        """The game ended: book its attempt and free it (its episode is written, or kept until it can be)."""
        with self._starting_lock(game.number):  # a "start" waits until this game is booked: it never starts the
            with self._lock:  # same task again
                if self._games.get(game.number) is not game:
                    return
                del self._games[game.number]
                self._ended_frozen += 1
            self._book(game)

    def _book(self, game: StudyGame) -> None:
        ending = game.session.last_ending.value if game.session.last_ending is not None else "abandoned"
        self.study.played(game.game_id, game.session.written or "", ending, time.monotonic() - game.started)
        if self.saved(game):
            game.journal.close()
        else:  # kept, with its calls, until the episode is written
            game.journal.close(keep=True)
            with self._lock:
                self._kept_journals.append((game, game.journal))

    def saved(self, game: StudyGame) -> bool:
        written = game.session.written
        return written is not None and self.host(game.slot).saved(written)

    def watch(self) -> None:
        """Write idle games as abandoned and overlong ones as ``game_time_limit``; retry unsaved episodes; sync
        the journals."""
        now = time.monotonic()
        idle = self.study.file.idle_minutes * 60
        longest = self.study.file.minutes_per_game * 60
        with self._lock:
            running = list(self._games.values())
            hosts = list(self._hosts.values())
        for game in running:
            if now - game.started > longest:
                self.end(game, Termination.GAME_TIME_LIMIT, "the study's time for a game ran out")
            elif now - game.last_seen > idle:
                self.end(game, Termination.ABANDONED, "idle")
            else:
                with game.lock:
                    game.journal.sync()
        for host in hosts:
            host.retry_unsaved()
        with self._lock:
            kept, self._kept_journals = self._kept_journals, []
        for game, journal in kept:
            if self.saved(game):
                journal.path.unlink(missing_ok=True)
            else:
                with self._lock:
                    self._kept_journals.append((game, journal))

    def tend_collector(self) -> None:
        """Keep the cyclic garbage collector's full passes away from games at a frame rate. A full pass walks every
        object alive, and the logs of the games running are millions of them (some 30 a frame): it stopped every
        player for up to a second. While a game at a frame rate runs, what is alive is frozen (``gc.freeze``) every
        :data:`WATCH_SECONDS`, so that a pass walks only what is newer. Once none runs, or after
        :data:`FROZEN_GAMES` games ended or :data:`FROZEN_SECONDS` passed, the heap is unfrozen and collected whole,
        which frees the reference cycles of the games that ended meanwhile (an autumn world's program is one)."""
        now = time.monotonic()
        with self._lock:
            paced = any(game.pace is not None for game in self._games.values())
            due = self._ended_frozen >= FROZEN_GAMES or now - self._collected > FROZEN_SECONDS
            if not paced or due:
                self._ended_frozen, self._collected = 0, now
        if paced and not due:
            gc.freeze()
        elif gc.get_freeze_count():
            gc.unfreeze()
            gc.collect()

    def leave_all(self) -> list[str]:
        """The server is stopping: write every game still running as ``server_stopped`` (not the participant's
        doing); return the episodes that could not be written even then."""
        with self._lock:
            running = list(self._games.values())
            hosts = list(self._hosts.values())
        for game in running:
            self.end(game, Termination.SERVER_STOPPED, "the server stopped")
        return [name for host in hosts for name in host.retry_unsaved()]


def platform_ids(request: Request) -> dict[str, str]:
    """The ids an entry link carries: Prolific's three, or a plain ``id``; each ASCII (UserError otherwise)."""
    query = request.query_params
    if "PROLIFIC_PID" in query:
        return {name: ascii_id(query[name], name) for name in PLATFORM_FIELDS if name in query}
    if "id" in query:
        return {"id": ascii_id(query["id"], "id")}
    raise UserError("open the study from the link your study platform gave you")


def client_address(request: Request) -> str:
    """The participant's address (behind the reverse proxy, uvicorn takes it from X-Forwarded-For)."""
    return request.client.host if request.client is not None else "-"


def refuse_internal(tool: str) -> None:
    """A UserError for the harness's own tool, which no page may call."""
    if tool == UNREADABLE_TOOL:
        raise UserError(f"no tool {shortened(tool)}")


def exploring(view: dict[str, Any] | None) -> bool:
    """Whether a game at a frame rate is in its world's exploring phase (autumn's ``interaction``), whose frames
    never end the game (the exploring phase ends in a test)."""
    return view is not None and view.get("phase") == "interaction"


def json_response(content: dict[str, Any]) -> Response:
    """``content`` as a JSON answer, written by orjson (a view of another type than JSON's is made plain first)."""
    try:
        body = orjson.dumps(content, option=orjson.OPT_SERIALIZE_NUMPY)
    except TypeError:
        body = orjson.dumps(json_safe(content))
    return Response(body, media_type="application/json")


async def answer_call(games: StudyGames, game: StudyGame, call: CallRequest) -> Response:
    """The answer to one call in the participant's game (409 when it is refused, as every refusal; 429 beyond
    :data:`CALLS_IN_FLIGHT` calls of one participant at once, which would hold the server's connections)."""
    if games.in_flight[game.number] >= CALLS_IN_FLIGHT:
        message = f"at most {CALLS_IN_FLIGHT} calls at once: wait for an answer before the next call"
        return JSONResponse({"error": message}, status_code=429)
    games.in_flight[game.number] += 1
    try:
        return await _answer_call(games, game, call)
    finally:
        games.in_flight[game.number] -= 1
        if not games.in_flight[game.number]:
            del games.in_flight[game.number]


async def _answer_call(games: StudyGames, game: StudyGame, call: CallRequest) -> Response:
    try:
        if game.pace is not None:
            result = await games.call_paced(game, call.tool, call.args)
        else:
            result = await run_in_threadpool(games.call, game, call.tool, call.args)
    except (UserError, ClientMistake) as err:
        return JSONResponse({"error": str(err)}, status_code=409)
    over = not game.session.playing
    document = result_document(result, game.session, over, written=None)  # the episode's name stays unshown
    return json_response({**document, "saved": games.saved(game) if over else None})


class FrameCalls:
    """The calls of games at a frame rate, some eight a second for each player, answered before FastAPI's routing,
    dependency solving and body validation, which cost more than a frame of the game itself. Anything else, and a
    call that is not a well-formed one in a running game at a frame rate, goes on to the app as it came."""

    def __init__(self, app: ASGIApp, games: StudyGames) -> None:
        self.app = app
        self.games = games

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        match = CALL_PATH.fullmatch(scope["path"]) if scope["type"] == "http" and scope["method"] == "POST" else None
        number = self.games.study.number_of(match[1]) if match is not None else None
        game = self.games.game(number) if number is not None else None
        if game is None or game.pace is None or not json_content(scope):
            await self.app(scope, receive, send)
            return
        message = await receive()  # the whole body: BodyLimit read it
        try:
            call = CallRequest.model_validate(orjson.loads(message.get("body", b"")))
        except (orjson.JSONDecodeError, ValidationError):  # the app says what is wrong with it
            await self.app(scope, replayed(message, receive), send)
            return
        response = await answer_call(self.games, game, call)
        await response(scope, receive, send)


def json_content(scope: Scope) -> bool:
    """Whether FastAPI would read the request's body as JSON (no Content-Type, or application/json or /...+json)."""
    kind = Headers(scope=scope).get("content-type", "").split(";")[0].strip().lower()
    return not kind or kind == "application/json" or (kind.startswith("application/") and kind.endswith("+json"))


def create_study_app(study: Study, allowed: Iterable[str] = (), listen: str = "127.0.0.1") -> FastAPI:
    """The participants' app of ``study``, answering requests for the loopback names, ``listen`` and ``allowed``."""
    games = StudyGames(study)
    cookie = COOKIE_PREFIX + study.file.name
    stop_watching = threading.Event()

    def watcher() -> None:
        while not stop_watching.wait(WATCH_SECONDS):
            games.watch()
            games.tend_collector()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        games.restore()
        thread = threading.Thread(target=watcher, name="study-watcher", daemon=True)
        thread.start()
        yield
        stop_watching.set()
        thread.join()
        app.state.unsaved = games.leave_all()
        say_unsaved(app.state.unsaved, study.folder)
        gc.unfreeze()
        study.release()

    study.claim()  # one server per study folder

    app = FastAPI(
        title="discogym study", version=__version__, docs_url=None, redoc_url=None, openapi_url=None, lifespan=lifespan
    )
    app.state.games = games
    templates = Jinja2Templates(directory=HERE / "templates")
    app.mount("/static", StaticFiles(directory=HERE / "static"), name="static")
    app.add_middleware(FrameCalls, games=games)  # added first: inside the guard's checks
    guard(app, allowed_hosts(allowed, listen))

    def page(request: Request, name: str, status: int = 200, **context: Any) -> HTMLResponse:
        context = {"version": __version__, "status": status, "study_page": True, **context}
        return templates.TemplateResponse(request, name, context, status_code=status)

    def participant(secret: str) -> ParticipantRecord:
        record = study.by_secret(secret)
        if record is None:
            raise HTTPException(404, "no such participant: open the study from your own link")
        return record

    def remembered(response: Response, secret: str, request: Request) -> Response:
        secure = request.url.scheme == "https"
        response.set_cookie(cookie, secret, httponly=True, samesite="lax", secure=secure, path="/")
        return response

    handle_refusals(app, page)

    @app.exception_handler(StudyUnavailable)
    async def unavailable(request: Request, err: StudyUnavailable) -> Response:
        if request.url.path.startswith("/api/"):
            return JSONResponse({"error": str(err)}, status_code=503)
        return page(request, "error.html", status=503, message=str(err))

    @app.get("/", response_class=HTMLResponse)
    def home(request: Request) -> Response:
        secret = request.cookies.get(cookie, "")
        if secret and study.by_secret(secret) is not None:
            return RedirectResponse(f"/p/{secret}", status_code=303)
        return page(request, "study_welcome.html")

    @app.get("/enter")
    def enter(request: Request) -> Response:
        secret = request.cookies.get(cookie, "")
        known = study.by_secret(secret) if secret else None
        try:
            ids = platform_ids(request) if known is None or request.query_params else {}
            if known is not None and (not ids or platform_key(ids) == platform_key(known.platform_ids)):
                return RedirectResponse(f"/p/{secret}", status_code=303)  # this browser's participant, back again
            # on a shared browser another person's link enters that person, never the one before
            _, secret = study.enter(ids, client_address(request))
        except StudyFull as err:
            raise HTTPException(409, str(err)) from None
        except UserError as err:
            raise HTTPException(400, str(err)) from None
        return remembered(RedirectResponse(f"/p/{secret}", status_code=303), secret, request)

    @app.get("/p/{secret}", response_class=HTMLResponse)
    def participant_page(request: Request, secret: str) -> Response:
        record = participant(secret)
        response: Response
        game = games.game(record.number)
        if not record.consented:
            response = page(request, "study_consent.html", study=study.file, secret=secret)
        elif game is not None:
            response = play_page(request, secret, record, game)
        elif record.finished:
            code = study.completion(record)
            response = page(request, "study_done.html", study=study.file, record=record, code=code)
        else:
            number = len(record.attempts) + 1
            response = page(
                request, "study_next.html", study=study.file, secret=secret, number=number, of=len(record.assigned)
            )
        return response  # the cookie is set by the participant's own entry only: opening a link never adopts it

    def play_page(request: Request, secret: str, record: ParticipantRecord, game: StudyGame) -> HTMLResponse:
        with game.lock:
            session = game.session
            recorder = session.recorder
            context: dict[str, Any] = {
                "game": {  # nothing that names the task: its id would map to the answer in the public package
                    "suite": "",
                    "task": f"Game {len(record.played) + 1} of {len(record.assigned)}",
                    "condition": "",
                    "mode": game.slot.pace,
                    "participant": record.label,
                    "brief": recorder.brief if recorder is not None else "",
                    "over": not session.playing,
                    "written": None,
                },
                "token": "",
                "api": f"/api/p/{secret}",
                "next": f"/p/{secret}",
                "tools": [spec.model_dump() for spec in session.tools()],
                "images": [f"data:{i.media_type};base64,{i.data_base64}" for i in session.brief_images()],
                "history": replay_steps_of(recorder.events[-PAGE_STEPS:]) if recorder is not None else [],
                "view": session.last_view,
                "study": study.file,
            }
        return page(request, "play.html", **context)

    @app.post("/p/{secret}/consent")
    def consent(secret: str) -> RedirectResponse:
        try:
            study.consent(participant(secret))
        except StudyFull as err:
            raise HTTPException(409, str(err)) from None
        return RedirectResponse(f"/p/{secret}", status_code=303)

    @app.post("/p/{secret}/start")
    def start(secret: str) -> RedirectResponse:
        record = participant(secret)
        if not record.consented:
            raise HTTPException(409, "agree to take part first")
        try:
            games.start(record)
        except (UserError, ClientMistake) as err:
            raise HTTPException(409, str(err)) from None
        return RedirectResponse(f"/p/{secret}", status_code=303)

    def running(secret: str) -> StudyGame:
        game = games.game(participant(secret).number)
        if game is None:
            raise HTTPException(409, "no game is running: the game is over")
        return game

    @app.post("/api/p/{secret}/call")
    async def call(secret: str, request_body: CallRequest) -> Response:
        return await answer_call(games, running(secret), request_body)

    @app.post("/api/p/{secret}/end")
    def end(secret: str) -> dict[str, Any]:
        game = running(secret)
        games.end(game, Termination.AGENT_STOPPED, "the person ended the game")
        return {"over": True, "written": None, "saved": games.saved(game)}

    @app.get("/api/p/{secret}/saved")
    def saved(secret: str) -> dict[str, Any]:
        """Whether the participant's last game is written to disk."""
        record = participant(secret)
        if not record.played:
            return {"saved": None}
        last = record.played[-1]
        slot = study.slots[last.slot]
        return {"saved": games.host(slot).saved(last.episode)}

    serve_screens(app)
    return app


__all__ = ["StudyGames", "create_study_app"]
