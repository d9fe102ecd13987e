"""crafting's play screen end to end in a real browser (Debian's chromium, driven by Playwright): a person crafts a
task by clicking slots, searches a recipe and makes mistakes that the environment answers, to a written, scored
episode whose log is the one ``discogym play`` writes for the same actions typed in Plancraft's syntax; a smelt by
clicks in a condition without search or impossible (whose controls are not shown); the impossible button; and
the screen drawn read-only, as the replay page will. Skipped, saying so, when chromium is not installed."""

from pathlib import Path

from tests.interfaces.conftest import Served, assert_played_alike, needs_chromium, web_episode

pytestmark = needs_chromium


def start(page, served: Served, split: str, task: str, condition: str) -> None:
    page.goto(served.root + f"/play?suite=crafting&split={split}")
    page.fill("#participant", "p017")
    page.select_option("#task", task)
    page.select_option("#condition", condition)
    page.click("#start")
    page.wait_for_selector("#screen[data-ready=true]")


def slot(name: str) -> str:
    return f"#screen [data-slot='{name}']"


def click_pair(page, source: str, target: str, logged: int, quantity: int | None = None) -> str:
    """Click two slots (after setting the quantity box); the text of the call's entry in the log."""
    if quantity is not None:
        page.fill("#crafting-quantity", str(quantity))
    page.click(slot(source))
    page.click(slot(target))
    entry = f"#log li:nth-child({logged})"
    page.wait_for_selector(entry)
    return str(page.inner_text(entry))


def test_a_person_crafts_by_clicking_slots_to_the_log_the_terminal_writes(page, served: Served, runs: Path, tmp_path):
    start(page, served, "val.small.easy", "VAL0187", "mst-se-i")  # a stick from the two bamboo in [I11]
    assert page.inner_text("#screen .crafting-objective") == "Craft an item of type: stick"
    assert page.get_attribute(slot("[I11]"), "title") == "[I11] 2 bamboo"
    assert page.locator("#screen .crafting-slot").count() == 46
    page.fill("#crafting-search", "stick")
    page.click("#screen .crafting-search button")
    page.wait_for_selector("#log li:nth-child(1)")
    assert "Recipes to craft stick" in page.inner_text("#log li:nth-child(1)")
    # Two moves that cannot apply: the environment says why, nothing moves, and the game goes on.
    assert "nothing moved: [I11] holds 2 bamboo, fewer than 5" in click_pair(page, "[I11]", "[A1]", 2, quantity=5)
    assert "nothing moved: [I1] is empty" in click_pair(page, "[I1]", "[A2]", 3, quantity=1)
    assert page.get_attribute("body", "data-over") is None
    click_pair(page, "[I11]", "[A1]", 4)
    assert page.get_attribute(slot("[0]"), "title") == "[0] empty"
    click_pair(page, "[I11]", "[B1]", 5)
    assert page.get_attribute(slot("[0]"), "title") == "[0] 1 stick"  # the screen shows the new table
    click_pair(page, "[0]", "[I1]", 6)
    page.wait_for_selector("body[data-over=true]")
    assert "Its episode was written" in page.inner_text("#status")
    assert page.is_disabled(slot("[I1]")) and page.is_disabled("#crafting-impossible")
    assert page.get_attribute(slot("[I1]"), "title") == "[I1] 1 stick"
    episode = web_episode(runs, "crafting")
    assert episode.score.success and episode.score.components["crafted"]
    assert episode.key.agent_options == {"client": "p017"}
    lines = (
        "search: stick\n"
        "move: from [I11] to [A1] with quantity 5\n"
        "move: from [I1] to [A2] with quantity 1\n"
        "move: from [I11] to [A1] with quantity 1\n"
        "move: from [I11] to [B1] with quantity 1\n"
        "move: from [0] to [I1] with quantity 1\n"
    )
    options = ("--split", "val.small.easy", "--condition", "mst-se-i")
    assert_played_alike(episode, tmp_path / "cli", "crafting", "VAL0187", lines, *options)

    page.goto(f"{served.root}/runs/web/crafting/episodes/{episode.key.file_stem()}")  # the replay draws each step
    page.wait_for_selector("#screen[data-ready=true]")
    assert page.get_attribute(slot("[I11]"), "title") == "[I11] 2 bamboo"  # after step 1, the search
    page.click("#last")
    assert page.get_attribute(slot("[I1]"), "title") == "[I1] 1 stick"
    page.click("#prev")
    assert page.get_attribute(slot("[0]"), "title") == "[0] 1 stick"


def test_smelt_by_clicks_where_the_condition_has_no_search_or_impossible(page, served: Served, runs: Path):
    start(page, served, "val.small.easy", "VAL0058", "ms")  # smooth quartz: smelt the quartz block in [I12]
    assert page.locator("#crafting-search").count() == 0 and page.locator("#crafting-impossible").count() == 0
    page.click("#crafting-smelt")
    assert "smelt from" in page.inner_text("#crafting-hint")
    click_pair(page, "[I12]", "[I1]", 1)
    page.wait_for_selector("body[data-over=true]")
    assert page.inner_text("#log li:nth-child(1) code").startswith("smelt ")
    episode = web_episode(runs, "crafting")
    assert [(event.call.tool, event.call.args) for event in episode.events] == [
        ("smelt", {"slot_from": "[I12]", "slot_to": "[I1]", "quantity": 1})
    ]
    assert episode.score.success


def test_the_impossible_button_a_refused_move_and_the_read_only_screen(page, served: Served, runs: Path):
    start(page, served, "val.small", "VAL0382", "mst-se-i")  # an impossible task
    first = page.evaluate("document.getElementById('view-data').textContent")
    occupied = page.locator("#screen .crafting-slot[data-item]:not([data-item=''])").first.get_attribute("data-slot")
    text = click_pair(page, occupied, "[0]", 1)  # nothing goes into [0]: the call is refused, as for an agent
    assert "move: argument 'slot_to' cannot be [0], the output slot" in text
    assert page.locator("#log li.refused").count() == 1 and page.get_attribute("body", "data-over") is None
    page.fill("#crafting-reason", "no recipe makes it from these items")
    page.click("#crafting-impossible")
    page.wait_for_selector("body[data-over=true]")
    assert 'impossible {"reason":"no recipe makes it from these items"}' in page.inner_text("#log li:nth-child(2)")
    episode = web_episode(runs, "crafting")
    assert episode.score.success and episode.score.components["declared_impossible"]
    # The replay page's use: the screen drawn from a view alone, with no controls, and redrawn on update.
    drawn = page.evaluate(
        """(first) => {
            const view = JSON.parse(first);
            const root = document.createElement("section");
            document.body.append(root);
            const screen = window.discogymScreens.crafting(root, view, null);
            screen.update({ ...view, objective: "again" });
            return { boxes: root.querySelectorAll("div.crafting-slot").length,
                     controls: root.querySelectorAll("button, input").length,
                     objective: root.querySelector(".crafting-objective").textContent };
        }""",
        first,
    )
    assert drawn == {"boxes": 46, "controls": 0, "objective": "again"}
