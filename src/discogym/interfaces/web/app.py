"""The web app (``discogym serve``): people play any task in the browser, and anyone browses the runs.

Pages are rendered on the server (Jinja2); the play page and the episode replay use a little plain JavaScript
(``static/``), with no build step. The runs folder's pages are :mod:`~discogym.interfaces.web.runs_pages`; the games
are played on the game server both apps share (:mod:`~discogym.interfaces.web.games`). Requests from other sites are
kept out by :mod:`discogym.interfaces.web.guard` (Host and Origin checked, security headers).

A person's episode is recorded by the harness's own recorder (:mod:`discogym.core.running.session`), as agent
``human`` with the participant's id as its ``client`` option, scored and written under ``RUNS/web/SUITE``.
"""

import re
import secrets
import time
from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from fastapi import APIRouter, FastAPI, Form, HTTPException, Request
from fastapi.responses import HTMLResponse, RedirectResponse

from discogym.core import UserError, all_suites, get_suite
from discogym.core.reporting.report_tables import format_cell
from discogym.core.running.session import ClientMistake
from discogym.core.running.storage import RunDir
from discogym.core.terminal.console import plural
from discogym.interfaces.web.browse import replay_steps
from discogym.interfaces.web.games import (
    BrowserGame,
    FrameCalls,
    FramesFirst,
    GameServer,
    GameSpec,
    call_bodies,
    page_steps,
)
from discogym.interfaces.web.guard import allowed_hosts
from discogym.interfaces.web.runs_pages import RunsFolder, relative_to, runs_routes
from discogym.interfaces.web.site import Page, web_app
from discogym.interfaces.web.study import ascii_id

WEB_RUNS = "web"  # RUNS/web/SUITE holds the episodes people play here
PLAY_MODES = ("frame-rate", "turns")
IDLE_GAME_MINUTES = 30.0  # a game nobody asked about for this long is written as abandoned and forgotten
TEND_SECONDS = 5.0  # how often the idle games are looked for
CALL_PATH = re.compile(r"/api/play/([^/]+)/call")  # as the game server's route matches it


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


def play_routes(games: GameServer, folder: RunsFolder, page: Page) -> APIRouter:
    """Choosing a task, starting it, and its play page (its calls are the game server's routes)."""
    router = APIRouter()

    @router.get("/play", response_class=HTMLResponse)
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
        context: dict[str, Any] = {"suite": chosen, "split": split, "tasks": tasks, "modes": PLAY_MODES}
        return page(request, "choose.html", suites=all_suites(), **context)

    @router.post("/play")
    def start(
        suite: str = Form(),
        split: str = Form(),
        task: str = Form(),
        condition: str = Form(""),
        participant: str = Form(),
        mode: str = Form(""),
    ) -> RedirectResponse:
        token = secrets.token_urlsafe(16)
        try:
            spec = GameSpec(suite, split, task, condition or None, play_mode(suite, mode), participant_id(participant))
            games.open(token, lambda: spec)
        except (UserError, ClientMistake) as err:
            raise HTTPException(400, str(err)) from None
        return RedirectResponse(f"/play/{token}", status_code=303)

    @router.get("/play/{token}", response_class=HTMLResponse)
    def play(request: Request, token: str) -> HTMLResponse:
        game = find_game(games, token)
        context = games.play_context(game)
        if game.session.recorder is None and game.written is not None:  # over: the episode as written
            written = RunDir(folder.runs / WEB_RUNS / game.spec.suite).episodes_dir / game.written
            context["history"] = page_steps(replay_steps(folder.index.episode(written)))
        return page(request, "play.html", token=token, **context)

    return router


def find_game(games: GameServer, token: str) -> BrowserGame:
    """The game of ``token`` (running, or ended and not forgotten yet), seen now; else 404."""
    game = games.game(token)
    if game is None:
        raise HTTPException(404, "no such game (it ended when the server restarted, or was left idle)")
    game.last_seen = time.monotonic()
    return game


def create_app(
    runs: Path, allowed: Iterable[str] = (), listen: str = "127.0.0.1", *, compute_workers: int = 0
) -> FastAPI:
    """The app serving ``runs`` (a folder of run folders; people's games go to ``runs/web``) to requests for
    this machine's loopback names, the address ``listen`` and the host names ``allowed``; the games' heavy work
    computed in ``compute_workers`` processes (:class:`GameServer`)."""
    runs = runs.resolve()
    games = GameServer(
        runs / WEB_RUNS,
        idle_seconds=IDLE_GAME_MINUTES * 60,
        watch_seconds=TEND_SECONDS,
        compute_workers=compute_workers,
    )
    folder = RunsFolder(runs)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        async with games.serving(runs / WEB_RUNS):
            yield
        app.state.unsaved = games.unsaved

    def running(token: str) -> BrowserGame | None:
        return games.running(token)

    app, page = web_app(
        "discogym",
        lifespan,
        allowed_hosts(allowed, listen),
        inner=lambda app: app.add_middleware(FrameCalls, games=games, path=CALL_PATH, find=running),
        smaller=call_bodies(CALL_PATH),
        outer=lambda app: app.add_middleware(FramesFirst, games=games, path=CALL_PATH, find=running),
        filters={"cell": format_cell, "plural": plural, "relative": lambda text: relative_to(text, runs)},
        shown=lambda detail: relative_to(detail, runs),
    )
    app.include_router(play_routes(games, folder, page))
    app.include_router(games.router("/api/play", lambda token: find_game(games, token)))
    app.include_router(runs_routes(folder, page))
    return app


__all__ = ["create_app"]
