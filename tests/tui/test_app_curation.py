"""Curation in the app: each curation applied then undone byte for byte, confirmations, read-only mode, and a note
changed meanwhile left as it is."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from companion.tui.app import CompanionApp
from companion.workspace import Workspace
from tests.helpers.conversations import NOW
from tests.helpers.files import file_tree
from tests.helpers.pilot import CHALET, confirmation, curate, run, settle, show, until
from widgets.confirm import ConfirmDialog

# (keys after the note is shown, what the vault holds afterwards)
CURATIONS: list[tuple[tuple[str, ...], Any]] = [
    (("asterisk",), lambda tree: b"pinned: true" in tree[CHALET]),
    (("t", "ctrl+u", *"ski", "space", *"alps", "enter"), lambda tree: b"  - ski\n  - alps" in tree[CHALET]),
    (("y", "ctrl+u", *"fact", "enter"), lambda tree: b"type: fact" in tree[CHALET]),
    (("a", "y"), lambda tree: CHALET not in tree and f"archive/{CHALET}" in tree),
    (("d", "y"), lambda tree: CHALET not in tree and ".trash/Chalet Les Praz.md" in tree),
    (
        ("m", *"Projects/Kitchen.md", "enter", "y"),
        lambda tree: CHALET not in tree and b"## Merged from Chalet Les Praz" in tree["Projects/Kitchen.md"],
    ),
]


@pytest.mark.parametrize("keys, effect", CURATIONS, ids=["pin", "tags", "type", "archive", "delete", "merge"])
def test_each_curation_is_applied_then_undone_byte_for_byte(ws: Workspace, keys: tuple[str, ...], effect: Any) -> None:
    app = CompanionApp(ws, as_of=NOW)
    before = file_tree(ws.root)

    async def steps(pilot: Pilot[Any]) -> None:
        await show(pilot, "chalet host Favre", CHALET)
        await curate(pilot, *keys)
        assert effect(file_tree(ws.root))
        await curate(pilot, "u")
        assert file_tree(ws.root) == before

    run(app, steps)
    log = (ws.data_dir / "audit" / "log.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(log) == 2 and '"source":"app"' in log[0] and '"action":"undo"' in log[1]


def test_a_destructive_curation_waits_for_yes_and_no_changes_nothing(ws: Workspace) -> None:
    app = CompanionApp(ws, as_of=NOW)
    before = file_tree(ws.root)

    async def steps(pilot: Pilot[Any]) -> None:
        await show(pilot, "chalet host Favre", CHALET)
        await pilot.press("d")
        await confirmation(pilot)
        assert file_tree(ws.root) == before  # nothing before the answer
        await pilot.press("n")
        await settle(pilot)
        assert not isinstance(app.screen, ConfirmDialog)
        assert file_tree(ws.root) == before and app.curations == 0

    run(app, steps)


def test_read_only_refuses_every_curation_and_writes_nothing(ws: Workspace) -> None:
    ws.indexer().sync()  # read-only mode never indexes: give it an index to search
    app = CompanionApp(ws, as_of=NOW, read_only=True)
    vault_before, data_before = file_tree(ws.root), stored(ws.data_dir)

    async def steps(pilot: Pilot[Any]) -> None:
        await show(pilot, "chalet host Favre", CHALET)
        for key in ("asterisk", "t", "y", "m", "a", "d", "u"):
            await pilot.press(key)
            await settle(pilot)
            assert app.screen is app.screen_stack[0]  # no dialog opened
        assert app.curations == 0

    run(app, steps)
    assert file_tree(ws.root) == vault_before
    assert stored(ws.data_dir) == data_before
    assert not (ws.data_dir / "audit").exists()


def stored(data_dir: Path) -> dict[str, bytes]:
    """The data dir's files, without SQLite's shared-memory index (readers rewrite it; it holds no data)."""
    return {path: data for path, data in file_tree(data_dir).items() if not path.endswith("-shm")}


def test_a_note_changed_after_the_confirmation_opened_is_not_overwritten(ws: Workspace) -> None:
    app = CompanionApp(ws, as_of=NOW)

    async def steps(pilot: Pilot[Any]) -> None:
        await show(pilot, "chalet host Favre", CHALET)
        await pilot.press("a")
        await confirmation(pilot)
        (ws.root / CHALET).write_text("edited in Obsidian meanwhile\n", encoding="utf-8")
        await pilot.press("y")
        await settle(pilot)
        assert (ws.root / CHALET).read_text(encoding="utf-8") == "edited in Obsidian meanwhile\n"
        assert not (ws.root / "archive").exists()
        assert app.curations == 0

    run(app, steps)


def test_undoing_a_curation_from_another_session_asks_first(ws: Workspace) -> None:
    from companion.curation.curator import Curator
    from companion.vault.audit import AuditLog

    before = file_tree(ws.root)
    cli = Curator(ws.root, AuditLog(ws.data_dir), source="cli")
    cli.apply(cli.plan_pin(CHALET))
    app = CompanionApp(ws, as_of=NOW)

    async def steps(pilot: Pilot[Any]) -> None:
        await pilot.press("u")
        await until(pilot, lambda: isinstance(app.screen, ConfirmDialog), "the question")
        assert "cli" in "\n".join(app.screen.details)
        await curate(pilot, "y")
        assert file_tree(ws.root) == before

    run(app, steps)


def test_typing_in_the_tag_box_adds_a_tag_to_those_the_note_has(ws: Workspace) -> None:
    note = ws.root / CHALET
    note.write_text(
        note.read_text(encoding="utf-8").replace("---\ntype: entity\n", "---\ntype: entity\ntags:\n- ski\n", 1),
        encoding="utf-8",
    )
    app = CompanionApp(ws, as_of=NOW)

    async def steps(pilot: Pilot[Any]) -> None:
        await show(pilot, "chalet host Favre", CHALET)
        await curate(pilot, "t", *"alps", "enter")
        # The old tag stays, the new one is added, and the list keeps its column-zero style.
        assert "tags:\n- ski\n- alps\n" in note.read_text(encoding="utf-8")

    run(app, steps)
