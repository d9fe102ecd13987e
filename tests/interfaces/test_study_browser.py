"""A study (``discogym serve --study``) in a real browser: Debian's chromium, driven by Playwright. Two
participants, each in a browser context of their own, arrive from their Prolific links, read the consent text and
agree, start each of their two toy games, play it through the forms (a probe, then the hidden digit), reload the
page in the middle and find the game resumed with its step in the log, wait for the "Continue" link that shows once
the game is saved, and get the completion code after both games. Their episodes are in the study folder and
``discogym report STUDY_DIR`` gives their human baselines. A participant reaches neither the researcher's pages,
nor another participant's page, nor their own page on another study's server: each is not found. Every page fails
the test if chromium refused anything under the Content-Security-Policy or a script threw."""

import contextlib
import json
import urllib.parse
from collections.abc import Iterator
from pathlib import Path

from playwright.sync_api import Browser, Page

from discogym.core.running.storage import RunDir
from discogym.interfaces.web.study import Study
from tests.conftest import run_discogym
from tests.interfaces.conftest import TIMEOUT_MS, needs_chromium
from tests.interfaces.test_study import TOY_STUDY, hidden_digit, study_server, write_study

pytestmark = needs_chromium

PEOPLE = ("5f0c1aa1d1", "5f0c1aa1d2")  # Prolific ids of the two participants
GAMES = TOY_STUDY["tasks_per_participant"]
# Chromium logs most refusals under the Content-Security-Policy, but not a refused eval() that a script catches:
# every violation event is logged too (an init script runs outside the page's policy).
REPORT_VIOLATIONS = """document.addEventListener("securitypolicyviolation", (event) =>
  console.error(`Content Security Policy violated: ${event.violatedDirective} ${event.blockedURI}`));"""


@contextlib.contextmanager
def participant_page(browser: Browser) -> Iterator[Page]:
    """A page in a browser context of its own (its own cookies); fails the test if the browser refused anything
    under the Content-Security-Policy or a page's script threw."""
    context = browser.new_context(viewport={"width": 1100, "height": 800})
    context.add_init_script(REPORT_VIOLATIONS)
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    problems: list[str] = []
    csp = "Content Security Policy"
    page.on("console", lambda message: problems.append(message.text) if csp in message.text else None)
    page.on("pageerror", lambda error: problems.append(f"script error: {error}"))
    try:
        yield page
    finally:
        context.close()
    assert not problems, f"the browser refused or failed: {problems}"


def enter(page: Page, root: str, pid: str) -> str:
    """Arrive from a Prolific entry link; the participant's secret (the address of their page)."""
    query = urllib.parse.urlencode({"PROLIFIC_PID": pid, "STUDY_ID": "s1", "SESSION_ID": "x" + pid})
    page.goto(f"{root}/enter?{query}")
    path = urllib.parse.urlsplit(page.url).path
    assert path.startswith("/p/"), page.url
    return path.removeprefix("/p/")


def agree(page: Page) -> None:
    assert page.inner_text("#consent-text") == TOY_STUDY["consent"]
    page.click("#consent")
    page.wait_for_selector("#start")


def submit_tool(page: Page, tool: str, digit: int) -> None:
    """Call the toy suite's ``tool`` (probe or submit) with ``digit`` through its form."""
    page.fill(f"#tool-{tool} [name=n]", str(digit))
    page.click(f"#tool-{tool} button")


def play_game(page: Page, study: Study, secret: str, number: int) -> None:
    """Game ``number`` from its instructions page: start it, probe, reload (the game resumes with the probe in
    its log), submit the hidden digit, then follow the Continue link once the game is saved."""
    assert page.inner_text("h1") == f"Game {number} of {GAMES}"
    page.click("#start")
    page.wait_for_selector("#tool-probe")
    submit_tool(page, "probe", 4)
    page.wait_for_selector("#log li")
    page.reload()
    page.wait_for_selector("#tool-submit")
    assert page.locator("#log li").count() == 1
    step = page.inner_text("#log li")
    assert step.startswith('probe {"n":4}') and "the hidden digit is" in step
    record = study.by_secret(secret)
    assert record is not None
    submit_tool(page, "submit", hidden_digit(study, record.number))
    page.wait_for_selector("body[data-over=true]")
    page.wait_for_selector("#continue")
    assert "saved" in page.inner_text("#status")
    page.click("#continue")
    page.wait_for_selector("#start, #completion-code")


def take_part(page: Page, root: str, study: Study, pid: str) -> str:
    """A participant's whole study, from the entry link to the completion code; their secret."""
    secret = enter(page, root, pid)
    agree(page)
    for number in range(1, GAMES + 1):
        play_game(page, study, secret, number)
    assert page.inner_text("#completion-code") == TOY_STUDY["completion"]["code"]
    return secret


def status_of(page: Page, url: str) -> int:
    response = page.goto(url)
    assert response is not None
    return response.status


def altered(secret: str) -> str:
    return secret[:-1] + ("B" if secret.endswith("A") else "A")


def assert_episodes_written(folder: Path) -> None:
    episodes = list(RunDir(folder / "toy").iter_episodes())
    assert len(episodes) == len(PEOPLE) * GAMES and all(e.score.success for e in episodes)
    assert sorted(e.key.agent_options["client"] for e in episodes) == ["p00001", "p00001", "p00002", "p00002"]
    assert all([e.call.tool for e in episode.events] == ["probe", "submit"] for episode in episodes)


def assert_report_has_human_baselines(folder: Path) -> None:
    args = ("report", str(folder), "--json", "--no-plots", "--min-people", "1")
    done = run_discogym(*args, DISCOGYM_SUITES="tests.core.toy_suite:suite")
    assert done.returncode == 0, done.stderr
    (table,) = [t for t in json.loads(done.stdout)["tables"] if t["title"] == "human baselines"]
    people = [row for row in table["rows"] if row[3] == "human"]
    assert len(people) == len(PEOPLE) * GAMES  # each task was given to one person: the fewest given first
    assert all(row[5] == 1 and row[8] == 1.0 for row in people)  # one person each, who found the digit


def test_two_participants_take_part_in_a_study_and_reach_nothing_else(browser, tmp_path):
    folder = tmp_path / "study"
    (tmp_path / "other").mkdir()
    with (
        study_server(write_study(tmp_path), folder) as (root, study),
        study_server(write_study(tmp_path / "other"), tmp_path / "other-study") as (other_root, _),
        participant_page(browser) as first,
        participant_page(browser) as second,
    ):
        secret = take_part(first, root, study, PEOPLE[0])
        other_secret = take_part(second, root, study, PEOPLE[1])
        for path in ("/runs/toy", "/report/toy", "/play", f"/p/{altered(other_secret)}"):
            assert status_of(first, root + path) == 404, path
        assert status_of(first, f"{other_root}/p/{secret}") == 404
        assert status_of(first, f"{root}/p/{secret}") == 200  # their own page is still theirs
    assert_episodes_written(folder)
    assert_report_has_human_baselines(folder)
