"""The frames of games at a frame rate go before every other request (games.FramesFirst)."""

import asyncio
import itertools
import re
from types import SimpleNamespace
from typing import Any

from discogym.interfaces.web import games
from discogym.interfaces.web.games import FramesFirst


def test_a_frame_goes_before_the_requests_that_came_with_it_and_they_start_a_few_a_turn():
    seen: list[str] = []

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        seen.append(scope["path"])

    paced = SimpleNamespace(pace=object(), key="a")
    busy_game = SimpleNamespace(pace=object(), key="b")
    server = SimpleNamespace(busy=lambda game: game is busy_game)
    found = {"a": paced, "b": busy_game}
    gate = FramesFirst(app, server, re.compile(r"/call/([^/]+)"), found.get)  # type: ignore[arg-type]

    def request(path: str, method: str = "POST") -> dict[str, Any]:
        return {"type": "http", "method": method, "path": path}

    async def main() -> list[int]:
        others = [request(f"/page/{n}", "GET") for n in range(9)] + [request("/call/b"), request("/call/zz")]
        tasks = [asyncio.create_task(gate(scope, None, None)) for scope in others]  # type: ignore[arg-type]
        tasks.append(asyncio.create_task(gate(request("/call/a"), None, None)))  # type: ignore[arg-type]
        turns = []
        while not all(task.done() for task in tasks):
            turns.append(len(seen))
            await asyncio.sleep(0)
        return turns

    turns = asyncio.run(main())
    assert seen[0] == "/call/a"  # the frame, though it came last
    # the busy game's call and the unknown game's wait their turn like the pages, in the order they came
    assert seen[1:] == [*(f"/page/{n}" for n in range(9)), "/call/b", "/call/zz"]
    started = [b - a for a, b in itertools.pairwise(turns)]
    assert max(started) <= games.STARTS_PER_TURN + 1  # a few a turn (and the frame), never all at once
