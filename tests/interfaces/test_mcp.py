"""The MCP server: in-process with ``mcp.Client`` (both protocol eras), over stdio and over HTTP."""

import asyncio
import base64
import http.client
import signal
import socket
import threading
import time
import urllib.parse
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from discogym.core import AgentOptions, ToolImage
from discogym.core.model.mcp_content import MAX_REQUEST_BYTES
from discogym.core.running.runner import plan_episode
from discogym.core.running.storage import RunDir
from discogym.interfaces.mcp.server import build_server
from tests.conftest import REPO, cli_environment, discogym_command, mcp_toy_server
from tests.core import toy_suite
from tests.core.closing_suite import EVENTS, opened_and_closed
from tests.core.closing_suite import suite as closing
from tests.core.toy_suite import PICTURE, suite

MODES = ["auto", "legacy"]  # the 2026-07-28 protocol (no handshake) and the handshake era


def client_for(target: Any, mode: str = "auto", name: str = "tester") -> Client:
    return Client(target, mode=mode, client_info=types.Implementation(name=name, version="1"))


def text(result: types.CallToolResult) -> str:
    first = result.content[0]
    assert isinstance(first, types.TextContent)
    return first.text


async def bisect(client: Client) -> list[str]:
    """Play the digit game to the end through the suite's tools; return the texts read."""
    low, high, seen = 0, 9, []
    while True:
        guess = (low + high) // 2 if low < high else low
        tool = "probe" if low < high else "submit"
        result = await client.call_tool(tool, {"n": guess})
        assert not result.is_error, text(result)
        seen.append(text(result))
        if tool == "submit":
            return seen
        if "equal to" in seen[-1]:
            low = high = guess
        elif "higher than" in seen[-1]:
            low = guess + 1
        else:
            high = guess - 1


def episodes(out: Path):
    return list(RunDir(out).iter_episodes())


@pytest.mark.parametrize("mode", MODES)
def test_a_client_lists_tasks_starts_one_plays_it_to_the_end_and_the_episode_is_written(tmp_path, mode):
    server = build_server(suite, tmp_path, split="tiny")

    async def play() -> None:
        async with client_for(server, mode) as client:
            names = [tool.name for tool in (await client.list_tools()).tools]
            assert names == ["list_tasks", "start_task", "end_task", "probe", "roll", "submit"]
            listing = await client.call_tool("list_tasks", {})
            assert [t["id"] for t in listing.structured_content["tasks"]] == ["tiny-00", "tiny-01"]
            assert "ground_truth" not in text(listing)  # what an agent may see, no more
            assert all(set(task) == {"id", "brief"} for task in listing.structured_content["tasks"])
            started = await client.call_tool("start_task", {"task_id": "tiny-01"})
            assert not started.is_error, text(started)
            assert started.structured_content["brief"].startswith("A digit from 0 to 9 is hidden")
            assert started.structured_content["tools"] == ["probe", "roll", "submit"]
            seen = await bisect(client)
            assert seen[-1].endswith("(The episode is over and has been recorded.)")
            after = await client.call_tool("probe", {"n": 1})
            assert after.is_error and "no task is running" in text(after)

    asyncio.run(play())
    (episode,) = episodes(tmp_path)
    assert (episode.key.agent, episode.key.agent_options, episode.key.task) == ("mcp", {"client": "tester"}, "tiny-01")
    assert episode.outcome.termination == "submitted" and episode.score.value == 1.0
    task = suite.tasks("tiny")[1]
    same_world = plan_episode("toy", task, suite.condition("plain"), AgentOptions(name="llm"), 0, 0)
    assert episode.provenance.env_seed == same_world.env_seed  # the world `discogym run` plays in repeat 0


@pytest.mark.parametrize("mode", MODES)
def test_mistakes_come_back_as_tool_errors_with_a_clear_message(tmp_path, mode):
    server = build_server(suite, tmp_path, split="tiny")

    async def play() -> list[tuple[bool, str]]:
        async with client_for(server, mode) as client:
            calls: list[tuple[str, dict[str, Any]]] = [
                ("probe", {"n": 3}),
                ("start_task", {"task_id": "nope"}),
                ("start_task", {}),
                ("start_task", {"task_id": "tiny-00", "condition": "loud"}),
                ("start_task", {"task_id": "tiny-00", "colour": "red"}),
                ("start_task", {"task_id": "tiny-00"}),
                ("probe", {"n": 42}),
                ("probe", {"n": "four"}),
                ("teleport", {}),
                ("end_task", {"message": "I give up"}),
            ]
            results = [await client.call_tool(name, args) for name, args in calls]
            return [(r.is_error, text(r)) for r in results]

    results = asyncio.run(play())
    assert results[0] == (True, "no task is running: call list_tasks, then start_task")
    assert results[1][0] and results[1][1].startswith("split 'tiny' has no task 'nope'; tasks: tiny-00, tiny-01")
    assert results[2] == (True, "invalid arguments for tool 'start_task': argument 'task_id': Field required")
    assert results[3][0] and "no condition 'loud'; valid conditions: plain" in results[3][1]
    assert results[4][0] and "argument 'colour': unknown argument" in results[4][1]
    assert results[5][0] is False
    assert results[6][0] and "argument 'n': Input should be less than or equal to 9" in results[6][1]
    assert results[7][0] and "argument 'n': Input should be a valid integer" in results[7][1]
    assert results[8][0] and results[8][1].startswith("error: unknown tool 'teleport'")
    assert results[9][0] is False and "recorded as tiny-00_plain_mcp" in results[9][1]
    (episode,) = episodes(tmp_path)
    assert episode.outcome.termination == "agent_stopped" and episode.outcome.agent_message == "I give up"
    assert len(episode.events) == 3 and not any(event.result.ok for event in episode.events)


def test_replays_get_new_repeats_a_new_start_ends_the_old_episode_and_a_disconnect_writes_one_abandoned(tmp_path):
    server = build_server(suite, tmp_path, split="tiny")

    async def play() -> None:
        async with client_for(server) as client:
            await client.call_tool("start_task", {"task_id": "tiny-00"})
            await bisect(client)
            await client.call_tool("start_task", {"task_id": "tiny-00"})
            await client.call_tool("probe", {"n": 4})
            again = await client.call_tool("start_task", {"task_id": "tiny-00", "condition": "pictures"})
            assert again.structured_content["repeat"] == 0  # another condition: its own repeats
            pictured = await client.call_tool("probe", {"n": 4})
            image = pictured.content[1]
            assert isinstance(image, types.ImageContent) and image.mime_type == "image/png"
            assert base64.b64decode(image.data) == PICTURE
        async with client_for(server) as client:  # a new connection: it leaves without ending the episode
            await client.call_tool("start_task", {"task_id": "tiny-01"})
            await client.call_tool("probe", {"n": 4})

    asyncio.run(play())
    played = {(e.key.task, e.key.condition, e.key.repeat): e for e in episodes(tmp_path)}
    assert sorted(played) == [
        ("tiny-00", "pictures", 0),
        ("tiny-00", "plain", 0),
        ("tiny-00", "plain", 1),
        ("tiny-01", "plain", 0),
    ]
    left = [played[("tiny-00", "pictures", 0)], played[("tiny-01", "plain", 0)]]
    assert all(e.outcome.termination == "abandoned" and len(e.events) == 1 for e in left)
    assert left[0].outcome.agent_message == "the client went away without ending the episode"
    replays = {(c, r): e for (t, c, r), e in played.items() if (t, c) == ("tiny-00", "plain")}
    assert replays[("plain", 0)].score.value == 1.0
    assert replays[("plain", 1)].outcome.agent_message == "the client started another task"
    assert replays[("plain", 0)].provenance.env_seed != replays[("plain", 1)].provenance.env_seed


def test_over_stdio_a_client_plays_an_episode_through_the_cli(tmp_path):
    environment = cli_environment()
    command, *args = discogym_command("mcp", "toy", "--split", "tiny", "--out", str(tmp_path))
    params = StdioServerParameters(command=command, args=args, env=environment, cwd=str(REPO))

    async def play() -> None:
        async with client_for(params, name="stdio-client") as client:
            assert "submit" in [tool.name for tool in (await client.list_tools()).tools]
            await client.call_tool("start_task", {"task_id": "tiny-00"})
            await bisect(client)

    asyncio.run(play())
    (episode,) = episodes(tmp_path)
    assert episode.key.agent_options == {"client": "stdio-client"} and episode.score.value == 1.0


def post_headers_only(url: str, content_length: int) -> int:
    """The HTTP status answering a POST that announces a body of ``content_length`` bytes and sends none."""
    parts = urllib.parse.urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=30)
    try:
        connection.putrequest("POST", parts.path)
        connection.putheader("Content-Type", "application/json")
        connection.putheader("Accept", "application/json, text/event-stream")
        connection.putheader("Content-Length", str(content_length))
        connection.endheaders()
        return connection.getresponse().status
    finally:
        connection.close()


def wait_for_episodes(out: Path, count: int) -> list[Any]:
    deadline = time.monotonic() + 30
    found: list[Any] = []
    while len(found := episodes(out)) < count:
        assert time.monotonic() < deadline, f"{len(found)} episodes written, {count} expected"
        time.sleep(0.1)
    return found


@pytest.mark.parametrize("mode", MODES)
def test_over_http_each_session_of_either_protocol_era_plays_its_own_episode(tmp_path, mode):
    async def play(url: str) -> None:
        async with client_for(url, mode, "alice") as alice, client_for(url, mode, "bob") as bob:
            await alice.call_tool("start_task", {"task_id": "tiny-00"})
            await bob.call_tool("start_task", {"task_id": "tiny-01"})
            await asyncio.gather(bisect(alice), bisect(bob))

    with mcp_toy_server(tmp_path) as (url, _):
        asyncio.run(play(url))
    played = {e.key.agent_options["client"]: e for e in episodes(tmp_path)}
    assert {name: e.key.task for name, e in played.items()} == {"alice": "tiny-00", "bob": "tiny-01"}
    assert all(e.score.value == 1.0 for e in played.values())


def test_over_http_sessionless_requests_are_refused_clearly_and_bodies_over_the_bound_too(tmp_path):
    async def sessionless(url: str) -> MCPError:
        async with client_for(url, "2026-07-28") as client:  # no handshake, no session: nothing to tell apart
            with pytest.raises(MCPError) as refused:
                await client.call_tool("list_tasks", {})
        return refused.value

    with mcp_toy_server(tmp_path) as (url, server):
        refused = asyncio.run(sessionless(url))
        big = post_headers_only(url, content_length=MAX_REQUEST_BYTES + 1)  # refused before the body is read
        assert server.poll() is None
    assert refused.error.code == types.UNSUPPORTED_PROTOCOL_VERSION
    assert "gives each client its own episode through an HTTP session" in refused.error.message
    assert big == 413


def test_over_http_an_episode_is_written_as_abandoned_when_its_client_disconnects_or_goes_silent(tmp_path):
    async def leave(url: str, name: str, *, delete: bool) -> None:
        transport = streamable_http_client(url, terminate_on_close=delete)
        async with Client(transport, mode="legacy", client_info=types.Implementation(name=name, version="1")) as c:
            await c.call_tool("start_task", {"task_id": "tiny-00"})
            await c.call_tool("probe", {"n": 4})

    with mcp_toy_server(tmp_path, "--idle-timeout", "1") as (url, _):
        asyncio.run(leave(url, "deleter", delete=True))  # the session's DELETE frees it
        asyncio.run(leave(url, "vanisher", delete=False))  # freed by the idle timeout
        written = wait_for_episodes(tmp_path, 2)
    assert sorted(e.key.agent_options["client"] for e in written) == ["deleter", "vanisher"]
    assert all(e.outcome.termination == "abandoned" and len(e.events) == 1 for e in written)


def test_ctrl_c_writes_the_running_episodes_as_abandoned_and_says_so(tmp_path):
    async def start(url: str) -> None:
        transport = streamable_http_client(url, terminate_on_close=False)
        async with Client(transport, mode="legacy", client_info=types.Implementation(name="left", version="1")) as c:
            await c.call_tool("start_task", {"task_id": "tiny-00"})
            await c.call_tool("probe", {"n": 4})

    with mcp_toy_server(tmp_path) as (url, server):
        asyncio.run(start(url))
        server.send_signal(signal.SIGINT)
        _, stderr = server.communicate(timeout=30)
    assert server.returncode == 130
    assert (
        stderr.strip().splitlines()[-1]
        == f"error: interrupted; episodes still running were written to {tmp_path} as abandoned"
    )
    (written,) = episodes(tmp_path)
    assert written.outcome.termination == "abandoned" and len(written.events) == 1


def test_a_slow_call_in_one_session_does_not_hold_up_another_sessions_requests(tmp_path, monkeypatch):
    release = threading.Event()
    monkeypatch.setattr(toy_suite.DigitEnv, "_pause", lambda env: release.wait(timeout=30))
    server = build_server(suite, tmp_path, split="tiny")

    async def play() -> bool:
        async with client_for(server, "legacy", "slow") as slow, client_for(server, "legacy", "quick") as quick:
            await slow.call_tool("start_task", {"task_id": "tiny-00"})
            probing = asyncio.ensure_future(slow.call_tool("probe", {"n": 4}))  # waits for `release`
            await quick.call_tool("list_tasks", {})
            await quick.call_tool("start_task", {"task_id": "tiny-01", "condition": "plain"})
            answered_while_slow_ran = not probing.done()
            release.set()
            assert not (await probing).is_error
            return answered_while_slow_ran

    assert asyncio.run(play())


def test_results_with_structured_content_repeat_their_text_in_it_and_drop_it_when_they_carry_images(
    tmp_path, monkeypatch
):
    server = build_server(suite, tmp_path, split="tiny")

    async def play() -> tuple[types.CallToolResult, ...]:
        async with client_for(server) as client:
            listing = await client.call_tool("list_tasks", {})
            plain = await client.call_tool("start_task", {"task_id": "tiny-00"})
            huge = await client.call_tool("probe", {"n": 4, "pad": "x" * MAX_REQUEST_BYTES})
            monkeypatch.setattr(toy_suite.DigitEnv, "brief_images", lambda env: [ToolImage.from_bytes(PICTURE)])
            pictured = await client.call_tool("start_task", {"task_id": "tiny-01"})
            return listing, plain, huge, pictured

    listing, plain, huge, pictured = asyncio.run(play())
    assert listing.structured_content["text"] == text(listing)  # for a client that shows only structured content
    assert plain.structured_content["text"] == text(plain) and plain.structured_content["task"] == "tiny-00"
    assert pictured.structured_content is None and isinstance(pictured.content[1], types.ImageContent)
    assert huge.is_error and text(huge).endswith(f"more than the {MAX_REQUEST_BYTES} this server accepts: send less")


def test_mcp_command_mistakes_are_one_line(run_cli):
    unknown = run_cli("mcp", "nosuch")
    assert unknown.returncode == 2 and unknown.stderr.startswith("error: unknown suite 'nosuch'")
    split = run_cli("mcp", "toy", "--split", "huge")
    assert split.returncode == 2 and "toy has no split 'huge'" in split.stderr


def test_every_environment_a_client_used_is_closed_when_its_episode_ends_or_the_client_leaves(tmp_path):
    EVENTS.clear()
    server = build_server(closing, tmp_path, split="tiny")

    async def play() -> None:
        async with client_for(server) as client:
            await client.call_tool("start_task", {"task_id": "tiny-00"})
            await client.call_tool("probe", {"n": 4})
            await client.call_tool("start_task", {"task_id": "tiny-01"})  # ends the first episode
            await client.call_tool("probe", {"n": 4})
            opened, closed = opened_and_closed()
            assert len(opened) == 3 and len(closed) == 2  # the tool preview's, the first episode's
        # The client went away with the second episode running.

    asyncio.run(play())
    opened, closed = opened_and_closed()
    assert len(opened) == 3 and sorted(closed) == sorted(opened)
    assert sorted(e.key.task for e in episodes(tmp_path)) == ["tiny-00", "tiny-01"]  # the second: abandoned
    EVENTS.clear()


def test_http_on_a_busy_port_is_one_line_before_serving(run_cli, tmp_path):
    with socket.create_server(("127.0.0.1", 0)) as busy:
        port = busy.getsockname()[1]
        done = run_cli("mcp", "toy", "--transport", "http", "--port", str(port), "--out", str(tmp_path))
    in_use = f"error: port {port} on 127.0.0.1 is in use: stop what listens there or choose another --port\n"
    assert (done.returncode, done.stderr) == (2, in_use)  # and no "serving ..." line before it


def test_start_task_returns_the_brief_as_plain_text_with_the_fields_also_structured(tmp_path):
    server = build_server(suite, tmp_path, split="tiny")

    async def play() -> types.CallToolResult:
        async with client_for(server) as client:
            return await client.call_tool("start_task", {"task_id": "tiny-01"})

    started = asyncio.run(play())
    assert not started.is_error
    header, brief = text(started).split("\n\n")
    assert header.startswith("Episode tiny-01_plain_mcp_")
    assert header.endswith("Act with the tools probe, roll, submit.")
    assert brief == started.structured_content["brief"]  # the brief itself, not JSON with escaped newlines
    assert started.structured_content["tools"] == ["probe", "roll", "submit"]


def test_crafting_over_mcp_carries_plancrafts_rules_for_tool_calls(tmp_path):
    from discogym.core import get_suite

    server = build_server(get_suite("crafting"), tmp_path)

    async def play() -> tuple[str, str]:
        async with client_for(server) as client:
            started = await client.call_tool("start_task", {"task_id": "TEST0000"})
            refused = await client.call_tool("move", {"slot_from": "[I2]", "slot_to": "[0]", "quantity": 1})
            return text(started), text(refused)

    started, refused = asyncio.run(play())
    assert "[0] is the output slot: you cannot move or smelt items into it." in started
    assert 'move the result out of [0] to a free inventory slot, e.g.\n      move(slot_from="[0]"' in started
    assert "\n\nCraft an item of type: diorite_wall\ninventory:\n" in started  # then the brief
    assert refused == "move: argument 'slot_to' cannot be [0], the output slot"  # the argument, not the text syntax
