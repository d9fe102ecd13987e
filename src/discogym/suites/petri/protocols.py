"""petri-bench's standardized frontier evaluation (sweep v1, Section 7.2) as a protocol (``discogym protocols``):
the 30 frozen tasks (five simulations x two seeds x tiers L1-L3), three episodes per task, one agent loop, with
the reference solvers' rows beside the models'."""

from discogym.core import Protocol, ProtocolPart
from discogym.core.model.protocol import protocols_with_figures

SWEEP_SET = "sweep-v1"  # core-v1, l2-v1 and l3-v1 as one set: the sweep's 30 tasks
SWEEP_SETS = ("core-v1", "l2-v1", "l3-v1")

SWEEP = Protocol(
    name="petri-sweep-v1",
    suite="petri",
    title="petri-bench's standardized sweep: 30 frozen tasks, three episodes each, one agent loop",
    paper="sozudogru2026petribench",
    section="Section 7.2, The standardized frontier evaluation (sweep v1)",
    tables=("Section 7.2 sweep table",),
    parts=(
        ProtocolPart(name="sweep", split=SWEEP_SET, conditions=("default",), repeats=3, llm_options={"mode": "text"}),
    ),
    differences=(
        "the paper's models ran through their vendors' command-line agents at their default decoding; discogym "
        "calls the model's API with the same system prompt, brief and four tools, written in its own words "
        "(docs/petri.md, Language models)",
        "mode=text is the paper's text-JSON tool protocol (one JSON call per reply, one retry); mode=native is the "
        "vendors' function calling, which the paper notes may score higher",
        "the simulations and task generator are discogym's implementation of the paper's; the frozen sets are "
        "checked byte for byte by `make verify-frozen`",
    ),
    # the paper's "random" is a seeded guess with no experiments: discogym's guess (its random acts at random)
    reference_rows={"adaptive": "adaptive", "ofat": "ofat", "ofat-rand": "ofat-rand", "guess": "random"},
)


def protocols() -> list[Protocol]:
    """The protocols, each with the figures its paper published for it (``published.json``)."""
    return protocols_with_figures([SWEEP], __file__)
