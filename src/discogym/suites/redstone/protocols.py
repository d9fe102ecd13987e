"""SciCrafter's headline experiment as a protocol (``discogym protocols``): the 25 official tasks, 8 runs each, in
the independent and curriculum settings, under baseline, hint, scientist and hint + scientist (Tables 1 and 6),
with the 50-trial budget."""

from discogym.core import Protocol, ProtocolPart
from discogym.core.model.protocol import protocols_with_figures

CONDITIONS = ("baseline", "hint", "scientist", "hint+scientist")
RUNS_PER_TASK = 8  # "over 8 independent runs (i.e., k/200 x 100)"

SCICRAFTER = Protocol(
    name="scicrafter",
    suite="redstone",
    title="SciCrafter: 25 tasks x 8 runs, independent and curriculum, the four scaffolding conditions",
    paper="scicrafter",
    section="Sections 5-6 and Appendix E",
    tables=("Table 1", "Table 6", "Tables 7-10"),
    parts=(
        ProtocolPart(name="independent", split="official", conditions=CONDITIONS, repeats=RUNS_PER_TASK),
        ProtocolPart(
            name="curriculum",
            split="official",
            conditions=CONDITIONS,
            repeats=RUNS_PER_TASK,
            setting="curriculum",
        ),
    ),
    differences=(
        "the world is discogym's redstone simulator (Java Edition 1.21 rules), not a Minecraft server; the tools "
        "and the 50-trial budget are the paper's",
        "the scientist is discogym's sub-agent with the claim-proof-constraints-example book (docs/"
        "redstone-scientist.md); the paper's prompts are not public",
        "the 25 tasks are discogym's reading of the paper's task descriptions (docs/redstone-tasks.md): D's lamps "
        "may stand one block off their target distance, since exact distances make its L5 unbuildable",
        "the paper's agent harness is not public: the model plays through discogym's llm agent with native tool calls",
    ),
)


def protocols() -> list[Protocol]:
    """The protocols, each with the figures its paper published for it (``published.json``)."""
    return protocols_with_figures([SCICRAFTER], __file__)
