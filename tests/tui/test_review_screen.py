"""The review screen, headless: a real vault with a planted near-duplicate, a misspelt link and an orphan, a real
index (hashing embedder), Pilot key presses; accepting goes through the app's confirmation, audit and undo."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import Static

from companion.tui.app import CompanionApp
from companion.tui.review import NOTHING, ReviewScreen
from companion.workspace import Workspace
from tests.helpers.files import file_tree, write
from tests.helpers.pilot import confirmation, curate, settle, until
from tests.helpers.workspaces import workspace
from widgets.confirm import ConfirmDialog
from widgets.note_diff import NotePane

SENTENCES = (
    "The boiler in the cellar was serviced by the plumber from Annecy last autumn.",
    "Its pressure gauge should read between one and two bar when the water is cold.",
    "The filling loop sits behind the white panel to the left of the boiler door.",
    "A new expansion vessel was fitted in March after the old one lost its charge.",
)
KEPT = "Memory/Boiler.md"
REPEAT = "Memory/Boiler again.md"
TRIP = "Memory/Ski trip.md"
LOOSE = "Notes/Loose ends.md"


def write_review_vault(root: Path) -> None:
    """A near-duplicate pair of facts, a link to a misspelt title, an old note linked with nothing: three
    suggestions, in that order."""
    write(root, KEPT, "---\ntype: fact\n---\n" + " ".join(SENTENCES) + "\n")
    write(root, REPEAT, "---\ntype: fact\n---\nI will remember this. " + " ".join(SENTENCES[:3]) + "\n")
    write(
        root,
        "Memory/Chamonix.md",
        "---\ntype: entity\n---\nChamonix is the valley town below the glacier where the family rents a chalet.\n",
    )
    write(
        root,
        TRIP,
        "---\ntype: experience\n---\nWe drove up to [[Chamonxi]] for the ski week with the whole family and two "
        "dogs in the back.\n",
    )
    write(
        root,
        LOOSE,
        "---\ncreated: 2025-01-10\n---\nA list of half-finished thoughts about gardening that never went anywhere "
        "at all.\n",
    )


@pytest.fixture
def rws(tmp_path: Path) -> Iterator[Workspace]:
    """A workspace on the review vault (not yet indexed: the app catches up itself)."""
    write_review_vault(tmp_path / "vault")
    space = workspace(tmp_path / "vault", data_dir=tmp_path / "data")
    yield space
    space.close()


def run(app: CompanionApp, steps: Any, size: tuple[int, int] = (120, 40)) -> None:
    async def go() -> None:
        async with app.run_test(size=size) as pilot:
            await settle(pilot)
            await steps(pilot)

    asyncio.run(go())


async def open_review(pilot: Pilot[Any]) -> ReviewScreen:
    """Press `r` and wait until the queue and the first suggestion's notes show."""
    await pilot.press("r")
    await until(pilot, lambda: isinstance(pilot.app.screen, ReviewScreen), "the review screen")
    screen = pilot.app.screen
    assert isinstance(screen, ReviewScreen)
    await until(pilot, lambda: screen.reads > 0, "the queue")
    await shown(pilot, screen)
    return screen


async def shown(pilot: Pilot[Any], screen: ReviewScreen) -> None:
    """Wait until the panes show the current suggestion's notes (not `reading…`)."""
    await settle(pilot)
    await until(pilot, lambda: "reading…" not in pane(screen, "left").text.plain, "the notes")


def pane(screen: ReviewScreen, side: str) -> NotePane:
    return screen.query_one(f"#review-{side}", NotePane)


def said(screen: ReviewScreen, part: str) -> str:
    return str(screen.query_one(f"#review-{part}", Static).render())


def test_the_review_shows_one_suggestion_at_a_time_with_its_notes_side_by_side(rws: Workspace) -> None:
    app = CompanionApp(rws)

    async def steps(pilot: Pilot[Any]) -> None:
        screen = await open_review(pilot)
        assert said(screen, "heading") == "Review · 1 of 3 · near-duplicate"
        assert said(screen, "summary") == "Boiler again repeats Boiler"
        assert "· keep Boiler: it says more" in said(screen, "evidence")
        assert said(screen, "proposal") == f"→ accept (a): merge {REPEAT} into {KEPT}"
        left, right = pane(screen, "left"), pane(screen, "right")
        assert left.border_title == "merged away: Boiler again.md" and right.border_title == "kept: Boiler.md"
        # Each changed line is marked in the gutter, and in it only the words the other note lacks are coloured.
        assert left.text.plain.startswith("- I will remember this. The boiler")
        assert right.text.plain.startswith("+ The boiler")
        marked_left = {left.text.plain[s.start : s.end] for s in left.text.spans if "red" in str(s.style)}
        marked_right = {right.text.plain[s.start : s.end] for s in right.text.spans if "green" in str(s.style)}
        assert {"I", "will", "remember", "this."} <= marked_left and "boiler" not in marked_left
        assert {"March", "charge."} <= marked_right and "boiler" not in marked_right
        await pilot.press("n")
        await shown(pilot, screen)
        assert said(screen, "heading") == "Review · 2 of 3 · broken link"
        assert (
            said(screen, "proposal")
            == f"→ accept (a): in {TRIP}, point the links to [[Chamonxi]] at Memory/Chamonix.md"
        )
        assert pane(screen, "left").text.plain.startswith("We drove up to [[Chamonxi]]")
        assert [s for s in pane(screen, "left").text.spans if "reverse" in str(s.style)]  # the link, marked
        assert pane(screen, "right").border_title == "meant: Chamonix.md"
        await pilot.press("right")
        await shown(pilot, screen)
        assert said(screen, "heading") == "Review · 3 of 3 · orphan"
        assert pane(screen, "left").border_title == LOOSE and not pane(screen, "right").display
        await pilot.press("a")  # an orphan proposes no curation
        await settle(pilot)
        assert any(n.message.startswith("nothing to apply") for n in app._notifications)
        assert app.screen is screen and app.curations == 0
        await pilot.press("right")  # round the queue
        assert said(screen, "heading") == "Review · 1 of 3 · near-duplicate"
        await pilot.press("left", "p")
        assert said(screen, "heading") == "Review · 2 of 3 · broken link"
        await pilot.press("escape")
        await settle(pilot)
        assert app.screen is app.screen_stack[0]

    run(app, steps)


def test_accepting_a_merge_asks_applies_audits_and_undo_restores_every_byte(rws: Workspace) -> None:
    app = CompanionApp(rws)
    before = file_tree(rws.root)

    async def steps(pilot: Pilot[Any]) -> None:
        screen = await open_review(pilot)
        accepted = screen.current
        assert accepted is not None and accepted.kind == "duplicate"
        await pilot.press("a")
        dialog = await confirmation(pilot)
        batches = app.indexed_batches
        assert dialog.question.startswith(f"Merge {REPEAT} into {KEPT}")
        assert file_tree(rws.root) == before  # nothing before the answer
        await curate(pilot, "y")
        tree = file_tree(rws.root)
        assert REPEAT not in tree and ".trash/Boiler again.md" in tree
        assert b"## Merged from Boiler again" in tree[KEPT] and b"I will remember this." in tree[KEPT]
        entry = json.loads((rws.data_dir / "audit" / "log.jsonl").read_text(encoding="utf-8").splitlines()[-1])
        assert entry["action"] == "merge" and entry["source"] == "app"
        assert entry["details"] == {"review": "duplicate", "suggestion": accepted.id}
        # The next suggestion shows at once; the queue read after the index follows no longer holds the merge.
        assert app.screen is screen and said(screen, "heading") == "Review · 1 of 2 · broken link"
        await until(pilot, lambda: app.indexed_batches > batches, "the index to follow")
        await settle(pilot)
        kinds = ["broken_link", "orphan"]
        await until(pilot, lambda: [s.kind for s in screen.suggestions or []] == kinds, "the queue read again")
        await curate(pilot, "u")
        assert file_tree(rws.root) == before
        await until(pilot, lambda: len(screen.suggestions or []) == 3, "the merge to come back")

    run(app, steps)


def test_a_merge_answered_no_changes_nothing(rws: Workspace) -> None:
    app = CompanionApp(rws)
    before = file_tree(rws.root)

    async def steps(pilot: Pilot[Any]) -> None:
        screen = await open_review(pilot)
        await pilot.press("enter")  # Enter accepts too
        await confirmation(pilot)
        await pilot.press("n")
        await settle(pilot)
        assert app.screen is screen and said(screen, "heading") == "Review · 1 of 3 · near-duplicate"
        assert file_tree(rws.root) == before and app.curations == 0

    run(app, steps)


def test_a_skipped_suggestion_stays_hidden_after_reopening(rws: Workspace) -> None:
    app = CompanionApp(rws)
    before = file_tree(rws.root)
    ids: list[tuple[str, str]] = []

    async def steps(pilot: Pilot[Any]) -> None:
        screen = await open_review(pilot)
        skipped = screen.current
        assert skipped is not None
        ids.append((skipped.id, skipped.fingerprint))
        await pilot.press("s")
        await shown(pilot, screen)
        assert said(screen, "heading") == "Review · 1 of 2 · broken link"
        await pilot.press("escape")
        await settle(pilot)
        assert not isinstance(app.screen, ReviewScreen)
        screen = await open_review(pilot)
        assert said(screen, "heading") == "Review · 1 of 2 · broken link"
        assert skipped.id not in [s.id for s in screen.suggestions or []]

    run(app, steps)
    assert file_tree(rws.root) == before  # a skip changes no note
    assert json.loads(rws.paths.review.read_text(encoding="utf-8")) == dict(ids)


def test_o_closes_the_review_and_shows_the_note(rws: Workspace) -> None:
    app = CompanionApp(rws)

    async def steps(pilot: Pilot[Any]) -> None:
        await open_review(pilot)
        await pilot.press("n", "o")
        await settle(pilot)
        assert app.screen is app.screen_stack[0]
        assert app.query_one("#note").border_title == TRIP

    run(app, steps)


def test_read_only_refuses_accept_and_skip_and_writes_nothing(rws: Workspace) -> None:
    rws.indexer().sync()  # read-only mode never indexes: give it an index to review
    app = CompanionApp(rws, read_only=True)
    before = file_tree(rws.root)

    async def steps(pilot: Pilot[Any]) -> None:
        screen = await open_review(pilot)
        assert said(screen, "heading").endswith("read-only: accept and skip are refused")
        await pilot.press("a", "s", "u")
        await settle(pilot)
        assert app.screen is screen and len(screen.suggestions or []) == 3
        messages = [n.message for n in app._notifications]
        assert "read-only mode: nothing was changed (accept refused)" in messages
        assert "read-only mode: nothing was changed (skip refused)" in messages

    run(app, steps)
    assert file_tree(rws.root) == before
    assert not (rws.data_dir / "audit").exists() and not rws.paths.review.exists()


def test_an_empty_queue_says_there_is_nothing_to_review(tmp_path: Path) -> None:
    write(tmp_path / "vault", "Memory/Chamonix.md", "---\ntype: entity\n---\nThe valley town below the glacier.\n")
    ws = workspace(tmp_path / "vault", data_dir=tmp_path / "data")
    app = CompanionApp(ws)

    async def steps(pilot: Pilot[Any]) -> None:
        await pilot.press("r")
        await until(pilot, lambda: isinstance(app.screen, ReviewScreen) and app.screen.reads > 0, "the queue")
        screen = app.screen
        assert isinstance(screen, ReviewScreen)
        assert said(screen, "summary") == NOTHING
        assert screen.query_one("#review-notes").region.height == 0
        await pilot.press("a", "s", "o")
        await settle(pilot)
        assert app.screen is screen and app.curations == 0
        assert [n.message for n in app._notifications] == ["nothing to review"] * 3

    try:
        run(app, steps, size=(80, 24))
    finally:
        ws.close()


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
def test_the_review_fits_the_terminal(rws: Workspace, size: tuple[int, int]) -> None:
    app = CompanionApp(rws)

    async def steps(pilot: Pilot[Any]) -> None:
        screen = await open_review(pilot)
        left, right = pane(screen, "left"), pane(screen, "right")
        # Side by side, each with room for its text, under the whole suggestion, above the keys.
        assert left.region.y == right.region.y and left.region.right <= right.region.x
        assert left.region.width >= size[0] // 2 - 2 and left.region.height >= 8
        evidence, proposal = screen.query_one("#review-evidence"), screen.query_one("#review-proposal")
        assert evidence.region.height == 4 and proposal.region.height >= 1  # every line, nothing cut
        assert proposal.region.bottom <= left.region.y
        assert left.region.bottom <= size[1] - 1

    run(app, steps, size=size)


def test_review_screen_snapshot(rws: Workspace, snap_compare: Any) -> None:
    async def before(pilot: Pilot[Any]) -> None:
        await settle(pilot)
        await open_review(pilot)

    assert snap_compare(CompanionApp(rws), terminal_size=(100, 30), run_before=before)


def test_the_confirmation_over_the_review_is_the_apps(rws: Workspace) -> None:
    app = CompanionApp(rws)

    async def steps(pilot: Pilot[Any]) -> None:
        screen = await open_review(pilot)
        await pilot.press("a")
        dialog = await confirmation(pilot)
        assert isinstance(dialog, ConfirmDialog) and app.screen_stack[-2] is screen
        assert "Undo (u) restores every file exactly." in dialog.details

    run(app, steps)
