"""A bounded load test of a study served to anonymous participants (``discogym serve --study``) on 127.0.0.1.

A study of 100 games for the players (60 autumn tasks at the frame rate; 40 turn-based: 15 crafting, 15 redstone,
10 petri) and 3 for the attacker (autumn at the frame rate), one person per task and one task per person, is served
by the real server (``python -m discogym serve``) in its own process. 100 players enter, consent and start the game
they are given, spread over two load processes (asyncio, one kept-alive HTTP/1.1 connection each, like a browser),
while an attacker in a third process tries everything it can reach as fast as the server answers. At the deadline
the players end their games, the server is stopped with SIGTERM and the study folder is checked.

- Frame-rate players (whoever is given an autumn game) do what the grid screen (``screens/grid.js``) does: a frame
  call every 1/8 s (the view's ``frame_rate``) on a fixed clock, a tick skipped while a call is in flight, ``noop``
  most frames and an arrow or a click now and then. Measured: each call's latency, the time between consecutive
  frame answers (a player's p95 frames/s is 1 / its p95 interval), the frames answered in each sliding 1-second
  window, and the intervals the server itself wrote in the episodes' runtime sidecars. A player stops at the first
  answer that is not 200 (and counts as failing).
- Turn players (crafting, redstone, petri) make a call that is valid in every task of their suite every 1.5 to
  2.5 s (think time): crafting ``search`` or ``think``, redstone ``get_block_state`` or ``scan_redstone_area``,
  petri ``experiment`` or ``probe`` with a candidate parameter moved off its control (a simulation each, in the
  server's worker process), until the deadline or until their game ends by itself (crafting allows 30 steps,
  petri 40). A player who ended their game is shown the study's ``incomplete_code`` (no
  test answered), one whose game ended by itself the completion code; each page is checked for its code.
- The attacker's three gamers (``hostile0001`` to ``hostile0003``) enter and consent before anyone else, one after
  another, so the server's assignment gives them known slots, and the study's slots are ordered so that those are
  the 3 extra autumn tasks (:func:`study_document`): no player's task is taken and every player still gets one of
  the 100. Once every player has started, the gamers start their games and attack from inside them (the moves of
  issue 46's security review), until the deadline, then end them:

  - N3, the huge log: calls with a 1 MB action (over the 16 KiB cap on a call's arguments: refused with 413 by
    its Content-Length, before the body is read; a client still sending it may find the connection closed
    instead), each followed by one with a 16,000-character action (under the cap: taken, refused by the game and
    logged, the most a call can add to the log), while another connection reloads the game's own play page
    (/p/SECRET, which shows the last 256 KiB of the log) as fast as it comes;
  - N5, the connection cap: bursts of 600 frame calls (``--burst``) at once, each on a connection of its own, all
    opened before any is sent, every 2 s: a participant's calls beyond two in flight are answered 429, and a
    connection opened while the server holds 512 is answered 503 and closed (``heads.BoundedHeads``; never a request
    on a connection already open: the players' are not touched), counted apart as refused at the cap;
  - N11, the masked-frame slider: the world driven to its test with ``go_to_test`` (the masked-frame test with the
    most frames among the spare tasks), then ``show_frame`` over every frame and back, two calls in flight.

  ``--skip MOVE`` leaves a move out (``huge-log``: N3's calls, ``reloads``: its reloads, ``connection-cap``,
  ``slider``), to tell which one harms the players.
- The attacker also enters 10 participants of its own while the players arrive (never consenting, so it takes no
  player's game), then, once every player has started: GETs of the researcher's pages (/runs, /report/x, /play,
  /study, ...), guessed /p/SECRET pages and posts, new participants in a loop from the same address (refused:
  ``participants_per_address`` is 113), consent and start for its own participants (refused: the study is full),
  taken and malformed ids, calls with the harness's own tool ``(unreadable)`` and malformed JSON in a turn
  player's game (a hostile participant's second tab, holding their secret), 2 MB bodies (declared and chunked),
  bodies, heads that never finish and connections that send nothing (four at a time, each waiting up to 30 s), a
  bad Host, a cross-site Origin, a bad Content-Length, a 100 KB request head and garbage instead of HTTP.

Targets (exit status 1 when one is missed): every frame-rate player keeps at least 7.5 frames/s at its p95 frame
interval; no 5xx answer to anyone and no traceback on the server's stderr; every player's game started is written
(one episode file each, named in its participant's record; 100 of 100), and the attacker's 3 too, on its own 3
tasks; the server exits cleanly; one participant per task; no player failing; no request of the attacker's kept
without an answer or a close for 30 s; N3's 1 MB calls all answered 413 (or their connections closed unread, or
refused at the connection cap); N5's calls all answered 200 or 429 (or refused at the connection cap); N11's slider
answered 200 with the frame it asked for. The attacker's answers are printed by what it tried and by status (its
refusals: 400, 403, 404, 408, 409, 413, 422, 429, ...). Timings depend on the machine: the server's event loop is
one process, so one core at most (its CPU time is printed; petri's simulations run in its worker processes, not
counted).

    python benchmarks/study_load.py [--seconds 120] [--players-autumn 60] [--players-turns 40] [--burst 600]
        [--skip MOVE]...
"""

import argparse
import asyncio
import contextlib
import html as htmllib
import itertools
import json
import math
import multiprocessing
import os
import queue
import random
import re
import secrets
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from multiprocessing.context import SpawnProcess
from multiprocessing.queues import Queue
from multiprocessing.sharedctypes import Synchronized
from pathlib import Path
from typing import Any

import numpy as np
import orjson
import yaml

from discogym.interfaces.web.study import ParticipantRecord, Study, load_study_file

REPO = Path(__file__).resolve().parent.parent
FRAME_TARGET = 7.5  # frames a second a frame-rate player keeps at its p95 interval
TURN_SUITES = (
    ("crafting", "test.small", "mst-se-i", 15),
    ("redstone", "official", None, 15),
    ("petri", "core-v1", None, 10),
)
AT_THE_CAP = "503 at the connection cap"  # how a burst's connection refused at the server's cap is counted
ATTACKER_ENTRIES = 10  # new participants the attacker may enter before the per-address cap refuses it
# The attacker's own games, one participant each, entered in this order: N3, N5 and N11 of issue 46's review
HOSTILE_ROLES = ("huge log", "connection cap", "masked-frame slider")
PLAYER_ID, HOSTILE_ID = "load", "hostile"  # how the players' and the attacker's gamers' PROLIFIC_PIDs begin
SEED = 1  # the study's
HUGE_ACTION = 1_000_000  # characters of the huge-log game's huge action (over the 16 KiB cap on a call's args)
# a call refused by its Content-Length is answered and its connection closed with its body unread: a client still
# sending that body may see the connection reset before it reads the answer (a refusal all the same)
CLOSED_UNREAD = ("BrokenPipeError", "ConnectionResetError")
LONG_ACTION = 16_000  # characters of its longest action under the cap: taken, refused by the game, and logged
BURST_CALLS = 600  # calls the connection-cap game sends at once by default, each on a connection of its own
BURST_PAUSE = 2.0  # seconds between two bursts
MOVES = ("huge-log", "reloads", "connection-cap", "slider")  # what the attacker does in its games, for --skip
COMPLETION_CODE = "LOADTEST1"  # shown to a player whose game ended by itself (a step limit: completed)
INCOMPLETE_CODE = "LOADTEST0"  # shown to one who ended their game (not completed: its test was not answered)
LOAD_PROCESSES = 2  # processes the players are spread over (the attacker has its own)
TIMEOUT = 30.0
KEEP_ALIVE_REUSE = 4.0  # seconds a connection may stay idle and be used again (the server closes it after 5)
SLOW_CONNECTIONS = 4  # the attacker's connections that send part of a request, or nothing, and wait
ARROWS = ("up", "down", "left", "right")
SCRIPT = re.compile(r'<script id="([a-z-]+)" type="application/json">(.*?)</script>', re.S)
BRIEF = re.compile(r'<pre id="brief">(.*?)</pre>', re.S)


# The study


def study_document(autumn_tasks: int, turn_tasks: int) -> tuple[dict[str, Any], list[int]]:
    """The study: ``autumn_tasks`` autumn tasks at the frame rate (spread over the split) and ``turn_tasks``
    turn-based ones (crafting, redstone and petri in the proportions of :data:`TURN_SUITES`) for the players, and one
    more autumn task at the frame rate for each of the attacker's games (:data:`HOSTILE_ROLES`; the slider's is the
    masked-frame test with the most frames); with the indexes of the attacker's slots.

    The attacker's participants enter and consent first, one after another, so the server's assignment gives them
    known slots (``Study.consent``: the slots given least, ties broken by a permutation drawn from the study's seed
    and the participant's number); the slots are ordered so that those are the attacker's tasks, and every player
    is given one of the players' tasks."""
    from discogym.core import get_suite
    from discogym.suites.autumn.challenges import MfpTask
    from discogym.suites.autumn.tasks import task_spec

    everything = get_suite("autumn").tasks("all")
    autumn = [task.id for task in everything]
    if autumn_tasks + len(HOSTILE_ROLES) > len(autumn):
        raise SystemExit(f"autumn's split 'all' has {len(autumn)} tasks, {len(HOSTILE_ROLES)} of them for the attacker")
    frame_rate = {"suite": "autumn", "split": "all", "condition": "people", "pace": "frame-rate"}
    chosen = [autumn[i * len(autumn) // autumn_tasks] for i in range(autumn_tasks)]
    slots: list[tuple[dict[str, Any], str]] = [(frame_rate, task) for task in chosen]
    whole = sum(share for *_, share in TURN_SUITES)
    counts = [turn_tasks * share // whole for *_, share in TURN_SUITES]
    counts[0] += turn_tasks - sum(counts)
    for (suite, split, condition, _), count in zip(TURN_SUITES, counts, strict=True):
        tasks = [task.id for task in get_suite(suite).tasks(split)]
        if count > len(tasks):
            raise SystemExit(f"{suite}'s split {split} has {len(tasks)} tasks")
        head: dict[str, Any] = {"suite": suite, "split": split}
        if condition is not None:
            head["condition"] = condition
        slots += [(head, task) for task in tasks[:count]]
    spare = [task_spec(task) for task in everything if task.id not in chosen]
    masked = [task for task in spare if isinstance(task.challenge, MfpTask)]
    slider = max(masked, key=lambda task: len(task.challenge.actions) if isinstance(task.challenge, MfpTask) else 0)
    others = [task.id for task in spare if task.id != slider.id]
    hostile = [*others[: len(HOSTILE_ROLES) - 1], slider.id]  # the slider's game is the last
    total = len(slots) + len(hostile)
    given: list[int] = []
    for number in range(1, len(hostile) + 1):  # as Study.consent assigns, to participants 1, 2, 3 in turn
        order = np.random.default_rng([SEED, number]).permutation(total)
        given.append(min((i for i in range(total) if i not in given), key=lambda i: int(order[i])))
    for index, task in sorted(zip(given, hostile, strict=True)):
        slots.insert(index, (frame_rate, task))
    games: list[dict[str, Any]] = []
    for head, task in slots:  # runs of one suite, task set, condition and pace, as blocks
        if games and all(games[-1][name] == value for name, value in head.items()) and len(games[-1]) == len(head) + 1:
            games[-1]["tasks"].append(task)
        else:
            games.append({**head, "tasks": [task]})
    players = autumn_tasks + turn_tasks
    document = {
        "name": "load-test",
        "seed": SEED,
        "games": games,
        "tasks_per_participant": 1,
        "people_per_task": 1,
        "minutes_per_game": 60,
        "idle_minutes": 10,
        "participants_per_address": players + ATTACKER_ENTRIES + len(HOSTILE_ROLES),
        "consent": "You agree to take part in a load test.",
        "instructions": "Play the game you are given.",
        "completion": {"code": COMPLETION_CODE, "incomplete_code": INCOMPLETE_CODE},
    }
    return document, given


# Measuring


@dataclass
class Player:
    """What one participant saw."""

    number: int
    suite: str = ""
    secret: str = ""
    started: bool = False
    over_by_itself: bool = False  # the game ended on its own (a step limit) before the deadline
    ended: bool = False
    saved: bool | None = None
    finished_page: bool = False
    latencies: list[float] = field(default_factory=list)  # seconds per game call
    answers: list[float] = field(default_factory=list)  # monotonic times of the frame answers
    lateness: list[float] = field(default_factory=list)  # how late this process's clock ticked, seconds
    statuses: Counter[int] = field(default_factory=Counter)
    failures: list[str] = field(default_factory=list)  # transport errors and unexpected answers


def quantile(values: list[float], q: float) -> float:
    """The ``q`` quantile (0..1) of ``values`` by linear interpolation; nan when empty."""
    if not values:
        return math.nan
    ordered = sorted(values)
    position = q * (len(ordered) - 1)
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def window_rates(answers: list[float]) -> list[int]:
    """Frames answered in each 1-second window that ends at a frame answer (from one second after the first)."""
    rates = []
    first = 0
    for last, when in enumerate(answers):
        if when - answers[0] < 1.0:
            continue
        while answers[first] <= when - 1.0:
            first += 1
        rates.append(last - first + 1)
    return rates


def intervals_of(answers: list[float]) -> list[float]:
    return [b - a for a, b in itertools.pairwise(answers)]


# Players


def page_data(html: str) -> dict[str, Any]:
    """The JSON blocks of a page (tools-data, view-data, game-data)."""
    return {name: json.loads(text) for name, text in SCRIPT.findall(html)}


def suite_of(tools: list[dict[str, Any]]) -> str:
    names = {tool["name"] for tool in tools}
    for suite, marker in (
        ("autumn", "act"),
        ("crafting", "search"),
        ("redstone", "get_block_state"),
        ("petri", "probe"),
    ):
        if marker in names:
            return suite
    return "unknown:" + ",".join(sorted(names))


def brief_of(html: str) -> str:
    """The task's brief as the play page shows it."""
    found = BRIEF.search(html)
    return htmllib.unescape(found[1]) if found else ""


def petri_change(brief: str, rng: random.Random) -> dict[str, float]:
    """A person's experiment in a petri world: one of the candidate parameters moved off its control by up to 15%
    (a simulation of its own: the server caches only the control and the hidden world); {} when the brief names
    none. A value outside the parameter's range is refused by the game, which costs it little."""
    control = re.search(r"^control config: (\{.*\})$", brief, re.M)
    candidates = re.search(r"^the changed parameter is one of: (.*)$", brief, re.M)
    if control is None or candidates is None:
        return {}
    values = json.loads(control[1])
    name = rng.choice(candidates[1].split(", "))
    value = values[name] * rng.uniform(0.85, 1.15)
    return {name: round(value) if isinstance(values[name], int) else round(value, 4)}


def turn_call(suite: str, rng: random.Random, brief: str) -> tuple[str, dict[str, Any]]:
    """A call that is valid in every task of ``suite`` (``brief``: the task's)."""
    if suite == "crafting":
        if rng.random() < 0.5:
            return "search", {"item": rng.choice(["oak_planks", "stick", "crafting_table", "torch", "chest"])}
        return "think", {"thought": "which recipe comes first?"}
    if suite == "redstone":
        if rng.random() < 0.2:
            return "scan_redstone_area", {}
        return "get_block_state", {"x": rng.randint(-10, 10), "y": 4, "z": rng.randint(-10, 10)}
    if rng.random() < 0.5:
        return "experiment", {"config_b": petri_change(brief, rng)}
    return "probe", {"guess": petri_change(brief, rng)}


@dataclass
class Answer:
    """One HTTP answer, after the redirects it followed."""

    status: int
    headers: dict[str, str]  # names in lower case
    body: bytes
    path: str  # the path that gave it
    history: list[int]  # the statuses of the redirects followed to it

    @property
    def text(self) -> str:
        return self.body.decode("utf-8", errors="replace")

    def json(self) -> Any:
        return orjson.loads(self.body)


class ClientError(Exception):
    """The connection failed or the answer was not HTTP."""


class Browser:
    """One browser's connection to the server: HTTP/1.1 kept alive, its cookies, redirects followed. Written for
    the load test: httpx cost the load processes about five times more CPU a request, CPU that the server lacked
    on a 2-core machine."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.cookies: dict[str, str] = {}
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None
        self._used = 0.0

    async def request(
        self,
        method: str,
        path: str,
        body: bytes | None = None,
        *,
        json: Any = None,
        content_type: str | None = None,
        follow: bool = True,
    ) -> Answer:
        """The answer to ``method path`` (``json`` sent as JSON), 303 redirects followed unless ``follow`` is off."""
        if json is not None:
            body, content_type = orjson.dumps(json), "application/json"
        history: list[int] = []
        for _ in range(5):
            status, headers, content = await self._exchange(method, path, body, content_type)
            location = headers.get("location", "")
            if not (follow and status in (301, 302, 303, 307, 308) and location.startswith("/")):
                return Answer(status, headers, content, path, history)
            history.append(status)
            if status == 303:
                method, body, content_type = "GET", None, None
            path = location
        raise ClientError(f"too many redirects from {path}")

    async def close(self) -> None:
        writer, self._reader, self._writer = self._writer, None, None
        if writer is not None:
            writer.close()
            with contextlib.suppress(OSError):
                await writer.wait_closed()

    async def _exchange(
        self, method: str, path: str, body: bytes | None, content_type: str | None
    ) -> tuple[int, dict[str, str], bytes]:
        if self._writer is None or time.monotonic() - self._used > KEEP_ALIVE_REUSE:
            await self.close()  # the server closes idle connections after 5 s: never send on one it may close
            try:
                self._reader, self._writer = await asyncio.open_connection("127.0.0.1", self.port)
            except OSError as err:
                raise ClientError(f"cannot connect: {err}") from None
        reader, writer = self._reader, self._writer
        assert reader is not None
        lines = [f"{method} {path} HTTP/1.1", f"Host: 127.0.0.1:{self.port}", "User-Agent: study-load"]
        if self.cookies:
            lines.append("Cookie: " + "; ".join(f"{name}={value}" for name, value in self.cookies.items()))
        if content_type is not None:
            lines.append(f"Content-Type: {content_type}")
        if body is not None or method == "POST":
            lines.append(f"Content-Length: {len(body or b'')}")
        try:
            async with asyncio.timeout(TIMEOUT):
                writer.write(("\r\n".join(lines) + "\r\n\r\n").encode() + (body or b""))
                await writer.drain()
                status, headers, content = await read_answer(reader)
        except (OSError, TimeoutError, asyncio.IncompleteReadError, ValueError) as err:
            await self.close()
            raise ClientError(f"{type(err).__name__} {err}") from None
        self._used = time.monotonic()
        for cookie in headers.get("set-cookie", "").split("\n"):
            name, _, value = cookie.split(";")[0].partition("=")
            if name and value:
                self.cookies[name.strip()] = value.strip()
        if headers.get("connection", "").lower() == "close":
            await self.close()
        return status, headers, content


async def read_answer(reader: asyncio.StreamReader) -> tuple[int, dict[str, str], bytes]:
    """An HTTP/1.1 answer: its status, headers (Set-Cookie headers joined by newlines) and body."""
    status_line = await reader.readuntil(b"\r\n")
    parts = status_line.split()
    if len(parts) < 2 or not parts[0].startswith(b"HTTP/"):
        raise ValueError(f"not HTTP: {status_line[:80]!r}")
    headers: dict[str, str] = {}
    while (line := await reader.readuntil(b"\r\n")) != b"\r\n":
        name, _, value = line.decode("latin-1").partition(":")
        name, value = name.strip().lower(), value.strip()
        headers[name] = f"{headers[name]}\n{value}" if name in headers else value
    if "content-length" in headers:
        content = await reader.readexactly(int(headers["content-length"]))
    elif headers.get("transfer-encoding", "").lower() == "chunked":
        chunks = []
        while size := int((await reader.readuntil(b"\r\n")).split(b";")[0], 16):
            chunks.append(await reader.readexactly(size))
            await reader.readuntil(b"\r\n")
        await reader.readuntil(b"\r\n")
        content = b"".join(chunks)
    else:
        content = await reader.read()
        headers["connection"] = "close"
    return int(parts[1]), headers, content


class Participant:
    """A participant's browser."""

    def __init__(self, port: int, player: Player) -> None:
        self.player = player
        self.browser = Browser(port)

    async def request(self, method: str, path: str, *, json: Any = None) -> Answer | None:
        try:
            answer = await self.browser.request(method, path, json=json)
        except ClientError as err:
            self.player.failures.append(f"{method} {path.split('?')[0]}: {err}")
            return None
        for status in [*answer.history, answer.status]:
            self.player.statuses[status] += 1
        return answer

    async def call(self, tool: str, args: dict[str, Any]) -> dict[str, Any] | None:
        sent = time.monotonic()
        answer = await self.request("POST", f"/api/p/{self.player.secret}/call", json={"tool": tool, "args": args})
        self.player.latencies.append(time.monotonic() - sent)
        if answer is None:
            return None
        if answer.status != 200:
            self.player.failures.append(f"call {tool}: {answer.status} {answer.text[:200]}")
            return None
        reply: dict[str, Any] = answer.json()
        return reply

    async def arrive(self, start_at: float, secrets_out: "Queue[tuple[str, str]]") -> dict[str, Any] | None:
        """Enter, consent and start; the play page's data, or None."""
        player = self.player
        await asyncio.sleep(max(0.0, start_at - time.monotonic()))
        pid = f"{PLAYER_ID}{player.number:04d}"
        answer = await self.request("GET", f"/enter?PROLIFIC_PID={pid}&STUDY_ID=load&SESSION_ID=s{pid}")
        if answer is None or answer.status != 200 or not answer.path.startswith("/p/"):
            player.failures.append(f"enter: {answer and answer.status}")
            return None
        player.secret = answer.path.split("/")[2]
        for step in ("consent", "start"):
            answer = await self.request("POST", f"/p/{player.secret}/{step}")
            if answer is None or answer.status != 200:
                player.failures.append(f"{step}: {answer and answer.status} {answer and answer.text[:200]}")
                return None
        assert answer is not None
        data = page_data(answer.text)
        if "tools-data" not in data:
            player.failures.append("start: no game page")
            return None
        player.started = True
        data["brief"] = brief_of(answer.text)
        player.suite = suite_of(data["tools-data"])
        if player.suite != "autumn":
            secrets_out.put((player.suite, player.secret))
        return data

    async def frames(self, view: dict[str, Any], deadline: float, rng: random.Random) -> None:
        """Play at the view's frame rate until the deadline, as the grid screen does."""
        period = 1.0 / max(1, int(view.get("frame_rate", 8)))
        size = int(view.get("size", 16))
        tick = time.monotonic()
        while tick < deadline:
            if not acting(view):
                return
            draw = rng.random()
            if draw < 0.1:
                action = rng.choice(ARROWS)
            elif draw < 0.12:
                action = f"click {rng.randrange(size)} {rng.randrange(size)}"
            else:
                action = "noop"
            reply = await self.call("act", {"action": action})
            if reply is None:
                return
            self.player.answers.append(time.monotonic())
            view = reply.get("view") or view
            if reply.get("over"):
                self.player.over_by_itself = True
                return
            tick += period
            now = time.monotonic()
            while tick <= now:  # ticks that came while the call was in flight do nothing
                tick += period
            await asyncio.sleep(tick - now)
            self.player.lateness.append(time.monotonic() - tick)

    async def turns(self, deadline: float, rng: random.Random, brief: str) -> None:
        """A valid call every 1.5 to 2.5 s until the deadline or the game's end (``brief``: the task's)."""
        while True:
            wait = rng.uniform(1.5, 2.5)
            if time.monotonic() + wait >= deadline:
                await asyncio.sleep(max(0.0, deadline - time.monotonic()))
                return
            await asyncio.sleep(wait)
            tool, args = turn_call(self.player.suite, rng, brief)
            reply = await self.call(tool, args)
            if reply is None:
                return
            if reply.get("over"):
                self.player.over_by_itself = True
                self.player.saved = reply.get("saved")
                return

    async def leave(self) -> None:
        """End the game (unless it ended by itself), wait for it to be saved, and see the completion page."""
        player = self.player
        if not player.over_by_itself:
            answer = await self.request("POST", f"/api/p/{player.secret}/end", json={})
            if answer is None or answer.status != 200:
                player.failures.append(f"end: {answer and answer.status} {answer and answer.text[:200]}")
                return
            player.ended = True
            player.saved = answer.json().get("saved")
        for _ in range(50):
            if player.saved:
                break
            await asyncio.sleep(0.2)
            answer = await self.request("GET", f"/api/p/{player.secret}/saved")
            player.saved = answer is not None and answer.json().get("saved") is True
        answer = await self.request("GET", f"/p/{player.secret}")
        code = COMPLETION_CODE if player.over_by_itself else INCOMPLETE_CODE
        player.finished_page = answer is not None and code in answer.text


def acting(view: dict[str, Any]) -> bool:
    """Whether the grid screen sends frames in this view (as grid.js decides)."""
    return bool(
        view.get("phase") == "interaction"
        or view.get("test") == "planning"
        or (view.get("test") == "cd" and not view.get("signalled"))
    )


async def play(
    port: int,
    player: Player,
    start_at: float,
    deadline: float,
    started: "Synchronized[int]",
    secrets_out: "Queue[tuple[str, str]]",
) -> Player:
    rng = random.Random(player.number)
    person = Participant(port, player)
    try:
        data = await person.arrive(start_at, secrets_out)
        with started.get_lock():
            started.value += 1
        if data is None:
            return player
        if player.suite == "autumn":
            await person.frames(data.get("view-data") or {}, deadline, rng)
        else:
            await person.turns(deadline, rng, data["brief"])
        await person.leave()
    except Exception as err:  # a bug of the load test: reported with the player, not lost
        player.failures.append(f"{type(err).__name__}: {err}")
    finally:
        await person.browser.close()
    return player


def players_process(
    port: int,
    numbers: list[int],
    ramp_from: float,
    ramp_step: float,
    deadline: float,
    started: "Synchronized[int]",
    secrets_out: "Queue[tuple[str, str]]",
    results: "Queue[tuple[str, Any]]",
) -> None:
    async def main() -> list[Player]:
        tasks = [
            play(port, Player(number), ramp_from + number * ramp_step, deadline, started, secrets_out)
            for number in numbers
        ]
        return list(await asyncio.gather(*tasks))

    results.put(("players", [{**vars(p), "statuses": dict(p.statuses)} for p in asyncio.run(main())]))


# The attacker


@dataclass
class Attack:
    """The attacker's tally."""

    outcomes: Counter[str] = field(default_factory=Counter)  # "what: status" -> requests
    server_errors: list[str] = field(default_factory=list)
    requests: int = 0
    games_started: int = 0  # the attacker's own games (HOSTILE_ROLES) started
    reloads: list[float] = field(default_factory=list)  # seconds per reload of the huge-log game's play page
    page_bytes: int = 0  # the size of that page at its last reload
    skipped: list[str] = field(default_factory=list)  # the moves of its games left out (MOVES)
    burst_calls: int = 0  # calls in each burst of the connection cap
    burst_answered: list[int] = field(default_factory=list)  # calls answered 200 in each of its bursts
    burst_seconds: list[float] = field(default_factory=list)  # how long each burst took, the last answer in
    test_frames: int = 0  # frames of the masked-frame test the slider reached (0: not reached)
    slider: list[float] = field(default_factory=list)  # seconds per show_frame answered 200
    slider_seconds: float = 0.0  # how long the slider slid
    slid_wrong: int = 0  # show_frame answers whose view showed another frame than the one asked for

    def note(self, what: str, status: int | str, detail: str = "") -> None:
        self.requests += 1
        self.outcomes[f"{what}: {status}"] += 1
        if isinstance(status, int) and status >= 500:
            self.server_errors.append(f"{what}: {status} {detail}")


FORBIDDEN = (
    "/runs",
    "/runs/autumn",
    "/report/x",
    "/report/autumn",
    "/play",
    "/play?suite=autumn",
    "/study",
    "/api/runs/autumn/episodes/x/views",
    "/docs",
    "/openapi.json",
    "/static/../study.yaml",
    "/static/%2e%2e/study.yaml",
    "/screens/..%2f..%2fstudy.js",
    "/screens/nope.js",
    "/p/",
    "/api/p/",
    "/participants/00001.json",
)


async def raw_request(port: int, head: bytes, body: list[bytes], pause: float = 0.0, wait: float = 30.0) -> str:
    """Send a request byte for byte (``pause`` seconds after the head); the status of the answer, or how the
    connection ended without one."""
    try:
        reader, writer = await asyncio.wait_for(asyncio.open_connection("127.0.0.1", port), wait)
    except (OSError, TimeoutError) as err:
        return f"no connection ({type(err).__name__})"
    try:
        writer.write(head)
        with contextlib.suppress(OSError):
            await writer.drain()
            if pause:
                await asyncio.sleep(pause)
            for chunk in body:
                writer.write(chunk)
                await writer.drain()
        try:
            line = await asyncio.wait_for(reader.readline(), wait)
        except TimeoutError:
            return "no answer"
        except OSError as err:
            return f"closed ({type(err).__name__})"
        parts = line.split()
        return parts[1].decode() if len(parts) > 1 and parts[0].startswith(b"HTTP/") else "closed"
    finally:
        writer.close()
        with contextlib.suppress(OSError):
            await writer.wait_closed()


async def attack(
    port: int,
    deadline: float,
    entered: list[str],
    taken_pid: str,
    hostile: str | None,
    gamers: list[str],
    burst_calls: int,
    skip: Sequence[str],
) -> Attack:
    """Everything the attacker tries, as fast as the server answers, until the deadline; its own games (``gamers``)
    too."""
    tally = Attack(burst_calls=burst_calls, skipped=list(skip))
    rng = random.Random(7)
    browser = Browser(port)
    entries = len(entered)

    async def send(
        what: str,
        method: str,
        path: str,
        body: bytes | None = None,
        *,
        json: Any = None,
        content_type: str | None = None,
    ) -> Answer | None:
        browser.cookies.clear()  # every request a new browser: no cookie brings it back to a participant
        try:
            answer = await browser.request(method, path, body, json=json, content_type=content_type, follow=False)
        except ClientError as err:
            tally.note(what, str(err).split()[0])
            return None
        tally.note(what, AT_THE_CAP if at_the_cap(answer) else answer.status, f"{answer.headers} {answer.body[:160]!r}")
        return answer

    async def forbidden() -> None:
        await send("researcher's pages", "GET", rng.choice(FORBIDDEN))

    async def guessed() -> None:
        guess = secrets.token_urlsafe(32)
        await send("guessed secret", "GET", f"/p/{guess}")
        await send("guessed secret", "POST", f"/p/{guess}/consent")
        await send("guessed secret", "POST", f"/api/p/{guess}/call", json={"tool": "act", "args": {"action": "up"}})

    async def enter() -> None:
        nonlocal entries
        entries += 1
        query = f"PROLIFIC_PID=attacker{entries:05d}&STUDY_ID=load&SESSION_ID=x{entries}"
        await send("enter with a new id (address capped)", "GET", f"/enter?{query}")

    async def entered_before() -> None:
        secret = rng.choice(entered) if entered else secrets.token_urlsafe(32)
        await send("consent when the study is full", "POST", f"/p/{secret}/consent")
        await send("start without consent", "POST", f"/p/{secret}/start")

    async def bad_ids() -> None:
        await send("enter with a taken id", "GET", f"/enter?PROLIFIC_PID={taken_pid}")
        malformed = rng.choice(["a%20b", "x" * 500, "5f0c%D0%B0", "%00", "%ff%fe"])
        await send("enter with a malformed id", "GET", f"/enter?PROLIFIC_PID={malformed}")
        await send("enter without an id", "GET", "/enter")

    async def in_game() -> None:
        if hostile is None:
            return
        api = f"/api/p/{hostile}/call"
        await send("internal tool (unreadable)", "POST", api, json={"tool": "(unreadable)", "args": {"reply": "x"}})
        bad = rng.choice(
            [
                b'{"tool": ',
                b"[" * 100_000,
                b'{"tool": "act", "args": [1, 2]}',
                b'{"args": {}}',
                b"null",
                b"\xff\xfe not json",
                b'{"tool": "' + b"t" * 500_000 + b'", "args": {}}',
            ]
        )
        await send("malformed JSON", "POST", api, bad, content_type="application/json")
        own = rng.choice([f"/p/{hostile}", f"/api/p/{hostile}/saved", f"/p/{hostile}/start"])
        await send("own pages", "POST" if own.endswith("start") else "GET", own)

    async def lane(steps: Sequence[Callable[[], Awaitable[None]]]) -> None:
        while time.monotonic() < deadline:
            await rng.choice(steps)()

    async def raw_lane() -> None:
        host = b"Host: 127.0.0.1\r\n"
        call = b"POST /api/p/x/call HTTP/1.1\r\n" + host
        two_mb = 2 * 1024 * 1024
        chunk = b"10000\r\n" + b"x" * 0x10000 + b"\r\n"
        while time.monotonic() < deadline:
            what = rng.choice(["declared", "chunked", "host", "origin", "length", "head", "garbage"])
            if what == "declared":
                head = call + f"Content-Length: {two_mb}\r\n\r\n".encode()
                tally.note("2 MB body (declared)", await raw_request(port, head, [b"x" * two_mb]))
            elif what == "chunked":
                head = call + b"Transfer-Encoding: chunked\r\n\r\n"
                tally.note("2 MB body (chunked)", await raw_request(port, head, [chunk] * 32 + [b"0\r\n\r\n"]))
            elif what == "host":
                head = b"GET / HTTP/1.1\r\nHost: evil.example\r\n\r\n"
                tally.note("bad Host", await raw_request(port, head, []))
            elif what == "origin":
                origin = b"Origin: https://evil.example\r\nContent-Length: 0\r\n\r\n"
                tally.note(
                    "cross-site Origin", await raw_request(port, b"POST /p/x/consent HTTP/1.1\r\n" + host + origin, [])
                )
            elif what == "length":
                tally.note("bad Content-Length", await raw_request(port, call + b"Content-Length: 1x\r\n\r\n", []))
            elif what == "head":
                head = b"GET / HTTP/1.1\r\n" + host + b"X-Big: " + b"y" * 100_000 + b"\r\n\r\n"
                tally.note("100 KB request head", await raw_request(port, head, []))
            else:
                tally.note("garbage instead of HTTP", await raw_request(port, b"\x16\x03\x01 hello\r\n\r\n", []))

    async def slow_lane() -> None:
        partial_body = b"POST /api/p/x/call HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 500\r\n\r\n"
        while time.monotonic() < deadline - 1:
            what = rng.choice(["body", "head", "nothing"])
            if what == "body":
                outcome = await raw_request(port, partial_body, [b'{"t'], pause=0.1, wait=30)
                tally.note("slow partial body", outcome)
            elif what == "head":
                outcome = await raw_request(port, b"POST /api/p/x/call HTTP/1.1\r\nHost: 127", [], wait=30)
                tally.note("partial head, never finished", outcome)
            else:
                tally.note("a connection that sends nothing", await raw_request(port, b"", [], wait=30))

    steps = [forbidden, guessed, enter, entered_before, bad_ids, in_game]
    try:
        await asyncio.gather(
            lane(steps),
            raw_lane(),
            *(slow_lane() for _ in range(SLOW_CONNECTIONS)),
            hostile_games(port, deadline, gamers, burst_calls, skip, tally),
        )
    finally:
        await browser.close()
    return tally


async def asked(browser: Browser, tally: Attack, what: str, method: str, path: str, body: Any = None) -> Answer | None:
    """The answer to a request in one of the attacker's own games (``body``: bytes as they are, else as JSON),
    noted in ``tally``; None when the connection failed."""
    raw = body if isinstance(body, bytes) else None
    try:
        answer = await browser.request(
            method, path, raw, json=None if raw is not None else body, content_type="application/json" if raw else None
        )
    except ClientError as err:
        tally.note(what, str(err).split()[0])
        return None
    detail = f"{answer.headers} {answer.body[:160]!r}"
    tally.note(what, AT_THE_CAP if at_the_cap(answer) else answer.status, detail)
    return answer


def at_the_cap(answer: Answer) -> bool:
    """Whether ``answer`` refused a connection opened while the server held as many as it takes (uvicorn's plain
    503, not one of the app's)."""
    return answer.status == 503 and answer.body == b"Service Unavailable"


async def burst(port: int, request: bytes, count: int) -> list[int | str]:
    """``request`` sent ``count`` times at once, each on a connection of its own opened before any is sent: the
    status of each answer, or how its connection ended without one."""
    opened = 0
    all_open = asyncio.Event()

    def one_more() -> None:
        nonlocal opened
        opened += 1
        if opened == count:
            all_open.set()

    async def one() -> int | str:
        try:
            reader, writer = await asyncio.wait_for(asyncio.open_connection("127.0.0.1", port), TIMEOUT)
        except (OSError, TimeoutError) as err:
            one_more()
            return f"no connection ({type(err).__name__})"
        one_more()
        try:
            await all_open.wait()
            writer.write(request)
            await writer.drain()
            status, _, _ = await asyncio.wait_for(read_answer(reader), TIMEOUT)
            return status
        except TimeoutError:
            return "no answer"
        except (OSError, asyncio.IncompleteReadError, ValueError) as err:
            return f"closed ({type(err).__name__})"
        finally:
            writer.close()
            with contextlib.suppress(OSError):
                await writer.wait_closed()

    return list(await asyncio.gather(*(one() for _ in range(count))))


async def hostile_games(
    port: int, deadline: float, gamers: list[str], burst_calls: int, skip: Sequence[str], tally: Attack
) -> None:
    """The attacker's own games (:data:`HOSTILE_ROLES`, one participant each, in ``gamers``' order), started once
    every player has started, attacked until the deadline (but for the moves in ``skip``: :data:`MOVES`), then
    ended."""
    browsers: list[Browser] = []

    def browser() -> Browser:
        browsers.append(Browser(port))
        return browsers[-1]

    async def huge_log(secret: str) -> None:
        """N3: calls with a 1 MB action (refused, 413) and with the longest action under the cap (taken, refused
        by the game, logged), one after the other; the game's own play page, with the last of its log, reloaded as fast
        as it comes."""
        api = f"/api/p/{secret}/call"
        huge = orjson.dumps({"tool": "act", "args": {"action": "x" * HUGE_ACTION}})
        longest = orjson.dumps({"tool": "act", "args": {"action": "y" * LONG_ACTION}})
        caller, reloader = browser(), browser()

        async def calls() -> None:
            while time.monotonic() < deadline:
                await asked(caller, tally, "N3 call with a 1 MB action", "POST", api, huge)
                await asked(caller, tally, f"N3 call with a {LONG_ACTION:,}-character action", "POST", api, longest)

        async def reloads() -> None:
            while time.monotonic() < deadline:
                sent = time.monotonic()
                answer = await asked(reloader, tally, "N3 reload of its own play page", "GET", f"/p/{secret}")
                if answer is not None and answer.status == 200:
                    tally.reloads.append(time.monotonic() - sent)
                    tally.page_bytes = len(answer.body)

        await asyncio.gather(
            *(move() for move, name in ((calls, "huge-log"), (reloads, "reloads")) if name not in skip)
        )

    async def connection_cap(secret: str) -> None:
        """N5: bursts of ``burst_calls`` frame calls at once, each on a connection of its own: beyond two in
        flight the server answers 429."""
        body = orjson.dumps({"tool": "act", "args": {"action": "noop"}})
        head = (
            f"POST /api/p/{secret}/call HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
        )
        while time.monotonic() < deadline - BURST_PAUSE:
            sent = time.monotonic()
            outcomes = await burst(port, head.encode() + body, burst_calls)
            tally.burst_seconds.append(time.monotonic() - sent)
            for outcome in outcomes:  # a connection opened beyond the server's cap is refused: by design, not a fault
                tally.note(f"N5 one of {burst_calls} calls at once", AT_THE_CAP if outcome == 503 else outcome)
            tally.burst_answered.append(sum(outcome == 200 for outcome in outcomes))
            await asyncio.sleep(BURST_PAUSE)

    async def slider(secret: str) -> None:
        """N11: the world driven to its test (``go_to_test``), the masked-frame test's, then ``show_frame`` over
        every frame and back, as fast as the server answers, two calls in flight (the most it answers at once)."""
        api = f"/api/p/{secret}/call"
        own = browser()
        to_test = {"tool": "go_to_test", "args": {}}
        answer = await asked(own, tally, "N11 go_to_test", "POST", api, to_test)
        while answer is None or answer.status == 429 or at_the_cap(answer):  # tried again, as a script would
            if time.monotonic() > deadline:
                return
            await asyncio.sleep(0.5)
            answer = await asked(own, tally, "N11 go_to_test", "POST", api, to_test)
        view = answer.json().get("view") or {} if answer.status == 200 else {}
        if view.get("test") != "mfp":
            tally.note("N11 the masked-frame test not reached", str(view.get("test")))
            return
        tally.test_frames = int(view["frames"])
        there_and_back = [*range(tally.test_frames), *range(tally.test_frames - 2, 0, -1)]
        indexes = itertools.cycle(there_and_back)

        async def slide(own: Browser) -> None:
            while time.monotonic() < deadline:
                index = next(indexes)
                sent = time.monotonic()
                call = {"tool": "show_frame", "args": {"index": index}}
                answer = await asked(own, tally, "N11 show_frame", "POST", api, call)
                if answer is not None and answer.status == 200:
                    tally.slider.append(time.monotonic() - sent)
                    tally.slid_wrong += (answer.json().get("view") or {}).get("frame_number") != index

        began = time.monotonic()
        await asyncio.gather(slide(browser()), slide(browser()))
        tally.slider_seconds = time.monotonic() - began

    try:
        for secret in gamers:
            answer = await asked(browser(), tally, "start its own game", "POST", f"/p/{secret}/start")
            tally.games_started += answer is not None and "tools-data" in page_data(answer.text)
        roles = ((huge_log, "huge-log"), (connection_cap, "connection-cap"), (slider, "slider"))
        await asyncio.gather(
            *(
                role(secret)
                for (role, name), secret in zip(roles, gamers, strict=True)
                if name not in skip or name == "huge-log"
            )
        )
        for secret in gamers:
            await asked(browser(), tally, "end its own game", "POST", f"/api/p/{secret}/end", {})
    finally:
        for each in browsers:
            await each.close()


async def enter_gamers(port: int, count: int) -> list[str]:
    """The attacker's participants who get games of their own (:data:`HOSTILE_ROLES`), entered and consenting one
    after another before anyone else enters: their secrets, in order (participants 1, 2, 3...)."""
    browser = Browser(port)
    gamers = []
    try:
        for number in range(1, count + 1):
            query = f"PROLIFIC_PID={HOSTILE_ID}{number:04d}&STUDY_ID=load&SESSION_ID=h{number}"
            answer = await browser.request("GET", f"/enter?{query}", follow=False)
            location = answer.headers.get("location", "")
            if answer.status != 303 or not location.startswith("/p/"):
                raise SystemExit(f"the attacker's participant {number} was not let in: {answer.status} {answer.text}")
            secret = location.split("/")[2]
            answer = await browser.request("POST", f"/p/{secret}/consent", follow=False)
            if answer.status != 303:
                raise SystemExit(f"the attacker's participant {number} could not consent: {answer.status}")
            gamers.append(secret)
            browser.cookies.clear()
    finally:
        await browser.close()
    return gamers


async def enter_early(port: int, count: int, tally: Attack) -> list[str]:
    """The attacker's first participants, entered while the players arrive (never consenting, so that they take no
    player's game): the secrets of those let in."""
    browser = Browser(port)
    entered = []
    try:
        for number in range(count):
            browser.cookies.clear()
            query = f"PROLIFIC_PID=early{number:05d}&STUDY_ID=load&SESSION_ID=e{number}"
            try:
                answer = await browser.request("GET", f"/enter?{query}", follow=False)
            except ClientError as err:
                tally.note("enter with a new id (before the cap)", str(err).split()[0])
                continue
            tally.note("enter with a new id (before the cap)", answer.status)
            location = answer.headers.get("location", "")
            if location.startswith("/p/"):
                entered.append(location.split("/")[2])
    finally:
        await browser.close()
    return entered


def attacker_process(
    port: int,
    players: int,
    start_at: float,
    deadline: float,
    started: "Synchronized[int]",
    secrets_in: "Queue[tuple[str, str]]",
    results: "Queue[tuple[str, Any]]",
    gamers: list[str],
    burst_calls: int,
    skip: list[str],
) -> None:
    tally = Attack()
    time.sleep(max(0.0, start_at - time.monotonic()))
    entered = asyncio.run(enter_early(port, ATTACKER_ENTRIES, tally))
    while started.value < players and time.monotonic() < deadline:  # no game is taken from a player
        time.sleep(0.1)
    hostile = None
    with contextlib.suppress(Exception):
        hostile = secrets_in.get(timeout=1)[1]
    began = time.monotonic()
    attacked = asyncio.run(attack(port, deadline, entered, f"{PLAYER_ID}0000", hostile, gamers, burst_calls, skip))
    attacked.outcomes.update(tally.outcomes)
    attacked.requests += tally.requests
    attacked.server_errors += tally.server_errors
    outcomes = {**vars(attacked), "outcomes": dict(attacked.outcomes)}
    results.put(("attack", (outcomes, time.monotonic() - began, hostile is not None)))


# The server and the checks


def gathered(results: "Queue[tuple[str, Any]]", processes: list[SpawnProcess], limit: float) -> list[tuple[str, Any]]:
    """What the load processes put in ``results``: one item each, fewer if some died or ``limit`` passed."""
    items: list[tuple[str, Any]] = []
    while len(items) < len(processes) and time.monotonic() < limit:
        try:
            items.append(results.get(timeout=1))
        except queue.Empty:
            if not any(process.is_alive() for process in processes) and results.empty():
                break
    return items


def cpu_seconds(pid: int) -> float:
    """The CPU time (user and system) process ``pid`` has used so far, from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def wait_for_port(port: int, server: "subprocess.Popen[bytes]", limit: float = 120) -> None:
    deadline = time.monotonic() + limit
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            if server.poll() is not None or time.monotonic() > deadline:
                raise SystemExit("the server did not start") from None
            time.sleep(0.1)


@dataclass
class Written:
    """What the study folder holds after the server stopped."""

    episodes: Counter[str]  # suite -> episode files
    records: int
    consented: int  # players' records (PLAYER_ID) that consented
    played_and_written: int  # of those, the ones whose one game is played and its file written
    hostile_written: int  # the attacker's gamers (HOSTILE_ID) whose one game is played and its file written
    hostile_slots: list[int]  # the slots they were given, in the order they entered
    per_slot: Counter[int]  # slot -> participants assigned
    endings: Counter[str]
    server_intervals: list[list[float]]  # per player's frame-rate game, the intervals the server wrote


def read_study(folder: Path) -> Written:
    episodes: Counter[str] = Counter()
    files: set[str] = set()
    intervals: dict[str, list[float]] = {}
    for suite_dir in sorted(path for path in folder.iterdir() if (path / "episodes").is_dir()):
        for path in (suite_dir / "episodes").glob("*.json"):
            episodes[suite_dir.name] += 1
            files.add(path.name)
        for path in (suite_dir / "runtime").glob("*.json"):
            intervals[path.name] = json.loads(path.read_text()).get("frame_intervals_s") or []
    study = Study(load_study_file(folder / "study.yaml"), folder)  # the study's database, as the server left it
    records = study.participants()
    study.close()

    def of(kind: str) -> list[ParticipantRecord]:
        return [record for record in records if record.platform_ids.get("PROLIFIC_PID", "").startswith(kind)]

    def good(record: ParticipantRecord) -> bool:
        played = record.played
        return len(played) == len(record.assigned) == 1 and played[0].episode in files

    players, gamers = of(PLAYER_ID), of(HOSTILE_ID)
    per_slot: Counter[int] = Counter(slot for record in records for slot in record.assigned)
    consented = [record for record in players if record.consented]
    endings = Counter(str(played.ending) for record in records for played in record.played)
    played = [game.episode for record in players for game in record.played]
    return Written(
        episodes,
        len(records),
        len(consented),
        sum(map(good, consented)),
        sum(map(good, gamers)),
        [slot for record in gamers for slot in record.assigned],  # in the order they entered
        per_slot,
        endings,
        [intervals[name] for name in played if intervals.get(name)],
    )


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.0f} ms"


def report_hostile(tally: "Attack", written: Written, hostile_slots: list[int]) -> list[str]:
    """Print what the attacker's own games met (N3, N5, N11); return the targets missed."""
    missed: list[str] = []

    def statuses(prefix: str) -> dict[str, int]:
        found = Counter({what.rsplit(": ", 1)[1]: n for what, n in tally.outcomes.items() if what.startswith(prefix)})
        return dict(sorted(found.items()))

    given = "on its own tasks" if written.hostile_slots == hostile_slots else "NOT on its own tasks"
    print(
        f"attacker's games: {tally.games_started} of {len(HOSTILE_ROLES)} started ({given}), "
        f"{written.hostile_written} written"
    )
    if tally.games_started != len(HOSTILE_ROLES) or written.hostile_written != len(HOSTILE_ROLES):
        missed.append("the attacker's games were not all started and written")
    if written.hostile_slots != hostile_slots:
        missed.append(f"the attacker was given slots {written.hostile_slots}, not {hostile_slots}")
    left_out = tally.skipped
    if left_out:
        print(f"  left out (--skip): {', '.join(left_out)}")
    huge = statuses("N3 call with a 1 MB")
    print(
        f"  N3 huge log: calls with a 1 MB action {huge}; with a {LONG_ACTION:,}-character action "
        f"{statuses('N3 call with a ' + format(LONG_ACTION, ','))}; its play page reloaded {len(tally.reloads)} times, "
        f"p50 {ms(quantile(tally.reloads, 0.5))}, p95 {ms(quantile(tally.reloads, 0.95))}, "
        f"max {ms(max(tally.reloads, default=0))}, {tally.page_bytes / 1e6:.1f} MB at the last"
    )
    if "huge-log" not in left_out and ("413" not in huge or not set(huge) <= {"413", AT_THE_CAP, *CLOSED_UNREAD}):
        missed.append("the calls with a 1 MB action were not all refused with 413 (or closed unread)")
    capped = statuses("N5 ")
    print(
        f"  N5 connection cap: {len(tally.burst_answered)} bursts of {tally.burst_calls} calls at once {capped}; "
        f"a burst took p50 {quantile(tally.burst_seconds, 0.5):.1f} s, max {max(tally.burst_seconds, default=0):.1f} s "
        f"(connections opened, calls answered), and had at most {max(tally.burst_answered, default=0)} answered 200 "
        "(a game's frames come one a period: two in flight at a time)"
    )
    if "connection-cap" not in left_out and (not capped.get("429") or set(capped) - {"200", "429", AT_THE_CAP}):
        missed.append("a burst's calls were not all answered 200 or 429, or refused at the connection cap")
    slid = statuses("N11 show_frame")
    rate = len(tally.slider) / tally.slider_seconds if tally.slider_seconds else 0.0
    print(
        f"  N11 masked-frame slider: the test's {tally.test_frames} frames; show_frame {slid}, {rate:.1f} a "
        f"second, latency p50 {ms(quantile(tally.slider, 0.5))}, p95 {ms(quantile(tally.slider, 0.95))}, "
        f"max {ms(max(tally.slider, default=0))}; {tally.slid_wrong} showed another frame than asked"
    )
    if "slider" not in left_out and (not tally.test_frames or set(slid) - {"200", AT_THE_CAP} or tally.slid_wrong):
        missed.append("the masked-frame slider was not answered with its frames")
    return missed


def report(
    players: list[Player],
    attack_result: tuple["Attack", float, bool] | None,
    written: Written,
    slots: int,
    wanted_autumn: int,
    wanted_turns: int,
    hostile_slots: list[int],
    tracebacks: int,
    took: float,
    seconds: float,
) -> list[str]:
    """Print the figures; return the targets missed."""
    missed: list[str] = []
    autumn = [p for p in players if p.suite == "autumn"]
    turns = [p for p in players if p.started and p.suite != "autumn"]
    by_suite = Counter(p.suite or "not started" for p in players)
    print(f"players: {len(players)} ({', '.join(f'{n} {s}' for s, n in sorted(by_suite.items()))}); run {seconds:g} s")
    rates = []
    for p in autumn:
        gaps = intervals_of(p.answers)
        rates.append(1 / quantile(gaps, 0.95) if gaps else 0.0)
    pooled = [gap for p in autumn for gap in intervals_of(p.answers)]
    windows = [float(rate) for p in autumn for rate in window_rates(p.answers)]
    frames = sum(len(p.answers) for p in autumn)
    if autumn:
        print(
            f"frame-rate players: {len(autumn)}, {frames} frames; frames/s at each player's p95 interval: "
            f"p50 {quantile(rates, 0.5):.2f}, p5 {quantile(rates, 0.05):.2f}, p95 {quantile(rates, 0.95):.2f}, "
            f"worst {min(rates):.2f} (target >= {FRAME_TARGET})"
        )
        print(
            f"  frame intervals (all players): p50 {ms(quantile(pooled, 0.5))}, p95 {ms(quantile(pooled, 0.95))}, "
            f"p99 {ms(quantile(pooled, 0.99))}, max {ms(max(pooled, default=0))}; frames/s in 1-s windows: "
            f"p50 {quantile(windows, 0.5):.0f}, p5 {quantile(windows, 0.05):.0f}, "
            f"min {min(windows, default=0):.0f}"
        )
        server = [gap for game in written.server_intervals for gap in game]
        if server:
            worst = min(1 / quantile(game, 0.95) for game in written.server_intervals if game)
            print(
                f"  intervals the server wrote: p50 {ms(quantile(server, 0.5))}, p95 {ms(quantile(server, 0.95))}, "
                f"max {ms(max(server))}; worst game's p95 {worst:.2f} frames/s"
            )
        latency = [x for p in autumn for x in p.latencies]
        late = [x for p in autumn for x in p.lateness]
        print(
            f"  call latency: p50 {ms(quantile(latency, 0.5))}, p95 {ms(quantile(latency, 0.95))}, "
            f"max {ms(max(latency, default=0))}; load generator's clock late: p95 {ms(quantile(late, 0.95))}, "
            f"max {ms(max(late, default=0))}"
        )
        below = sum(rate < FRAME_TARGET for rate in rates)
        if below:
            missed.append(f"{below} of {len(rates)} frame-rate players kept less than {FRAME_TARGET} frames/s at p95")
    if turns:
        latency = [x for p in turns for x in p.latencies]
        calls = len(latency)
        by_itself = sum(p.over_by_itself for p in turns)
        print(
            f"turn players: {len(turns)}, {calls} calls; latency p50 {ms(quantile(latency, 0.5))}, "
            f"p95 {ms(quantile(latency, 0.95))}, max {ms(max(latency, default=0))}; "
            f"{by_itself} games ended by themselves (step limits) before the deadline"
        )
        for suite in sorted({p.suite for p in turns}):
            of_suite = [x for p in turns if p.suite == suite for x in p.latencies]
            print(
                f"  {suite}: {len(of_suite)} calls, latency p50 {ms(quantile(of_suite, 0.5))}, "
                f"p95 {ms(quantile(of_suite, 0.95))}, max {ms(max(of_suite, default=0))}"
            )
    if len(autumn) != wanted_autumn or len(turns) != wanted_turns:
        missed.append(
            f"{len(autumn)} frame-rate and {len(turns)} turn players started, not {wanted_autumn} and {wanted_turns}"
        )
    statuses: Counter[int] = sum((p.statuses for p in players), Counter())
    player_5xx = sum(n for status, n in statuses.items() if status >= 500)
    print(f"players' answers by status: {dict(sorted(statuses.items()))}")
    failing = [p for p in players if p.failures or not p.started or not p.saved or not p.finished_page]
    for p in failing[:10]:
        print(
            f"  player {p.number} ({p.suite or '-'}): started {p.started}, saved {p.saved}, completion page "
            f"{p.finished_page}; {'; '.join(p.failures[:3])}"
        )
    if failing:
        missed.append(f"{len(failing)} players failed (an error, a refusal, or a game not saved)")
    attack_5xx = 0
    if attack_result is None:
        missed.append("the attacker reported nothing")
    else:
        tally, attack_seconds, hostile = attack_result
        attack_5xx = len(tally.server_errors)
        rate = tally.requests / attack_seconds if attack_seconds else 0
        print(
            f"attacker: {tally.requests} requests in {attack_seconds:.0f} s ({rate:.0f}/s)"
            f"{'' if hostile else ', no game of its own to call in'}; by outcome:"
        )
        for what, count in sorted(tally.outcomes.items()):
            print(f"  {what:<52} {count}")
        unanswered = sum(n for what, n in tally.outcomes.items() if what.endswith(": no answer"))
        if unanswered:
            missed.append(f"{unanswered} of the attacker's requests kept a connection 30 s without an answer")
        refusals: Counter[str] = Counter()
        for what, count in tally.outcomes.items():
            status = what.rsplit(": ", 1)[1]
            if not status.isdigit() or int(status) >= 400:
                refusals[status] += count
        print(f"attacker's refusals by status: {dict(sorted(refusals.items()))}")
        missed += report_hostile(tally, written, hostile_slots)
    errors_5xx = player_5xx + attack_5xx
    print(
        f"server errors: {errors_5xx} answers 5xx (players {player_5xx}, attacker {attack_5xx}); "
        f"{tracebacks} tracebacks on the server's stderr"
    )
    if attack_result is not None:
        for error in sorted(set(attack_result[0].server_errors))[:5]:
            print(f"  {error}")
    if errors_5xx or tracebacks:
        missed.append("server errors")
    started = sum(p.started for p in players)
    files = sum(written.episodes.values())
    print(
        f"games written: {files} episode files ({', '.join(f'{n} {s}' for s, n in sorted(written.episodes.items()))})"
        f"; players' games: {written.played_and_written} of {started} started played and written "
        f"({written.consented} players consented); the attacker's: {written.hostile_written} of "
        f"{len(HOSTILE_ROLES)}; participant records: {written.records}; endings: {dict(written.endings)}"
    )
    if not (files == started + written.hostile_written and started == written.played_and_written == written.consented):
        missed.append("a player's game was not written")
    one_each = len(written.per_slot) == slots and set(written.per_slot.values()) == {1}
    each = "one person each" if one_each else "NOT one person each"
    print(f"assignment: {len(written.per_slot)} of {slots} tasks given, {each}")
    if not one_each:
        missed.append("the assignment did not give one person per task")
    print(f"run time: {took:.1f} s")
    return missed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--seconds", type=float, default=120.0, help="how long the players play (default 120)")
    parser.add_argument("--players-autumn", type=int, default=60, help="frame-rate players (autumn)")
    parser.add_argument("--players-turns", type=int, default=40, help="turn players (crafting, redstone, petri)")
    parser.add_argument(
        "--burst", type=int, default=BURST_CALLS, help=f"calls of the attacker's bursts at once (default {BURST_CALLS})"
    )
    parser.add_argument(
        "--skip",
        action="append",
        choices=MOVES,
        default=[],
        help="leave out a move of the attacker's games (to tell "
        "which one harms the players): the huge-log game's calls or its reloads, the bursts, the slider",
    )
    options = parser.parse_args()
    began = time.monotonic()
    total = options.players_autumn + options.players_turns
    context = multiprocessing.get_context("spawn")
    with tempfile.TemporaryDirectory(prefix="study-load-") as scratch:
        folder = Path(scratch)
        study_file = folder / "study.yaml"
        document, hostile_slots = study_document(options.players_autumn, options.players_turns)
        study_file.write_text(yaml.safe_dump(document), encoding="utf-8")
        slots = sum(len(block["tasks"]) for block in document["games"])
        port = free_port()
        stderr_path = folder / "server.stderr"
        command = [sys.executable, "-m", "discogym", "serve", "--study", str(study_file)]
        command += ["--out", str(folder / "study"), "--port", str(port)]
        with open(stderr_path, "wb") as server_stderr:
            server = subprocess.Popen(command, cwd=REPO, stdout=subprocess.DEVNULL, stderr=server_stderr)
        players: list[Player] = []
        attack_result = None
        stopping = 0.0
        served_from = time.monotonic()
        try:
            wait_for_port(port, server)
            gamers = asyncio.run(enter_gamers(port, len(HOSTILE_ROLES)))  # first: participants 1, 2, 3
            results: Queue[tuple[str, Any]] = context.Queue()
            hostile: Queue[tuple[str, str]] = context.Queue()
            started = context.Value("i", 0)
            load_start = time.monotonic() + 2.0  # the processes start meanwhile
            ramp = min(5.0, options.seconds / 10)
            deadline = load_start + options.seconds
            step = ramp / max(1, total)
            processes: list[SpawnProcess] = []
            for index in range(LOAD_PROCESSES):
                numbers = list(range(index, total, LOAD_PROCESSES))
                args = (port, numbers, load_start, step, deadline, started, hostile, results)
                processes.append(context.Process(target=players_process, args=args))
            processes.append(
                context.Process(
                    target=attacker_process,
                    args=(
                        port,
                        total,
                        load_start,
                        deadline,
                        started,
                        hostile,
                        results,
                        gamers,
                        options.burst,
                        options.skip,
                    ),
                )
            )
            for process in processes:
                process.start()
            for kind, value in gathered(results, processes, deadline + 300):
                if kind == "players":
                    players.extend(Player(**{**fields, "statuses": Counter(fields["statuses"])}) for fields in value)
                else:
                    tally, attack_seconds, hostile_known = value
                    attack_result = (
                        Attack(**{**tally, "outcomes": Counter(tally["outcomes"])}),
                        attack_seconds,
                        hostile_known,
                    )
            for process in processes:
                process.join(60)
                if process.is_alive():
                    process.kill()
        finally:
            server_cpu = cpu_seconds(server.pid)
            stopping = time.monotonic()
            serving = stopping - served_from
            if server.poll() is None:
                server.send_signal(signal.SIGTERM)
                try:
                    server.wait(60)
                except subprocess.TimeoutExpired:
                    os.kill(server.pid, signal.SIGKILL)
                    server.wait()
            stopping = time.monotonic() - stopping
        errors = stderr_path.read_text(errors="replace")
        tracebacks = errors.count("Traceback")
        written = read_study(folder / "study")
        players.sort(key=lambda p: p.number)
        missed = report(
            players,
            attack_result,
            written,
            slots,
            options.players_autumn,
            options.players_turns,
            hostile_slots,
            tracebacks,
            time.monotonic() - began,
            options.seconds,
        )
        warnings = Counter(line.split(":", 1)[1].strip() for line in errors.splitlines() if "WARNING" in line)
        print(f"server: {server_cpu:.0f} s of CPU in {serving:.0f} s ({server_cpu / serving:.0%} of one core)")
        print(
            f"server: stopped by SIGTERM in {stopping:.1f} s, exit status {server.returncode}; "
            f"{sum(warnings.values())} warnings on its stderr: {dict(warnings.most_common(6))}"
        )
        if server.returncode not in (0, -signal.SIGTERM):  # uvicorn raises the SIGTERM again once it has stopped
            missed.append(f"the server exited with status {server.returncode}")
        if tracebacks:
            print("server stderr (end):\n" + errors[-3000:])
    if missed:
        print("MISSED: " + "; ".join(missed))
        sys.exit(1)
    print("every target met")


if __name__ == "__main__":
    main()
