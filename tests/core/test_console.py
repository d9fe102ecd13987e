"""What the command line prints: nothing from outside (a path, a task id, an endpoint's error body) is read as
rich markup, so none of it can raise MarkupError and stop a run."""

import io
from contextlib import redirect_stderr
from pathlib import Path

import pytest
import typer
from hypothesis import given
from hypothesis import strategies as st
from rich.console import Console

from discogym.core import EpisodeKey, Usage
from discogym.core.running.executors import EpisodeSummary
from discogym.core.running.runner import RunSummary
from discogym.core.terminal.console import fail, plural
from discogym.interfaces.cli import report_incomplete
from discogym.interfaces.progress import ProgressBar, TimeLeftColumn

# Rich turns control characters (tabs, escapes) into something else; every other character must come out as given.
TEXT = st.text(st.characters(blacklist_categories=("Cc", "Cs")), max_size=40)
MARKUP = st.sampled_from(["[/bold]", "[/v1/chat/completions]", "[bold]", "[/]", "[link=x]", "\\[", "[red"])
OUTSIDE = st.lists(st.one_of(TEXT, MARKUP), max_size=6).map("".join)


def key(task: str, agent: str) -> EpisodeKey:
    return EpisodeKey(suite="toy", task=task, condition="plain", agent=agent)


@given(description=OUTSIDE, task=OUTSIDE, agent=OUTSIDE, message=OUTSIDE, will_retry=st.booleans())
def test_the_progress_bar_shows_outside_text_as_it_is(description, task, agent, message, will_retry):
    shown = io.StringIO()
    bar = ProgressBar(description, Console(file=shown, width=10_000))  # even on a console that reads markup
    done = EpisodeSummary(key=key(task, agent), status="ok", score=1.0, usage=Usage())
    bar.started(2, [done])
    bar.finished(done)
    bar.fault(key(task, agent), message, will_retry)
    bar.close()
    action = "retrying" if will_retry else "left for the next run"
    assert f"fault {task} ({agent}, repeat 0): {message}; {action}\n" in shown.getvalue()


def test_the_progress_bar_says_the_time_left_at_this_run_s_pace():
    shown, now = io.StringIO(), [1000.0]
    bar = ProgressBar("toy", Console(file=shown, width=200), clock=lambda: now[0])
    done = EpisodeSummary(key=key("t", "a"), status="ok", score=1.0, usage=Usage())
    bar.started(10, [done, done])  # two resumed from an earlier run: no time spent on them here
    assert bar.task is not None
    column = bar.progress.columns[-1]
    assert isinstance(column, TimeLeftColumn)
    assert column.render(bar.progress.tasks[0]).plain == "-:--:-- left"  # nothing played yet: no pace
    now[0] += 60
    bar.finished(done)
    bar.finished(done)  # 2 played in 60 s: the 6 left take 3 minutes
    assert column.render(bar.progress.tasks[0]).plain == "0:03:00 left"
    bar.close()
    assert "0:03:00 left" in shown.getvalue()


@given(faults=st.dictionaries(OUTSIDE, OUTSIDE, min_size=1, max_size=3))
def test_the_run_summary_shows_fault_messages_as_they_are(faults):
    shown = io.StringIO()
    with redirect_stderr(shown), pytest.raises(typer.Exit):
        report_incomplete(RunSummary(run_dir=Path("runs/x[/b]y"), planned=len(faults), faults=faults))
    lines = shown.getvalue().splitlines()
    assert lines[:-1] == [f"not finished {stem}: {message}" for stem, message in sorted(faults.items())]
    assert lines[-1].startswith(f"error: {plural(len(faults), 'episode')} ")


@given(message=OUTSIDE)
def test_an_error_is_one_line_as_given(message):
    shown = io.StringIO()
    with redirect_stderr(shown), pytest.raises(typer.Exit) as exited:
        fail(message)
    assert exited.value.exit_code == 2 and shown.getvalue() == f"error: {message}\n"


def test_plural():
    counted = [plural(n, "episode") for n in (0, 1, 2, 1000)]
    assert counted == ["0 episodes", "1 episode", "2 episodes", "1,000 episodes"]
    assert plural(1, "match", "matches") == "1 match" and plural(3, "match", "matches") == "3 matches"
