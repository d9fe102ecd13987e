"""``discogym export-sft``: a reference solver's episodes as chat conversations for fine-tuning.

The episodes are played as a run (``discogym run``'s runner and episode driver, into a run folder that a second
export resumes), then each one the suite scores a success, from its file, becomes one conversation in the text a
model sees in ``discogym.gym`` (:func:`discogym.interfaces.text_actions.conversation`).
"""

import json
from collections.abc import Iterable
from pathlib import Path

from discogym.core import Episode, EpisodeKey, Suite, UserError
from discogym.core.running.storage import RunDir
from discogym.interfaces.text_actions import conversation


def conversations_of(
    suite: Suite, run_folder: Path, keys: Iterable[EpisodeKey] | None = None
) -> tuple[list[dict[str, object]], list[str]]:
    """The conversations of the run's successful episodes with these ``keys`` (every episode in the folder when
    None), in file-name order, and the episodes left out, each with why (``STEM: reason``). A folder may hold
    episodes of earlier exports (other splits, a longer training split): only the keys asked for are read."""
    found: list[dict[str, object]] = []
    left_out: list[str] = []
    run_dir = RunDir(run_folder)
    paths = run_dir.episode_paths() if keys is None else sorted(map(run_dir.episode_path, keys))
    for path in paths:
        if not path.is_file():
            left_out.append(f"{path.stem}: not written")
            continue
        episode = Episode.model_validate_json(path.read_bytes())
        score = suite.score(episode)  # from the file, not the score written in it
        if not score.success:
            left_out.append(f"{path.stem}: not a success ({episode.outcome.termination.value})")
            continue
        env = suite.make_env(episode.task, episode.condition, episode.provenance.env_seed)
        try:
            messages = conversation(env, episode)
        finally:
            env.close()
        if messages is None:
            left_out.append(f"{path.stem}: a call without a text that makes it, or a picture")
            continue
        found.append({"id": episode.task.id, "suite": suite.name, "split": episode.task.split, "messages": messages})
    return found, left_out


def check_writable(out: Path) -> None:
    """UserError unless ``out`` can be written as a file (checked before any episode is played)."""
    if out.is_dir():
        raise UserError(f"--out {out} is a folder; give a file to write")
    if not out.parent.is_dir():
        raise UserError(f"--out {out}: the folder {out.parent} does not exist")


def write_conversations(conversations: list[dict[str, object]], out: Path) -> None:
    """One conversation per line, as JSON."""
    try:
        with out.open("w", encoding="utf-8", newline="\n") as stream:
            for item in conversations:
                stream.write(json.dumps(item, ensure_ascii=False, sort_keys=True) + "\n")
    except OSError as err:
        raise UserError(f"cannot write {out}: {err.strerror or err}") from None


__all__ = ["check_writable", "conversations_of", "write_conversations"]
