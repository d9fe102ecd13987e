"""A tiny release in AutumnBench's published format, written by the tests (no third-party file): one program of our
own (a red dot the arrows move, a lamp a click switches), its masked-frame-prediction, planning and
change-detection prompts and answers, in the official harness's renamed layout or in the raw (manifest) layout."""

import json
from pathlib import Path

from discogym.suites.autumn.interpreter import Interpreter, parse_action
from discogym.suites.autumn.official_data import COLOURS
from discogym.suites.autumn.tasks import OFFICIAL_WORLD

NAME = "DOTLAMP"
PROGRAM = """(program
  (= GRID_SIZE 6)
  (object Dot (Cell 0 0 "red"))
  (object Lamp (: lit Bool) (Cell 0 0 (if lit then "yellow" else "gray")))
  (: dot Dot)
  (= dot (initnext (Dot (Position 0 0)) (prev dot)))
  (: lamp Lamp)
  (= lamp (initnext (Lamp false (Position 5 5)) (prev lamp)))
  (on right (= dot (moveRight dot)))
  (on left (= dot (moveLeft dot)))
  (on up (= dot (moveUp dot)))
  (on down (= dot (moveDown dot)))
  (on (clicked lamp) (= lamp (updateObj lamp "lit" (! (.. lamp lit)))))
)
"""
# The change: once the lamp has been clicked twice, right moves the dot two cells.
WRONG = """(program
  (= GRID_SIZE 6)
  (object Dot (Cell 0 0 "red"))
  (object Lamp (: lit Bool) (Cell 0 0 (if lit then "yellow" else "gray")))
  (: dot Dot)
  (= dot (initnext (Dot (Position 0 0)) (prev dot)))
  (: lamp Lamp)
  (= lamp (initnext (Lamp false (Position 5 5)) (prev lamp)))
  (: clicks Number)
  (= clicks (initnext 0 (prev clicks)))
  (: jumped Bool)
  (= jumped (initnext false (prev jumped)))
  (on (& right (< clicks 2)) (= dot (moveRight dot)))
  (on (& right (>= clicks 2)) (let (= dot (moveRight (moveRight dot))) (= jumped true)))
  (on left (= dot (moveLeft dot)))
  (on up (= dot (moveUp dot)))
  (on down (= dot (moveDown dot)))
  (on (clicked lamp) (let (= lamp (updateObj lamp "lit" (! (.. lamp lit)))) (= clicks (+ clicks 1))))
)
"""
CONDITION = "& jumped (>= clicks 2)"  # written as the published conditions are: no outer parentheses
MFP_ACTIONS = ["right", "right", "down", "click 5 5", "down", "right", "noop", "up"]
MASKED_FROM = 6  # frames from this one on are masked
BOX = (2, 0, 3, 3)  # x, y, width, height
ANSWER = 4
GOAL_DOT = (3, 2)


def index(colour: str) -> int:
    """A colour name's index in the harness's table."""
    return COLOURS.index(colour)


def frames(source: str, actions: list[str]) -> list[list[list[str]]]:
    """The frames our interpreter shows with the official semantics."""
    world = Interpreter(source, seed=0, **OFFICIAL_WORLD)
    return [world.frame] + [world.step(parse_action(a)) for a in actions]


def _masked(frame: list[list[str]], hide: bool) -> list[list[int]]:
    x0, y0, width, height = BOX
    return [
        [0 if hide and x0 <= x < x0 + width and y0 <= y < y0 + height else index(c) for x, c in enumerate(row)]
        for y, row in enumerate(frame)
    ]


def mfp_prompt() -> dict[str, object]:
    """Frames, the last ones masked, and six choices (the answer at :data:`ANSWER`)."""
    shown = frames(PROGRAM, MFP_ACTIONS)
    observations: list[dict[str, object]] = []
    for number, frame in enumerate(shown):
        observation: dict[str, object] = {"masked_grid": _masked(frame, number >= MASKED_FROM)}
        if number:
            action = parse_action(MFP_ACTIONS[number - 1])
            kind = "noop" if action is None else action[0] if isinstance(action, tuple) else action
            observation["action"] = {"type": kind} | (
                {"x": action[1], "y": action[2]} if isinstance(action, tuple) else {}
            )
        observations.append(observation)
    x0, y0, width, height = BOX
    truth = [[index(c) for c in row[x0 : x0 + width]] for row in shown[-1][y0 : y0 + height]]
    black, red = index("black"), index("red")
    wrong = [[[red if (x, y) == spot else black for x in range(width)] for y in range(height)] for spot in
             [(0, 0), (2, 2), (0, 2), (2, 0), (1, 2)]]  # fmt: skip
    choices = [*wrong[:ANSWER], truth, *wrong[ANSWER:]]
    return {"type": "masked_frame_prediction", "program": NAME, "observations": observations, "choices": choices}


def planning_prompt() -> dict[str, object]:
    """The dot at :data:`GOAL_DOT` and the lamp lit; the whole grid checked."""
    goal = [[index("black")] * 6 for _ in range(6)]
    goal[GOAL_DOT[1]][GOAL_DOT[0]] = index("red")
    goal[5][5] = index("yellow")
    return {"type": "planning", "program": NAME, "goal": goal, "mask": [[1] * 6 for _ in range(6)]}


def write_release(folder: Path, layout: str = "renamed") -> Path:
    """Write the release into ``folder`` in the harness's renamed layout or the raw manifest layout."""
    ids = {"mfp": "t-mfp-1", "planning": "t-plan-1", "cd": "t-cd-1"}
    prompts = {
        "mfp": mfp_prompt(),
        "planning": planning_prompt(),
        "cd": {"type": "change_detection", "program": NAME, "wrong_program": f"{NAME}_wrong"},
    }
    answers = {"mfp": {"correct_idx": ANSWER}, "planning": {"optimal_actions_count": 6}, "cd": {"condition": CONDITION}}
    renamed = {"mfp": ("_mfp", "_mfp"), "planning": ("_planning", "_planning"), "cd": ("_cd", "_change_detection")}
    for part in ("prompts", "answers", "programs"):
        (folder / part).mkdir(parents=True, exist_ok=True)
    (folder / "programs" / f"{NAME}.sexp").write_text(PROGRAM, encoding="utf-8")
    for kind, prompt in prompts.items():
        stem_prompt, stem_answer = (ids[kind], ids[kind]) if layout == "raw" else (
            NAME + renamed[kind][0], NAME + renamed[kind][1])  # fmt: skip
        (folder / "prompts" / f"{stem_prompt}.json").write_text(json.dumps(prompt), encoding="utf-8")
        (folder / "answers" / f"{stem_answer}.json").write_text(json.dumps(answers[kind]), encoding="utf-8")
    wrong = f"{NAME}_wrong" if layout == "raw" else f"{NAME}_change_detection_wrong_program"
    (folder / "programs" / f"{wrong}.sexp").write_text(WRONG, encoding="utf-8")
    if layout == "raw":
        manifest = {"files": [{"id": ids[k], "program": NAME} for k in sorted(ids)]}
        (folder / "manifest_public.json").write_text(json.dumps(manifest), encoding="utf-8")
    return folder
