"""The web app end to end in a real browser: Debian's chromium, driven by Playwright. A person plays a petri task
through the forms to a written, scored episode; someone browses a run, filters it and steps through a replay;
bad input shows a clear message. Skipped, saying so, when chromium is not installed (make test installs it)."""

import json
from pathlib import Path

from tests.conftest import discogym_server
from tests.interfaces.conftest import Served, assert_played_alike, needs_chromium, web_episode

pytestmark = needs_chromium


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
    episode = web_episode(runs, "petri")
    assert episode.score.success and episode.key.agent_options == {"client": "p017"}
    lines = 'experiment config_b={"price_impact": 0.02} metric=volatility\nsubmit parameter=price_impact direction=up\n'
    assert_played_alike(episode, tmp_path / "cli", "petri", "market-1", lines, "--split", "pilot-v0")


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
    assert page.is_hidden("#screen")  # the toy suite's environment has no view to draw
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
    assert page.inner_text("#error") == "no run 'nosuch' in the runs folder"
    page.goto(served.root + "/play?suite=petri&split=pilot-v0")
    page.fill("#participant", "p1")
    page.click("#start")
    page.wait_for_selector("#tool-probe")
    page.fill("#tool-probe [name=guess]", "{not json")  # sent as text: the environment says what is wrong
    page.click("#tool-probe button")
    page.wait_for_selector("#log li.refused")
    assert "guess" in page.inner_text("#log li.refused")
    assert json.loads(page.evaluate("JSON.stringify(document.body.dataset)")) == {}  # the game goes on


def test_a_person_plays_a_plugin_suite_on_the_screen_it_ships(page, tmp_path):
    from examples.hidden_number import suite as hidden_number

    hidden = hidden_number.tasks("test")[0].ground_truth["number"]
    with discogym_server("serve", "--runs", str(tmp_path), DISCOGYM_SUITES="examples.hidden_number:suite") as (port, _):
        page.goto(f"http://127.0.0.1:{port}/play?suite=hidden-number")
        page.fill("#participant", "p9")
        page.select_option("#task", "number-0")
        page.click("#start")
        page.wait_for_selector("#screen[data-ready=true] #hidden-number-ask")
        page.fill("#hidden-number-n", "50")
        page.click("#hidden-number-ask")
        page.wait_for_selector(".hidden-number-answers li")
        assert page.inner_text(".hidden-number-answers li") == f"higher than 50? {'yes' if hidden > 50 else 'no'}"
        page.fill("#hidden-number-n", str(hidden))
        page.click("#hidden-number-submit")
        page.wait_for_selector("body[data-over=true]")
        assert page.is_disabled("#hidden-number-ask")
    episode = web_episode(tmp_path, "hidden-number")
    assert episode.score.success and [e.call.tool for e in episode.events] == ["higher_than", "submit"]
