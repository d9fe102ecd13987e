"""AutumnBench's WorldTest protocol as its paper ran its models (``discogym protocols``): each problem on its
own, an interaction phase then its test, with AutumnBench's reply format and scratchpad, on the official public
environments (``discogym autumn data --fetch``) and on discogym's own AutumnBench-style set."""

from discogym.core import Protocol, ProtocolPart
from discogym.core.model.protocol import protocols_with_figures

PAPER = "worldtest-autumnbench"
SCAFFOLD = {"scaffold": "autumnbench"}  # <think>/<action> replies, the scratchpad tags, the whole history

SHARED_DIFFERENCES = (
    "the grid reaches the model as rows of colour names with AutumnBench's reply format and scratchpad, in "
    "discogym's own words; the paper's exact prompts are not reproduced",
    "the interaction phase ends with go_to_test or after 200 actions (condition text); the paper sets no limit "
    "on people's exploration",
    "the programs run in discogym's Autumn interpreter, checked frame by frame against the official one "
    "(docs/autumn-compat.md)",
)

OFFICIAL = Protocol(
    name="autumnbench-official",
    suite="autumn",
    title="AutumnBench's WorldTest on its public environments: masked frames, planning, change detection",
    paper=PAPER,
    section="Section 3 (WorldTest) and Appendices C and E",
    tables=("Table E.1", "Table E.3"),
    parts=(ProtocolPart(name="official", split="official", conditions=("text",), llm_options=SCAFFOLD),),
    differences=(
        *SHARED_DIFFERENCES,
        "the public release holds about 22 of the paper's 43 environments; figures over all 43 are not "
        "comparable one for one",
    ),
)

STYLE = Protocol(
    name="autumnbench-style",
    suite="autumn",
    title="The same protocol on discogym's own 43 AutumnBench-style environments",
    paper=PAPER,
    section="Section 3 (WorldTest)",
    tables=("Table E.1",),
    parts=(ProtocolPart(name="style", split="all", conditions=("text",), llm_options=SCAFFOLD),),
    differences=(
        *SHARED_DIFFERENCES,
        "the 43 environments and their tests are discogym's own programs, generated as docs/autumn-worldtest.md "
        "describes, not the paper's: the paper's figures are not shown beside them",
    ),
)


def protocols() -> list[Protocol]:
    """The protocols, each with the figures its paper published for it (``published.json``)."""
    return protocols_with_figures([OFFICIAL, STYLE], __file__)
