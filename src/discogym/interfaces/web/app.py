"""The web app (``discogym serve``): people play any task in the browser, and anyone browses the runs.

Pages are rendered on the server (Jinja2); the play page and the episode replay use a little plain JavaScript
(``static/``), with no build step. Every file the app reads is inside the runs folder it was given: run folders
and episode names are checked against what the folder holds, never joined blindly onto a path, and a file whose
real path (links followed) is outside the folder is not read. Requests from other sites are kept out by
:mod:`discogym.interfaces.web.guard` (Host and Origin checked, security headers).

A person's episode is recorded by the harness's own recorder (:mod:`discogym.core.running.session`), as agent
``human`` with the participant's id as its ``client`` option, scored and written under ``RUNS/web/SUITE``.
"""

import asyncio
import secrets
import sys
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

import orjson
from fastapi import FastAPI, Form, HTTPException, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, HTMLResponse, JSONResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from fastapi.templating import Jinja2Templates
from pydantic import BaseModel, Field, ValidationError, field_validator
from starlette.exceptions import HTTPException as StarletteHTTPException

from discogym import __version__
from discogym.core import Episode, ToolResult, UserError, all_suites, get_suite
from discogym.core.model.tools import UNREADABLE_TOOL
from discogym.core.reporting.report_tables import format_cell
from discogym.core.reporting.run_report import find_runs
from discogym.core.running.session import ClientMistake, ExternalEpisodes, Session
from discogym.core.running.storage import RunDir
from discogym.core.terminal.console import plural
from discogym.interfaces.web.browse import (
    EpisodeIndex,
    EpisodeRow,
    ReportCache,
    ViewCache,
    replay_steps,
    replay_steps_of,
)
from discogym.interfaces.web.dashboard import is_study_folder, study_dashboard
from discogym.interfaces.web.guard import allowed_hosts, guard
from discogym.interfaces.web.pace import FramePace
from discogym.interfaces.web.study import ascii_id, shortened

HERE = Path(__file__).resolve().parent
HUMAN = "human"
WEB_RUNS = "web"  # RUNS/web/SUITE holds the episodes people play here
PLAY_MODES = ("frame-rate", "turns")


# The most a call's arguments may take as JSON. Every suite's real actions are far shorter (a click, a move, a
# block, an experiment's few parameters); a longer one is refused before it reaches a game or its log.
MAX_ARGS_BYTES = 16 * 1024


IDLE_GAME_MINUTES = 30.0  # a game nobody asked about for this long is written as abandoned and forgotten
TEND_SECONDS = 5.0  # how often the idle games are looked for


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


@dataclass
class Game:
    """A person's game in progress: the session that records it and what the page shows."""

    session: Session
    suite: str
    task: str
    condition: str
    participant: str
    brief: str
    mode: str | None = None  # "frame-rate" or "turns", for suites played at a frame rate
    pace: FramePace | None = None  # the server's pace of a game at the frame rate
    over: bool = False
    written: str | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)  # one call or end at a time (Session is not
    # safe for concurrent use; a page's frame-rate calls and its End button may arrive together)
    last_seen: float = field(default_factory=time.monotonic)  # the last request about it (page, call or end)


class Games:
    """The games in progress, by an unguessable token; one recorder host per (suite, split)."""

    def __init__(self, runs: Path) -> None:
        self.runs = runs
        self._hosts: dict[tuple[str, str], ExternalEpisodes] = {}
        self._games: dict[str, Game] = {}
        self._lock = threading.Lock()

    def host(self, suite: str, split: str) -> ExternalEpisodes:
        with self._lock:
            key = (suite, split)
            if key not in self._hosts:
                out = self.runs / WEB_RUNS / suite
                self._hosts[key] = ExternalEpisodes(get_suite(suite), out, agent=HUMAN, split=split)
            return self._hosts[key]

    def start(self, suite: str, split: str, task: str, condition: str, participant: str, mode: str = "") -> str:
        chosen_mode = play_mode(suite, mode)
        options = {"mode": chosen_mode} if chosen_mode else {}
        session = self.host(suite, split).session(participant, options)
        session.keep_views = True
        started = session.start(task, condition or None)
        token = secrets.token_urlsafe(16)
        game = Game(session, suite, started.task, started.condition, participant, started.brief, chosen_mode)
        if chosen_mode == "frame-rate":
            game.pace = FramePace.of_view(session.last_view)
        with self._lock:
            self._games[token] = game
        return token

    def leave_all(self) -> list[str]:
        """The server is stopping: write every game still running as ``abandoned`` (scored from its log); return
        the finished games that could not be written even now (kept since a write error)."""
        with self._lock:
            running = [game for game in self._games.values() if not game.over]
            hosts = list(self._hosts.values())
        for game in running:
            with game.lock:
                if not game.over:
                    game.written, game.over = game.session.leave(), True
        return [name for host in hosts for name in host.retry_unsaved()]

    def get(self, token: str) -> Game:
        game = self._games.get(token)
        if game is None:
            raise HTTPException(404, "no such game (it ended when the server restarted, or was left idle)")
        game.last_seen = time.monotonic()
        return game

    def tend(self, idle_seconds: float) -> None:
        """Write every game left idle for ``idle_seconds`` as ``abandoned`` (scored from its log) and forget it, as
        every ended game idle as long: a server that people leave games on does not keep them all."""
        now = time.monotonic()
        with self._lock:
            idle = [(token, game) for token, game in self._games.items() if now - game.last_seen > idle_seconds]
        for token, game in idle:
            with game.lock:
                if not game.over:
                    game.written, game.over = game.session.leave(), True
            with self._lock:
                self._games.pop(token, None)


def plot_files(folder: Path, runs: Path) -> list[Path]:
    """The PNG plots ``discogym report`` drew into the run's ``plots`` folder (those whose real path, links
    followed, is inside ``runs``)."""
    plots = folder / "plots"
    return sorted(path for path in plots.glob("*.png") if inside(path, runs)) if plots.is_dir() else []


def inside(path: Path, runs: Path) -> bool:
    """True when ``path``, its symbolic links followed, is inside the (resolved) runs folder."""
    try:
        return path.resolve(strict=True).is_relative_to(runs)
    except (OSError, RuntimeError):  # missing, or a loop of links
        return False


def relative_to(text: object, runs: Path) -> str:
    """``text`` with the runs folder's absolute path left out of every path it names (pages show no absolute
    path: ``RUNS/x`` as ``x``)."""
    return str(text).replace(f"{runs}/", "").replace(str(runs), ".")


def damage(name: str, err: ValidationError) -> str:
    """One line saying why the episode file ``name`` did not validate (never the file's content)."""
    first = err.errors()[0]
    if first["type"] == "json_invalid":
        return f"episode file {name} is damaged: it is not valid JSON"
    where = ".".join(map(str, first["loc"])) or "the file"
    return f"episode file {name} is damaged: not an episode ({err.error_count()} problems; {where}: {first['msg']})"


def play_mode(suite: str, asked: str) -> str | None:
    """The mode a game of ``suite`` is played in: for suites played at a frame rate, ``frame-rate`` (the default)
    or ``turns``; None for the others, which are always played turn by turn."""
    if not get_suite(suite).frame_rate_play:
        return None
    if asked not in ("", *PLAY_MODES):
        raise UserError(f"mode is one of {', '.join(PLAY_MODES)} (got {asked!r})")
    return asked or PLAY_MODES[0]


def participant_id(text: str) -> str:
    """A participant id: 1 to 64 ASCII letters, digits, ``-`` and ``_`` (look-alikes of other scripts refused)."""
    return ascii_id(text.strip(), "a participant id")


def result_document(result: ToolResult, session: Session, over: bool, written: str | None) -> dict[str, Any]:
    """What the play page shows of a result: the text and pictures the agent would get, never ``data``; whether
    the game is over and the episode it was written to; the session's view."""
    return {
        "ok": result.ok,
        "text": result.text,
        "images": [f"data:{image.media_type};base64,{image.data_base64}" for image in result.images],
        "over": over,
        "written": written,
        "view": session.last_view,
    }


def handle_refusals(app: FastAPI, page: Callable[..., HTMLResponse], shown: Callable[[object], str] = str) -> None:
    """Every refusal as one clear message (``shown`` of its detail): JSON for the pages' calls (``/api/``), an error
    page otherwise; a malformed request says what is wrong in it, shortened."""

    @app.exception_handler(StarletteHTTPException)
    async def refused(request: Request, err: StarletteHTTPException) -> Response:
        message = shown(err.detail)
        if request.url.path.startswith("/api/"):
            return JSONResponse({"error": message}, status_code=err.status_code)
        return page(request, "error.html", status=err.status_code, message=message)

    @app.exception_handler(RequestValidationError)
    async def malformed(request: Request, err: RequestValidationError) -> Response:
        problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in err.errors())
        return await refused(request, StarletteHTTPException(422, f"malformed request: {shortened(problems, 300)}"))


def serve_screens(app: FastAPI) -> None:
    """Serve each suite's screen scripts at ``/screens/KIND.js`` (:meth:`Suite.web_screens`)."""

    @app.get("/screens/{kind}.js")
    def screen(kind: str) -> FileResponse:
        for suite in all_suites():
            script = suite.web_screens().get(kind)
            if script is not None:
                return FileResponse(script, media_type="text/javascript")
        raise HTTPException(404, f"no suite draws a screen of kind {shortened(kind)}")


def say_unsaved(names: list[str], where: Path) -> None:
    """Name on standard error the finished games that could not be written even when the server stopped. Said in
    the app's shutdown: after a SIGTERM, uvicorn raises the signal again once it has stopped, and the process ends
    before the code that started the server could say it."""
    if names:
        games = plural(len(names), "finished game")
        print(f"discogym serve: {games} could not be written to {where}: {', '.join(names)}", file=sys.stderr)


def create_app(runs: Path, allowed: Iterable[str] = (), listen: str = "127.0.0.1") -> FastAPI:
    """The app serving ``runs`` (a folder of run folders; people's games go to ``runs/web``) to requests for
    this machine's loopback names, the address ``listen`` and the host names ``allowed``."""
    runs = runs.resolve()
    hosts = allowed_hosts(allowed, listen)
    games = Games(runs)

    async def tend_games() -> None:
        while True:
            await asyncio.sleep(TEND_SECONDS)
            await run_in_threadpool(games.tend, IDLE_GAME_MINUTES * 60)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        tending = asyncio.create_task(tend_games())
        yield
        tending.cancel()
        app.state.unsaved = games.leave_all()
        say_unsaved(app.state.unsaved, runs / "web")

    app = FastAPI(
        title="discogym", version=__version__, docs_url=None, redoc_url=None, openapi_url=None, lifespan=lifespan
    )
    templates = Jinja2Templates(directory=HERE / "templates")
    templates.env.filters["cell"] = format_cell
    templates.env.filters["plural"] = plural  # {{ count | plural("person", "people") }}: never "1 people"
    templates.env.filters["relative"] = lambda text: relative_to(text, runs)
    app.mount("/static", StaticFiles(directory=HERE / "static"), name="static")
    guard(app, hosts)
    index = EpisodeIndex()
    reports = ReportCache()
    views = ViewCache()

    def page(request: Request, name: str, status: int = 200, **context: Any) -> HTMLResponse:
        context = {"version": __version__, "status": status, **context}
        return templates.TemplateResponse(request, name, context, status_code=status)

    def run_folder(run: str) -> Path:
        """The run folder named ``run`` (a path relative to the runs folder, as listed), or 404."""
        for folder in find_runs(runs) if runs.is_dir() else []:
            if folder.relative_to(runs).as_posix() == run and inside(folder, runs):
                return folder
        raise HTTPException(404, f"no run {run!r} in the runs folder")

    handle_refusals(app, page, lambda detail: relative_to(detail, runs))

    @app.get("/", response_class=HTMLResponse)
    def home(request: Request) -> HTMLResponse:
        folders = find_runs(runs) if runs.is_dir() else []
        listed = [(folder.relative_to(runs).as_posix(), len(RunDir(folder).episode_paths())) for folder in folders]
        return page(request, "home.html", runs=listed, root=runs.name, suites=all_suites(), study=is_study_folder(runs))

    @app.get("/study", response_class=HTMLResponse)
    def study_page(request: Request) -> HTMLResponse:
        """The dashboard of the study whose folder is the runs folder (``discogym serve --runs STUDY_DIR``)."""
        if not is_study_folder(runs):
            raise HTTPException(404, "the runs folder is not a study's folder (discogym serve --study ... --out)")
        try:
            shown = study_dashboard(runs)
        except UserError as err:
            raise HTTPException(422, str(err)) from None
        return page(request, "study_dashboard.html", **shown)

    @app.get("/play", response_class=HTMLResponse)
    def choose(request: Request, suite: str = "", split: str = "") -> HTMLResponse:
        chosen = None
        tasks: list[Any] = []
        if suite:
            try:
                chosen = get_suite(suite)
                split = split or chosen.splits()[0]
                tasks = chosen.tasks(split)
            except UserError as err:
                raise HTTPException(404, str(err)) from None
        return page(
            request, "choose.html", suites=all_suites(), suite=chosen, split=split, tasks=tasks, modes=PLAY_MODES
        )

    @app.post("/play")
    def start(
        suite: str = Form(),
        split: str = Form(),
        task: str = Form(),
        condition: str = Form(""),
        participant: str = Form(),
        mode: str = Form(""),
    ) -> RedirectResponse:
        try:
            token = games.start(suite, split, task, condition, participant_id(participant), mode)
        except (UserError, ClientMistake) as err:
            raise HTTPException(400, str(err)) from None
        return RedirectResponse(f"/play/{token}", status_code=303)

    @app.get("/play/{token}", response_class=HTMLResponse)
    def play(request: Request, token: str) -> HTMLResponse:
        game = games.get(token)
        with game.lock:  # the game as it is between calls
            tools = [spec.model_dump() for spec in game.session.tools()]
            images = [f"data:{i.media_type};base64,{i.data_base64}" for i in game.session.brief_images()]
            recorder = game.session.recorder
            history = replay_steps_of(recorder.events) if recorder is not None else []
            if recorder is None and game.written is not None:  # over: the episode as written
                written = RunDir(runs / WEB_RUNS / game.suite).episodes_dir / game.written
                history = replay_steps(index.episode(written))
            view = game.session.last_view
            return page(
                request, "play.html", game=game, token=token, tools=tools, images=images, history=history, view=view
            )

    @app.post("/api/play/{token}/call")
    def call(token: str, request_body: CallRequest) -> dict[str, Any]:
        game = games.get(token)
        with game.lock:
            if game.over:
                raise HTTPException(409, f"the game is over; its episode is {game.written}")
            if request_body.tool == UNREADABLE_TOOL:  # the harness's own: its text would be logged as the env's
                raise HTTPException(400, f"no tool {shortened(request_body.tool)}")
            if game.pace is not None:
                game.pace.wait()
                game.session.frame_intervals_s = game.pace.intervals
            try:
                result = game.session.call(request_body.tool, request_body.args)
            except ClientMistake as err:
                game.over = True
                raise HTTPException(409, str(err)) from None
            if not game.session.playing:
                game.over, game.written = True, game.session.written
            return result_document(result, game.session, game.over, game.written)

    @app.post("/api/play/{token}/end")
    def end(token: str) -> dict[str, Any]:
        game = games.get(token)
        with game.lock:
            if not game.over:
                try:
                    game.written = game.session.end("the person ended the game")
                except ClientMistake as err:  # e.g. the episode could not be written: abandoned
                    raise HTTPException(409, str(err)) from None
                finally:
                    game.over = True
            return {"over": True, "written": game.written}

    def episode_path(run: str, stem: str) -> Path:
        """The file of the run's episode ``stem`` (as listed), or 404."""
        run_dir = RunDir(run_folder(run))
        path = run_dir.episodes_dir / f"{stem}.json"
        if path not in run_dir.episode_paths() or not inside(path, runs):
            raise HTTPException(404, f"run {run!r} has no episode {stem!r}")
        return path

    def readable_episode(run: str, stem: str) -> tuple[Path, Episode]:
        """The run's episode ``stem`` and its file, or 404, or 422 saying in one line why the file is damaged."""
        path = episode_path(run, stem)
        try:
            return path, index.episode(path)
        except ValidationError as err:
            raise HTTPException(422, damage(path.name, err)) from None
        except OSError as err:
            raise HTTPException(422, f"episode file {path.name} cannot be read: {err.strerror or err}") from None

    @app.get("/runs/{run:path}/episodes/{stem}", response_class=HTMLResponse)
    def episode(request: Request, run: str, stem: str) -> HTMLResponse:
        _, loaded = readable_episode(run, stem)
        views_url = f"/api/runs/{quote(run)}/episodes/{quote(stem)}/views"
        return page(
            request, "episode.html", run=run, stem=stem, episode=loaded, steps=replay_steps(loaded), views_url=views_url
        )

    @app.get("/api/runs/{run:path}/episodes/{stem}/views")
    def episode_views(run: str, stem: str) -> dict[str, Any]:
        """The view at the start and after each step, for the replay's screen (fetched after the page shows)."""
        path, loaded = readable_episode(run, stem)
        try:
            return views.views(path, loaded)
        except UserError as err:  # e.g. a suite this installation does not have
            raise HTTPException(404, str(err)) from None

    serve_screens(app)

    @app.get("/runs/{run:path}/plots/{name}")
    def plot(run: str, name: str) -> FileResponse:
        plots = {path.name: path for path in plot_files(run_folder(run), runs)}
        if name not in plots:
            raise HTTPException(404, f"run {run!r} has no plot {name!r}")
        return FileResponse(plots[name], media_type="image/png")

    @app.get("/report/{run:path}", response_class=HTMLResponse)
    def report(request: Request, run: str) -> HTMLResponse:
        folder = run_folder(run)
        try:
            built = reports.report(folder)
        except UserError as err:
            raise HTTPException(404, str(err)) from None
        plots = [path.name for path in plot_files(folder, runs)]
        return page(request, "report.html", run=run, report=built, plots=plots)

    @app.get("/runs/{run:path}", response_class=HTMLResponse)
    def run_page(
        request: Request, run: str, suite: str = "", task: str = "", agent: str = "", model: str = "", outcome: str = ""
    ) -> HTMLResponse:
        damaged: list[str] = []
        rows = index.rows(RunDir(run_folder(run)), damaged)
        wanted = {"suite": suite, "task": task, "agent": agent, "model": model, "outcome": outcome}
        shown = [row for row in rows if row.matches(wanted)]
        choices = {name: sorted({str(getattr(row, name)) for row in rows}) for name in wanted}
        return page(
            request, "run.html", run=run, rows=shown, total=len(rows), wanted=wanted, choices=choices, damaged=damaged
        )

    return app


__all__ = ["EpisodeRow", "create_app"]
