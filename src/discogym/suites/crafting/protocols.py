"""Plancraft's headline experiments as protocols (``discogym protocols``): Table 2 (text observations, five action
sets) and Table 3 (pictures, through the perception module or given to the model directly)."""

from discogym.core import Protocol, ProtocolPart
from discogym.core.model.protocol import protocols_with_figures

PAPER = "dagan-plancraft"
SMALL_TEST = "test.small"  # the 117 examples (20 impossible) the paper evaluates on (Section 3)
SCAFFOLD = {"scaffold": "plancraft"}  # few-shot turns, a 40-message window, the first line as the action
GENERATIONS = 5  # "we use a temperature of t = 0.6 and run five generations per model to report an average" (Sec. 4)

SHARED_DIFFERENCES = (
    "five episodes per example at temperature 0.6 (scaffold=plancraft), as the paper's five generations, so two "
    "runs differ by chance: read the interval",
    "the paper counts input and output tokens alike; discogym reports them apart",
    "search is the paper's oracle retriever (every recipe for an item, one layout each)",
)

TABLE_2 = Protocol(
    name="plancraft-table2",
    suite="crafting",
    title="Plancraft, text observations: the five action sets on the small test set",
    paper=PAPER,
    section="Section 5, Results",
    tables=("Table 2",),
    parts=(
        ProtocolPart(
            name="text",
            split=SMALL_TEST,
            conditions=("ms", "mst", "mst-i", "mst-se", "mst-se-i"),
            repeats=GENERATIONS,
            llm_options=SCAFFOLD,
        ),
    ),
    differences=(
        *SHARED_DIFFERENCES,
        "the paper's Llama 8B FT row is a model fine-tuned on planner plans; "
        "`discogym export-sft crafting --split train` writes such data but no fine-tuned model ships",
    ),
)

TABLE_3 = Protocol(
    name="plancraft-table3",
    suite="crafting",
    title="Plancraft, image observations: the perception module's reading, and the picture to the model",
    paper=PAPER,
    section="Section 5, Image Observations",
    tables=("Table 3",),
    parts=(
        ProtocolPart(
            name="images",
            split=SMALL_TEST,
            conditions=("image+perception", "image-high"),
            repeats=GENERATIONS,
            llm_options=SCAFFOLD,
        ),
    ),
    differences=(
        *SHARED_DIFFERENCES,
        "the paper gives these models move and smelt only (M S); discogym's picture conditions offer all five "
        "tools, so a model may also think, search or declare a task impossible",
        "image+perception sends the picture and the perception module's reading of it; the paper's R-CNN rows "
        "send the reading alone to text-only models",
        "the perception module is discogym's own (docs/crafting.md, Perception), not the paper's Faster R-CNN",
    ),
)


def protocols() -> list[Protocol]:
    """The protocols, each with the figures its paper published for it (``published.json``)."""
    return protocols_with_figures([TABLE_2, TABLE_3], __file__)
