"""The app's curation dialogs in the words a person uses: a note named by its title with completion, a deletion said
in the future tense until it happens, and an undo that says what it undid."""

from __future__ import annotations

from typing import Any

from textual.pilot import Pilot
from textual.widgets import Input

from companion.tui.app import CompanionApp
from companion.workspace import Workspace
from tests.helpers.conversations import NOW
from tests.helpers.files import file_tree
from tests.helpers.pilot import CHALET, confirmation, curate, run, show, until
from widgets.ask import AskDialog


def test_merge_takes_a_title_offered_as_it_is_typed_and_undo_says_what_it_undid(ws: Workspace) -> None:
    app = CompanionApp(ws, as_of=NOW)
    before = file_tree(ws.root)

    async def steps(pilot: Pilot[Any]) -> None:
        await show(pilot, "chalet host Favre", CHALET)
        await pilot.press("m")
        await until(pilot, lambda: isinstance(app.screen, AskDialog), "the merge dialog")
        await pilot.press(*"kit")
        answer = app.screen.query_one("#answer", Input)
        await until(pilot, lambda: answer._suggestion == "Kitchen", "the title offered")
        await pilot.press("right")  # takes the completion
        assert answer.value == "Kitchen"
        await pilot.press("enter")
        dialog = await confirmation(pilot)
        assert dialog.question.startswith(f"Merge {CHALET} into Projects/Kitchen.md:")
        await curate(pilot, "y")
        assert b"## Merged from Chalet Les Praz" in file_tree(ws.root)["Projects/Kitchen.md"]
        await curate(pilot, "u")
        assert file_tree(ws.root) == before
        said = [n.message for n in app._notifications]
        assert any(m.startswith(f"Undone: Merged {CHALET} into Projects/Kitchen.md:") for m in said), said
        assert any(m.endswith("nothing older is left to undo") for m in said), said
        titles = [n.title for n in app._notifications]
        assert "done: u undoes it" in titles and "undone" in titles  # the undo's title does not offer to undo it

    run(app, steps)


def test_a_deletion_is_asked_in_the_future_tense(ws: Workspace) -> None:
    app = CompanionApp(ws, as_of=NOW)
    before = file_tree(ws.root)

    async def steps(pilot: Pilot[Any]) -> None:
        await show(pilot, "chalet host Favre", CHALET)
        await pilot.press("d")
        dialog = await confirmation(pilot)
        assert dialog.question == f"Delete {CHALET}: it will be moved to .trash/Chalet Les Praz.md (Obsidian's trash)?"
        await pilot.press("n")

    run(app, steps)
    assert file_tree(ws.root) == before
