"""The participants' web app of a study (``discogym serve --study STUDY.yaml``), made to face the internet.

A participant reaches only their own pages: the entry link, consent, the instructions before each game, the game
in progress and the completion page, all under ``/p/SECRET`` (the secret is also kept in a cookie). Nothing of the
researcher's app is here: no runs, reports, replays or other games, and nothing that names a task. People's
episodes are written under the study folder (``STUDY_DIR/SUITE``), one run folder per suite, which the researcher
browses with ``discogym serve --runs STUDY_DIR`` on 127.0.0.1.

What keeps the study safe with anonymous participants (docs/web.md, "What a study guarantees"): the study's state
is a database (:mod:`~discogym.interfaces.web.study`) and one server serves it; every game's calls are journaled and
a killed server goes on with them; every game is written when it ends, and kept and retried if its file cannot be
written (the page says when it is saved); idle games are written as abandoned, and games past the study's time as
``game_time_limit``; a SIGTERM writes every running game as ``server_stopped`` (uvicorn's shutdown waits at most
:data:`~discogym.interfaces.web.guard.SERVER_LIMITS` ``timeout_graceful_shutdown`` seconds for open connections);
request bodies, calls, connections and new participants per address group are capped; games at a frame rate are
held to the pace (:mod:`~discogym.interfaces.web.games`); no report or replay is ever built here.
"""

import contextlib
import re
import secrets
from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager
from typing import Any

from fastapi import APIRouter, FastAPI, HTTPException, Request
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response

from discogym.core import UserError
from discogym.core.running.session import ClientMistake
from discogym.interfaces.web.games import BrowserGame, FrameCalls, FramesFirst, GameServer, GameSpec, call_bodies
from discogym.interfaces.web.guard import allowed_hosts
from discogym.interfaces.web.journal import JOURNAL_DIR, read_journal
from discogym.interfaces.web.site import Page, web_app
from discogym.interfaces.web.study import (
    Attempt,
    ParticipantRecord,
    Slot,
    Study,
    StudyFull,
    StudyUnavailable,
    ascii_id,
    platform_key,
)

COOKIE_PREFIX = "discogym_participant_"  # + the study's name: studies on one host keep their own cookies
PLATFORM_FIELDS = ("PROLIFIC_PID", "STUDY_ID", "SESSION_ID")
CALL_PATH = re.compile(r"/api/p/([^/]+)/call")  # as the game server's route matches it
WATCH_SECONDS = 1.0  # how often the watcher looks for idle and overlong games and retries unsaved episodes


class StudyGames:
    """The study's games on the game server, one at a time per participant (keyed by their number): each an
    attempt booked in the study's database from its start to its end, and journaled."""

    def __init__(self, study: Study, compute_workers: int = 0) -> None:
        self.study = study
        self.server = GameServer(
            study.folder,
            idle_seconds=study.file.idle_minutes * 60,
            longest_seconds=study.file.minutes_per_game * 60,
            journals=study.folder / JOURNAL_DIR,
            on_end=self._book,
            show_episodes=False,
            watch_seconds=WATCH_SECONDS,
            compute_workers=compute_workers,
        )

    def running(self, number: int) -> BrowserGame | None:
        return self.server.running(str(number))

    def seen_playing(self, secret: str) -> BrowserGame | None:
        """The game running for the participant whose secret is ``secret``, if the study has seen that secret
        before (a running game's player has: their page looked it up); never asks the database (FramesFirst and
        FrameCalls ask on the event loop; a call they pass on finds its participant through the app's route)."""
        number = self.study.seen_number(secret)
        return None if number is None else self.running(number)

    def start(self, record: ParticipantRecord) -> BrowserGame:
        """The participant's next assigned game, started and its attempt booked (or the one already running)."""
        game_id = secrets.token_urlsafe(12)

        def next_game() -> GameSpec:
            return game_spec(record.number, self.study.slots[self.study.begin(record.number, game_id)], game_id)

        return self.server.open(str(record.number), next_game)

    def restore(self) -> None:
        """Go on with the games that were running when the server was killed: each is played again from its
        journal, its attempt still counted, for its participant to take up (or, left idle, written as abandoned
        with every call it had)."""
        for number, attempt in self.study.running():
            with contextlib.suppress(ClientMistake, UserError):
                self._restore(number, attempt)

    def _restore(self, number: int, attempt: Attempt) -> None:
        calls = read_journal(self.study.folder / JOURNAL_DIR / f"{attempt.game}.jsonl")[1]
        spec = game_spec(number, self.study.slots[attempt.slot], attempt.game)
        self.server.open(str(number), lambda: spec, calls)

    def _book(self, game: BrowserGame) -> None:
        self.study.played(game.spec.game_id, game.written or "", game.ending.value, game.seconds)


def game_spec(number: int, slot: Slot, game_id: str) -> GameSpec:
    return GameSpec(slot.suite, slot.split, slot.task, slot.condition, slot.pace, f"p{number:05d}", game_id)


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


def participant_of(study: Study, secret: str) -> ParticipantRecord:
    """The participant whose secret is ``secret``, or 404."""
    record = study.by_secret(secret)
    if record is None:
        raise HTTPException(404, "no such participant: open the study from your own link")
    return record


def participant_routes(games: StudyGames, page: Page) -> APIRouter:
    """A participant's pages: the entry link, consent, the page before each game, the game, the end."""
    router = APIRouter()
    study = games.study
    cookie = COOKIE_PREFIX + study.file.name

    def participant(secret: str) -> ParticipantRecord:
        return participant_of(study, secret)

    @router.get("/", response_class=HTMLResponse)
    def home(request: Request) -> Response:
        secret = request.cookies.get(cookie, "")
        if secret and study.by_secret(secret) is not None:
            return RedirectResponse(f"/p/{secret}", status_code=303)
        return page(request, "study_welcome.html")

    @router.get("/enter")
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
        response = RedirectResponse(f"/p/{secret}", status_code=303)
        secure = request.url.scheme == "https"
        response.set_cookie(cookie, secret, httponly=True, samesite="lax", secure=secure, path="/")
        return response  # the cookie is set here only: opening another's link never adopts it

    @router.get("/p/{secret}", response_class=HTMLResponse)
    def participant_page(request: Request, secret: str) -> Response:
        record = participant(secret)
        if not games.server.pages.allow(str(record.number)):
            raise HTTPException(429, "this page was loaded too often: wait a few seconds, then load it again")
        game = games.running(record.number)
        if not record.consented:
            return page(request, "study_consent.html", study=study.file, secret=secret)
        if game is not None:
            number = f"Game {len(record.played) + 1} of {len(record.assigned)}"  # never the task: its id maps to
            context = games.server.play_context(game, suite="", task=number, condition="")  # the answer in the
            api: dict[str, Any] = {"api": f"/api/p/{secret}", "next": f"/p/{secret}", "token": ""}  # public package
            return page(request, "play.html", study=study.file, **api, **context)
        if record.finished:
            code = study.completion(record)
            return page(request, "study_done.html", study=study.file, record=record, code=code)
        number_next: dict[str, Any] = {"number": len(record.attempts) + 1, "of": len(record.assigned)}
        return page(request, "study_next.html", study=study.file, secret=secret, **number_next)

    @router.post("/p/{secret}/consent")
    def consent(secret: str) -> RedirectResponse:
        try:
            study.consent(participant(secret))
        except StudyFull as err:
            raise HTTPException(409, str(err)) from None
        return RedirectResponse(f"/p/{secret}", status_code=303)

    @router.post("/p/{secret}/start")
    def start(secret: str) -> RedirectResponse:
        record = participant(secret)
        if not record.consented:
            raise HTTPException(409, "agree to take part first")
        try:
            games.start(record)
        except (UserError, ClientMistake) as err:
            raise HTTPException(409, str(err)) from None
        return RedirectResponse(f"/p/{secret}", status_code=303)

    @router.get("/api/p/{secret}/saved")
    def saved(secret: str) -> dict[str, Any]:
        """Whether the participant's last game is written to disk."""
        played = participant(secret).played
        if not played:
            return {"saved": None}
        slot = study.slots[played[-1].slot]
        return {"saved": games.server.host(slot.suite, slot.split).saved(played[-1].episode)}

    return router


def create_study_app(
    study: Study, allowed: Iterable[str] = (), listen: str = "127.0.0.1", *, compute_workers: int = 0
) -> FastAPI:
    """The participants' app of ``study``, answering requests for the loopback names, ``listen`` and ``allowed``,
    the games' heavy work computed in ``compute_workers`` processes (:class:`GameServer`); a UserError when
    another server serves the study's folder."""
    games = StudyGames(study, compute_workers)
    study.claim()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        games.restore()
        async with games.server.serving(study.folder):
            yield
        app.state.unsaved = games.server.unsaved
        study.release()

    def running(secret: str) -> BrowserGame:
        participant_of(study, secret)  # looked up: seen from now on
        game = games.seen_playing(secret)
        if game is None:
            raise HTTPException(409, "no game is running: the game is over")
        return game

    app, page = web_app(
        "discogym study",
        lifespan,
        allowed_hosts(allowed, listen),
        inner=lambda app: app.add_middleware(FrameCalls, games=games.server, path=CALL_PATH, find=games.seen_playing),
        smaller=call_bodies(CALL_PATH),
        outer=lambda app: app.add_middleware(FramesFirst, games=games.server, path=CALL_PATH, find=games.seen_playing),
        study_page=True,
    )

    @app.exception_handler(StudyUnavailable)
    async def unavailable(request: Request, err: StudyUnavailable) -> Response:
        if request.url.path.startswith("/api/"):
            return JSONResponse({"error": str(err)}, status_code=503)
        return page(request, "error.html", status=503, message=str(err))

    app.include_router(games.server.router("/api/p", running))
    app.include_router(participant_routes(games, page))
    return app


__all__ = ["StudyGames", "create_study_app"]
