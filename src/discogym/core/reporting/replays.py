"""A logged episode's views, step by step (the web app's replay draws them with the suite's screen).

Views are not stored in episode files: the episode's calls are played again in a fresh environment made from the
episode's own task, condition and world seed, and its view is taken after each call. Environments are
deterministic, so the results match the log; where one does not (a sub-agent's call, which needs the agent, or an
episode from another version of the suite) the replay stops and the later steps have no view.
"""

from typing import Any

from discogym.core.model.episode import Episode
from discogym.core.model.suite import Suite


def replay_views(suite: Suite, episode: Episode) -> tuple[list[dict[str, Any] | None], str | None]:
    """The view at the start and after each logged call (``len(events) + 1`` entries, None where the replay
    stopped; an empty list when the suite's environment has no view), and why the replay stopped early, if it did.
    """
    env = suite.make_env(episode.task, episode.condition, episode.provenance.env_seed)
    views: list[dict[str, Any] | None] = []
    stopped = None
    try:
        if episode.carried is not None:
            env.continue_from(episode.carried)
        env.brief()  # as the recorder opens an episode: environments may set up while writing their brief
        views.append(env.view())
        if views[0] is None:
            return [], None
        for event in episode.events:
            result = env.call(event.call.tool, event.call.args)
            if (result.ok, result.text) != (event.result.ok, event.result.text):
                stopped = f"step {event.step} gave another result than the log's: no views from there on"
                break
            views.append(env.view())
    except Exception as err:  # a view is a courtesy: the steps after a failing one have none
        stopped = f"the replay failed after {max(len(views) - 1, 0)} steps ({err!r}): no views from there on"
    finally:
        env.close()
    return views + [None] * (len(episode.events) + 1 - len(views)), stopped
