"""Runs written before the llm agent moved onto Inspect's model API (issue 34) still load, resume and re-score.

``before_inspect/`` holds two such runs of the toy suite, one per provider, written by discogym at commit
aecf509 (its own hand-written SDK clients) against the fake endpoint on port 43111.
"""

import shutil
from pathlib import Path

import pytest

from discogym.core.running.episode_loop import score_episode
from discogym.core.running.run_file import read_run_file
from discogym.core.running.runner import Runner
from discogym.core.running.storage import RunDir
from tests.core.toy_suite import suite
from tests.llm.conftest import episodes

BEFORE = Path(__file__).parent / "before_inspect"


@pytest.mark.parametrize("provider", ["openai-compatible", "anthropic"])
def test_episodes_written_before_inspect_load_resume_and_rescore(tmp_path, fake, provider):
    run = tmp_path / "run"
    shutil.copytree(BEFORE / provider, run)
    (path,) = RunDir(run).episode_paths()
    written = path.read_bytes()
    (episode,) = episodes(run)
    assert episode.to_json() == written  # read and written again, byte for byte: no new field appears
    assert episode.usage().input_tokens > 0 and episode.usage().cache_write_tokens == 0
    rescored = score_episode(suite, episode)
    assert rescored.score == episode.score and episode.score.value == 1.0
    config = read_run_file(RunDir(run))[-1]
    summary = Runner(suite, config, run).run()  # the same command again: nothing left to play
    assert (summary.planned, summary.skipped, summary.written) == (1, 1, 0)
    assert path.read_bytes() == written and fake.requests == []
