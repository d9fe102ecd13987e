"""The researcher's view of a study (``discogym serve --runs STUDY_DIR``, page ``/study``): progress per game and
per participant, completion, and the games that will be left out of the baselines. Read from the study folder's
files (the study file and its database, which the server never locks for readers), so it works beside a running
study server (another process) and after it."""

from collections import Counter
from pathlib import Path
from typing import Any

from discogym.core.model.termination import EndingKind, Termination
from discogym.interfaces.web.study import STUDY_FILE, Study, load_study_file

_ERROR_ENDINGS = {ending.value for ending in Termination if ending.kind is EndingKind.ERROR}


def is_study_folder(folder: Path) -> bool:
    """True when ``folder`` is a study's folder (``discogym serve --study ... --out FOLDER`` made it)."""
    return (folder / STUDY_FILE).is_file()


def study_dashboard(folder: Path) -> dict[str, Any]:
    """What the dashboard shows of the study in ``folder`` (a UserError when its files cannot be read)."""
    study = Study(load_study_file(folder / STUDY_FILE), folder)
    try:
        records = study.participants()
        given = study.given()
    finally:
        study.close()
    assigned: Counter[int] = Counter()
    endings: dict[int, Counter[str]] = {index: Counter() for index in range(len(study.slots))}
    people = []
    unwritten = []
    for record in records:
        assigned.update(record.assigned)
        for game in record.played:
            endings[game.slot][_kind(game)] += 1
            if not (folder / study.slots[game.slot].suite / "episodes" / game.episode).is_file():
                unwritten.append(f"{record.label}: {game.episode or '(no episode)'}")
        people.append(
            {
                "label": record.label,
                "platform_ids": record.platform_ids,
                "consented": record.consented,
                "played": f"{len(record.played)} of {len(record.assigned)}" + (", one running" * bool(record.running)),
                "endings": ", ".join(game.ending or "" for game in record.played) or "-",
                "finished": "time ran out" if record.expired else ("yes" if record.finished else "no"),
                "code": record.code or "-",
            }
        )
    games = [
        {
            "game": f"{slot.suite} / {slot.split} / {slot.task}",
            "condition": slot.condition + (f" ({slot.pace})" if slot.pace else ""),
            "assigned": assigned[index],
            "given": given[index],
            "counted": endings[index]["counted"],
            "abandoned": endings[index]["abandoned"],
            "other": endings[index]["other"],
            "quota": study.file.people_per_task,
        }
        for index, slot in enumerate(study.slots)
    ]
    return {
        "study": study.file,
        "games": games,
        "people": people,
        "finished": sum(record.finished for record in records),
        "unwritten": unwritten,
        "suites": sorted({slot.suite for slot in study.slots if (folder / slot.suite / "episodes").is_dir()}),
    }


def _kind(game: Any) -> str:
    """How a played game counts toward its baseline: counted, abandoned (left out), or other (an error)."""
    if game.ending == Termination.ABANDONED.value:
        return "abandoned"
    if game.ending in _ERROR_ENDINGS:
        return "other"
    return "counted"
