"""The reference sweep's choice of an answer from its own isolating tests."""

from typing import Any

from discogym.core import AgentContext, ToolCall, ToolResult, Turn
from discogym.suites.petri.agents import _Sweep

CANDIDATES = ["alpha", "beta", "gamma"]


def isolating(name: str, p_holm: float, change: float) -> Turn:
    comparison = {"significant": p_holm < 0.05, "p_holm": p_holm, "relative_change": change}
    return Turn(
        call=ToolCall(tool="experiment", args={"config_b": {name: 1.0}}),
        result=ToolResult(text="...", data={"comparison": comparison}),
    )


def submitted(history: list[Turn], seed: int) -> dict[str, Any]:
    sweep = _Sweep(values="random")
    hints = {"tier": "L1", "candidates": CANDIDATES, "ranges": {name: [0.0, 2.0, "float"] for name in CANDIDATES}}
    sweep.start(AgentContext(brief="", tools=[], seed=seed, hints=hints))
    decision = sweep.act(history)
    assert decision.call is not None and decision.call.tool == "submit"
    return dict(decision.call.args)


def test_the_significant_candidate_is_the_answer_with_the_direction_it_measured():
    history = [isolating("alpha", 0.4, 0.02), isolating("beta", 0.001, -0.3), isolating("gamma", 0.2, 0.05)]
    assert {seed: submitted(history, seed)["parameter"] for seed in range(8)} == dict.fromkeys(range(8), "beta")
    assert submitted(history, 0)["direction"] == "down"


def test_without_a_significant_candidate_the_sweep_guesses_instead_of_ranking_p_values():
    # gamma has the lowest p-value, but nothing tested significant: no evidence separates the candidates
    history = [isolating("alpha", 0.6, 0.01), isolating("beta", 0.5, 0.02), isolating("gamma", 0.06, 0.09)]
    answers = [submitted(history, seed)["parameter"] for seed in range(30)]
    assert answers == [submitted(history, seed)["parameter"] for seed in range(30)]  # seeded
    assert set(answers) == set(CANDIDATES)
