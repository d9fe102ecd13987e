"""The web app end to end in a real browser: Debian's chromium, driven by Playwright. A person plays a petri task
through the forms to a written, scored episode; someone browses a run, filters it and steps through a replay;
bad input shows a clear message. Skipped, saying so, when chromium is not installed (make test installs it)."""

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from discogym.core.storage import RunDir
from tests.conftest import run_discogym
from tests.interfaces.conftest import Served

CHROMIUM = shutil.which("chromium")
pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="chromium is not installed: make test installs it (apt-get install chromium)"
)
TIMEOUT_MS = 30_000


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield launched
        launched.close()


@pytest.fixture
def page(browser):
    context = browser.new_context()
    opened = context.new_page()
    opened.set_default_timeout(TIMEOUT_MS)
    yield opened
    context.close()


def test_a_person_plays_petri_through_the_forms_to_a_written_scored_episode(page, served: Served, runs: Path, tmp_path):
    page.goto(served.root + "/play?suite=petri&split=pilot-v0")
    page.fill("#participant", "p017")
    page.select_option("#task", "market-1")
    page.click("#start")
    page.wait_for_selector("#tool-experiment")
    page.fill("#tool-experiment [name=config_b]", '{"price_impact": 0.02}')
    page.fill("#tool-experiment [name=metric]", "volatility")
    page.click("#tool-experiment button")
    page.wait_for_selector("#log li:nth-child(1)")
    assert "relative change" in page.inner_text("#log li:nth-child(1)")
    page.select_option("#tool-submit [name=direction]", '"up"')
    page.fill("#tool-submit [name=parameter]", "price_impact")
    page.click("#tool-submit button")
    page.wait_for_selector("body[data-over=true]")
    assert "Its episode was written" in page.inner_text("#status")
    assert page.is_disabled("#tool-experiment button")
    (episode,) = RunDir(runs / "web" / "petri").iter_episodes()
    assert episode.score.success and episode.key.agent_options == {"client": "p017"}
    lines = 'experiment config_b={"price_impact": 0.02} metric=volatility\nsubmit parameter=price_impact direction=up\n'
    done = run_discogym("play", "petri", "market-1", "--split", "pilot-v0", "--out", str(tmp_path / "cli"), input=lines)
    assert done.returncode == 0, done.stderr
    (terminal,) = RunDir(tmp_path / "cli").iter_episodes()
    for web, cli in zip(episode.events, terminal.events, strict=True):
        assert web.model_dump(mode="json") == cli.model_dump(mode="json"), (web.result.data, cli.result.data)


def test_someone_browses_a_run_filters_it_and_steps_through_a_replay(page, served: Served):
    page.goto(served.root + "/")
    page.click("a[href='/runs/toy']")
    page.wait_for_selector("table.episodes")
    assert page.locator("table.episodes tr").count() == 1 + 4
    page.select_option("#filter-agent", "quitter")
    page.click("#filter")
    page.wait_for_url("**agent=quitter**")
    assert page.locator("table.episodes tr").count() == 1 + 2
    page.select_option("#filter-agent", "")
    page.select_option("#filter-outcome", "success")
    page.click("#filter")
    page.wait_for_url("**outcome=success**")
    page.click("table.episodes tr:nth-child(2) a")
    page.wait_for_selector("#step h2")
    total = int(page.inner_text("#position").split("/")[1])
    assert page.inner_text("#position") == f"1 / {total}" and total > 1
    page.click("#next")
    assert page.inner_text("#step h2").startswith("Step 2")
    page.keyboard.press("ArrowLeft")
    assert page.inner_text("#step h2").startswith("Step 1")
    page.click("#last")
    assert "submitted" in page.inner_text("#step") or "over" in page.inner_text("#step")
    page.click("a:has-text('back to run')")
    page.click("#report-link")
    page.wait_for_selector("h2:has-text('All episodes')")


def test_bad_input_shows_a_clear_message(page, served: Served):
    page.goto(served.root + "/play?suite=nosuch")
    assert "unknown suite 'nosuch'" in page.inner_text("#error")
    page.goto(served.root + "/runs/nosuch")
    assert page.inner_text("#error") == f"no run 'nosuch' in {served.runs}"
    page.goto(served.root + "/play?suite=petri&split=pilot-v0")
    page.fill("#participant", "p1")
    page.click("#start")
    page.wait_for_selector("#tool-probe")
    page.fill("#tool-probe [name=guess]", "{not json")  # sent as text: the environment says what is wrong
    page.click("#tool-probe button")
    page.wait_for_selector("#log li.refused")
    assert "guess" in page.inner_text("#log li.refused")
    assert json.loads(page.evaluate("JSON.stringify(document.body.dataset)")) == {}  # the game goes on
