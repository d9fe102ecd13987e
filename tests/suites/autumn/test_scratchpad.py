"""The scratchpad's notes are bounded: every call's result repeats them all, and every result is logged."""

from discogym.core import get_suite
from discogym.suites.autumn.env import NOTES_LIMIT


def test_notes_over_the_scratchpads_bound_are_refused_with_a_clear_error_and_not_kept():
    suite = get_suite("autumn")
    task = suite.tasks("mfp")[0]
    env = suite.make_env(task, suite.conditions()[0], 0)
    try:
        half = "x" * (NOTES_LIMIT // 2)
        assert env.call("scratchpad", {"note": half}).ok
        assert env.call("scratchpad", {"note": half}).ok  # exactly full
        refused = env.call("scratchpad", {"note": "one more"})
        assert not refused.ok
        assert f"the scratchpad is full: it holds {NOTES_LIMIT} characters of notes" in refused.text
        huge = env.call("scratchpad", {"note": "y" * 1_000_000})
        assert not huge.ok and len(huge.text) < 1000
        assert getattr(env, "notes") == [half, half]  # noqa: B009 (an attribute of autumn's env only)
    finally:
        env.close()
