"""Episode names claimed in the file system: two processes on one run folder never write one episode file."""

import asyncio
import contextlib
import json
import subprocess
import sys
import urllib.parse
import urllib.request
from pathlib import Path

from mcp import types
from mcp.client import Client

from discogym.core.running.executors import play_and_write
from discogym.core.running.planning import RunConfig, plan_episodes
from discogym.core.running.runner import Runner
from discogym.core.running.session import ExternalEpisodes
from discogym.core.running.storage import RunDir, try_claim
from tests.conftest import REPO, cli_environment, discogym_server, mcp_toy_server
from tests.core.toy_suite import suite as toy

HOLD_AND_DIE = """
import os, sys
from pathlib import Path
from discogym.core.running.storage import try_claim
claim = try_claim(Path(sys.argv[1]))
print("held" if claim is not None else "refused", flush=True)
sys.stdin.readline()
os._exit(0)
"""


def repeats(run: Path) -> list[tuple[str, int]]:
    """The (client, repeat) of every episode in ``run``."""
    return sorted((e.key.agent_options["client"], e.key.repeat) for e in RunDir(run).iter_episodes())


def test_two_sessions_of_one_client_in_one_process_get_two_repeats_and_a_finished_name_is_not_reclaimed(tmp_path):
    host = ExternalEpisodes(toy, tmp_path, agent="human", split="tiny")
    first, second = host.session("p1"), host.session("p1")
    assert (first.start("tiny-00").repeat, second.start("tiny-00").repeat) == (0, 1)
    second.end(None)
    first.end(None)
    assert repeats(tmp_path) == [("p1", 0), ("p1", 1)]
    assert host.session("p1").start("tiny-00").repeat == 2
    assert len(list(RunDir(tmp_path).episodes_dir.glob(".*.claim"))) == 1  # the running game's: written ones go


def test_a_name_held_by_a_live_process_is_refused_and_free_again_once_that_process_is_killed(tmp_path):
    path = tmp_path / ".x.json.claim"
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD_AND_DIE, str(path)],
        env=cli_environment(),
        cwd=REPO,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout is not None and holder.stdin is not None
    assert holder.stdout.readline().strip() == "held"
    run = RunDir(tmp_path)
    assert try_claim(path) is None
    holder.kill()  # no clean-up: the operating system drops the lock
    holder.wait(timeout=30)
    claim = try_claim(path)
    assert claim is not None
    claim.release()
    assert not path.exists() and run.episode_paths() == []


def test_run_does_not_play_an_episode_another_process_is_playing_and_plays_it_next_time(tmp_path):
    config = RunConfig.for_suite(toy, ["bisect"], split="tiny", tasks=["tiny-00"])
    planned = plan_episodes(toy, config)[0]
    run = RunDir(tmp_path)
    claim = run.claim(planned.key)
    assert claim is not None
    summary = Runner(toy, config, tmp_path).run()
    assert summary.written == 0 and "another process is playing episode" in summary.faults[planned.key.file_stem()]
    claim.release()
    assert Runner(toy, config, tmp_path).run().written == 1


def test_run_keeps_an_episode_another_process_wrote_as_planned_after_the_runner_looked(tmp_path):
    config = RunConfig.for_suite(toy, ["bisect"], split="tiny", tasks=["tiny-00"])
    planned = plan_episodes(toy, config)[0]
    Runner(toy, config, tmp_path / "other").run()
    written = RunDir(tmp_path / "run").episode_path(planned.key)
    written.parent.mkdir(parents=True)
    written.write_bytes(RunDir(tmp_path / "other").episode_path(planned.key).read_bytes())
    before = written.stat().st_ino
    assert play_and_write(toy, planned, tmp_path / "run").key == planned.key
    assert written.stat().st_ino == before  # kept, not played again and replaced


def start_web_game(port: int) -> str:
    fields = {"suite": "toy", "split": "tiny", "task": "tiny-00", "participant": "p1"}
    request = urllib.request.Request(f"http://127.0.0.1:{port}/play", urllib.parse.urlencode(fields).encode())
    with urllib.request.urlopen(request, timeout=30) as answer:
        return str(answer.url).rsplit("/", 1)[1]


def end_web_game(port: int, token: str) -> str:
    request = urllib.request.Request(f"http://127.0.0.1:{port}/api/play/{token}/end", b"")
    with urllib.request.urlopen(request, timeout=30) as answer:
        return str(json.loads(answer.read())["written"])


def mcp_client(url: str) -> Client:
    return Client(url, mode="legacy", client_info=types.Implementation(name="same", version="1"))


async def two_mcp_games(first: str, second: str) -> None:
    """Both clients start the task before either ends it: both names are held at once."""
    async with mcp_client(first) as one, mcp_client(second) as two:
        for client in (one, two):
            assert not (await client.call_tool("start_task", {"task_id": "tiny-00"})).is_error
        for client in (one, two):
            assert not (await client.call_tool("end_task", {})).is_error


def test_two_web_servers_and_two_mcp_servers_on_one_folder_write_every_game_to_its_own_file(tmp_path):
    runs, out = tmp_path / "runs", tmp_path / "mcp"
    with contextlib.ExitStack() as servers:
        web = [servers.enter_context(discogym_server("serve", "--runs", str(runs)))[0] for _ in range(2)]
        mcp = [servers.enter_context(mcp_toy_server(out))[0] for _ in range(2)]
        tokens = [(port, start_web_game(port)) for port in web + web]  # four games held at once, two per server
        written = [end_web_game(port, token) for port, token in tokens]
        asyncio.run(two_mcp_games(*mcp))
    assert len(set(written)) == 4
    assert repeats(runs / "web" / "toy") == [("p1", n) for n in range(4)]
    assert repeats(out) == [("same", 0), ("same", 1)]
